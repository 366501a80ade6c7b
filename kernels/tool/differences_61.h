// SPDX-License-Identifier: GPL-2.0-only
// The documented differences between Debian's 6.1 kernels and the upstream
// (bpf-next) code the port follows, outside the patch under test, plus one
// difference of environment (a real process's address space). When the
// first op at which a guest trace and the port's differ is one of these, the
// Program is reported as "differs by <name>" instead of as a disagreement,
// and the comparison stops there: the two kernels' states have diverged.
#pragma once

#include "check/program.h"
#include "check/trace.h"

namespace fl::kernels {

struct Difference61 {
	const char *name;
	const char *why;  // the upstream change, and what 6.1 does instead
};

// nullptr when the difference at `op` is not a documented one.
const Difference61 *classify_61(const Program &p, const Config &c, const Op &op, const Event &guest, const Event &port);

}  // namespace fl::kernels
