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

// An earlier op, before `upto`, whose traces agree but whose kernels did not
// do the same thing: an mmap(PROT_EXEC) the port refused in do_mmap()
// (anon_noexec) that 6.1 refused later, inside mmap_region() after a
// MAP_FIXED had already unmapped the old range (e.g. EPERM for a writable
// mapping of a frozen map). nullptr if none; else *at is its 0-based index.
const Difference61 *earlier_61(const Program &p, const Trace &port, size_t upto, size_t *at);

}  // namespace fl::kernels
