// SPDX-License-Identifier: GPL-2.0-only
// gtest printers for Program pieces (found by argument-dependent lookup).
#pragma once

#include <ostream>

#include "check/program.h"

namespace fl {

inline void PrintTo(const Num &n, std::ostream *os)
{
	*os << n.value << (n.pages ? "p" : "");
}

inline void PrintTo(const Addr &a, std::ostream *os)
{
	*os << "label" << a.label << (a.negative ? "-" : "+");
	PrintTo(a.offset, os);
}

inline void PrintTo(const Op &op, std::ostream *os)
{
	*os << to_string(op.kind) << " proc=" << op.proc << " label=" << op.label << " addr=";
	PrintTo(op.addr, os);
	*os << " len=";
	PrintTo(op.len, os);
	*os << " new_len=";
	PrintTo(op.new_len, os);
	*os << " pgoff=" << op.pgoff << " prot=" << op.prot << " flags=" << op.flags
	    << " advice=" << op.advice << " has_at=" << op.has_at << " at=";
	PrintTo(op.at, os);
	*os << " size=" << op.size << " value=" << op.value << " index=" << op.index;
}

}  // namespace fl
