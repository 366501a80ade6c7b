// SPDX-License-Identifier: GPL-2.0-only
// A line-based, round-trippable text form of a Trace, so that a QEMU guest
// can print traces on its serial console and the host can parse them:
//
//	trace map_ret=0 events=3
//	ev 1 ret=0 sig=0 data=- info=
//	ev 2 ret=0 sig=0 data=0807060504030201 info=
//	ev 3 ret=-22 sig=0 data=- info=VmFlags: rd sh | Rss: 1p
//	end
//
// `info=` runs to the end of the line; '%', control bytes and bytes >= 0x7f
// in it are written as %XX. Lines before "trace" are ignored (console
// noise), a trailing '\r' on any line is dropped, and parsing stops at "end".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "check/trace.h"

namespace fl {

std::string write_trace(const Trace &);
// read_trace(write_trace(t)) == t. On malformed text: nullopt and, when err
// is given, "line N: what is wrong".
std::optional<Trace> read_trace(std::string_view text, std::string *err);

}  // namespace fl
