// SPDX-License-Identifier: GPL-2.0-only
// The command line the code generators share (repro, selftest): one
// Program file, --arch, --level, -o.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/program.h"

namespace fl::cli {

struct GeneratorArgs {
	std::string file;
	Program program;
	std::vector<Arch> arches;  // --arch 32,64 (default: both)
	Patch level = Patch::pre;  // --level (default: the Program's pinned patch, else pre)
	std::string out;           // -o FILE ("" = stdout)
};

GeneratorArgs parse_generator_args(const std::string &cmd, const std::vector<std::string> &args);

// Writes `text` to a.out, or stdout; throws UsageError when it cannot.
void write_output(const GeneratorArgs &a, const std::string &text);

// "a b\"c" -> "\"a b\\\"c\"": a C string literal; newlines become \n"\n"
// so multi-line text stays readable.
std::string c_string(const std::string &s);

// Each line of `text` as " *   LINE\n" for a C block comment ("*/" defused).
std::string comment_lines(const std::string &text);

}  // namespace fl::cli
