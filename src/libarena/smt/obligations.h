// SPDX-License-Identifier: GPL-2.0-only
// The proof obligations on libarena's index arithmetic (buddy_index.h).
// Each is one property, written once over the word family: instantiated
// with the symbolic words it becomes the query (every path of the port's
// code; unsat = proved), instantiated with the C types it is the replay of a
// counterexample on the concrete port.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fl::libarena::smt {

struct Verdict {
	std::string name, what;
	bool proved = false, counterexample = false, replays = false;
	size_t paths = 0;
	double ms = 0;
	std::string model;   // "size=16" (a counterexample's values)
	std::string detail;  // what the concrete port computed there
};

struct ObligationInfo {
	const char *name;
	const char *what;
};
const std::vector<ObligationInfo> &obligations();

// Decide one obligation (by name) and replay its counterexample, if any.
Verdict decide(const std::string &name, unsigned rlimit);

}  // namespace fl::libarena::smt
