// SPDX-License-Identifier: GPL-2.0-only
// A solver model as a Program, replayed in-process through the port.
#pragma once

#include <string>

#include "check/program.h"
#include "smt/kmodel.h"

namespace fl::smt {

struct Replay {
	bool reproduced = false;
	std::string what;     // "violation foreign_page at op 1", "mmap -EINVAL", ...
	std::string values;   // the model's values, one line
	Program program;
};

Replay replay(const Setup &, const z3::model &, const Vars &);

}  // namespace fl::smt
