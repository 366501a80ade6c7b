// SPDX-License-Identifier: GPL-2.0-only
// A counterexample as a Program, replayed in-process through the concrete port.
#pragma once

#include <string>

#include "check/program.h"
#include "smt/kmodel.h"

namespace fl::smt {

// a counterexample's values: the map, the mmap and the faulting page
struct Values {
	uint32_t value_size, max_entries;
	uint64_t vm_pgoff, len, page;
};

struct Replay {
	bool reproduced = false;
	std::string what;     // "violation foreign_page at op 1", "mmap -EINVAL", ...
	std::string values;   // the model's values, one line
	Program program;
};

Replay replay(const Setup &, const Values &);

}  // namespace fl::smt
