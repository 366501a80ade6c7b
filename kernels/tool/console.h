// SPDX-License-Identifier: GPL-2.0-only
// The guest runner's console output (kernels/guest/runner.cpp), split into
// one result per staged Program. Kernel messages and terminal escapes around
// the frames are ignored.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "check/trace.h"

namespace fl::kernels {

struct GuestResult {
	std::optional<Trace> trace;  // set when the guest ran the Program
	std::string note;            // otherwise: "skipped: ...", "unsupported: ...", "error: ..."
	std::optional<int> exit;     // a reproducer's exit status ("@@ exit N")
};

struct Console {
	std::map<std::string, GuestResult> results;  // by staged name
	bool done = false;                            // "@@ done" seen: the runner finished
};

Console parse_console(const std::string &text);

}  // namespace fl::kernels
