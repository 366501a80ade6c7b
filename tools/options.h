// SPDX-License-Identifier: GPL-2.0-only
// Command-line parsing shared by the faultline subcommands: configuration
// filters (--patch/--arch/--page/--door/--spec), flags and file arguments.
// Bad input throws UsageError; main turns it into a message and exit 2.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "check/program.h"

namespace fl::cli {

struct UsageError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

struct Options {
	ConfigFilter filter;
	std::vector<std::string> flags;  // recognised boolean flags that were given
	std::vector<std::string> files;
	bool has(const std::string &flag) const;
};

// Parses args; `known_flags` are the subcommand's boolean flags (e.g. "--quiet").
Options parse_options(const std::vector<std::string> &args, const std::vector<std::string> &known_flags);

// Reads and parses a Program file; throws UsageError with "FILE:LINE:COL: msg".
Program load_program(const std::string &path);

}  // namespace fl::cli
