// SPDX-License-Identifier: GPL-2.0-only
// `series` and `before` in lockstep: one sequential allocator Program, op by
// op on both levels (each with its own shadow and invariants), every result
// user space sees compared. A difference must be one of the named ones the
// caches cause (src/libarena/README.md):
//   D1 memory held in caches: addresses and chunk use differ (never compared:
//      Programs name objects by role, and the arena's pages are not results);
//   D2 a second free of an object a cache holds is not caught (0, and the
//      object would be handed out twice): the op is left out on both levels;
//   D3 NMIs: before has no NMI handling (a free in NMI over the lock holder
//      times out), series defers or caches it: NMI ops are left out;
//   D4 buddy_free_bulk() fails only when nothing was freed (v2): series 0
//      where before reports the first error.
#pragma once

#include <string>

#include "libarena/buddy_program.h"

namespace fl::libarena {

struct LockstepReport {
	bool ok = true;
	std::string what;  // the first unexplained difference or violation
	size_t compared = 0, skipped_d2 = 0, skipped_d3 = 0, differed_d4 = 0;
};

LockstepReport run_buddy_lockstep(const BuddyProgram &p);

}  // namespace fl::libarena
