// SPDX-License-Identifier: GPL-2.0-only
// The documented differences between Debian's guest kernels (6.12, 6.1) and
// the upstream (bpf-next) code the port follows, outside the patch under
// test, plus one difference of environment (a real process's address space).
// Each names the upstream release that removed it, and applies only to older
// guests. When the first op at which a guest trace and the port's differ is
// one of these, the Program is reported as "differs by <name>" instead of as
// a disagreement, and the comparison stops there: the kernels have diverged.
#pragma once

#include <vector>

#include "check/program.h"
#include "check/trace.h"
#include "guest_config.h"

namespace fl::kernels {

struct GuestDifference {
	const char *name;
	GuestKernel gone_in;  // the first release without it ({0, 0}: never, an environment difference)
	const char *why;      // the upstream change, and what the older kernel does instead
};

// Every documented difference, for the README and the tests.
const std::vector<const GuestDifference *> &guest_differences();

// nullptr when the difference at `op` is not a documented one.
const GuestDifference *classify_guest(GuestKernel k, const Program &p, const Config &c, const Op &op, const Event &guest,
				      const Event &port);

// An earlier op, before `upto`, whose traces agree but whose kernels did not
// do the same thing: an mmap(PROT_EXEC) the port refused in do_mmap()
// (anon_noexec) that the guest refused later, inside mmap_region() after a
// MAP_FIXED had already unmapped the old range (e.g. EPERM for a writable
// mapping of a frozen map). nullptr if none; else *at is its 0-based index.
const GuestDifference *earlier_guest(GuestKernel k, const Program &p, const Trace &port, size_t upto, size_t *at);

}  // namespace fl::kernels
