// SPDX-License-Identifier: GPL-2.0-only
// The readable, line-based text form of a Program: corpus files, replay
// input, and what the fuzzers print when they find something.
//
//	# comment                      (anywhere; blank lines are ignored)
//	arch 64                        header: arch, patch, page, door, spec_v1;
//	page 4k                        each at most once, before ops and expects
//	map value_size=8 max_entries=1024 key_size=4 flags=mmapable
//	mmap A len=2p pgoff=1 prot=r flags=shared,populate
//	load A+1p size=4
//	expect violation foreign_page if patch=v1 arch=32
//
// Errors carry the 1-based line and column of the offending token; for a
// bad value in key=value, the column of the value (of the bad item in a
// comma list, of the address' offset); for a missing argument, the column
// of the statement's keyword.
#pragma once

#include <optional>
#include <string>

#include "check/program.h"

namespace fl {

struct ParseError {
	int line = 0;
	int column = 0;
	std::string message;
	std::string str() const;  // "LINE:COL: message"
};

struct ParseResult {
	std::optional<Program> program;  // set iff parsing succeeded
	ParseError error;
};

ParseResult parse_program(const std::string &text);

// Canonical text: parse_program(format_program(p)) gives back p field by
// field, and formatting that again gives the same text.
std::string format_program(const Program &);
std::string format_op(const Program &, const Op &);  // one line, no newline
// What an op is when its optional keys are left out (mmap: prot=rw flags=shared).
Op default_op(OpKind kind);
std::string format_addr(const Program &, const Addr &);

}  // namespace fl
