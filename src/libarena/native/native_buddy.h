// SPDX-License-Identifier: GPL-2.0-only
// One allocator of the native build (buddy.cpp on NativeArena and the real
// atomics of buddy_sync.h): struct buddy among the arena's globals, a
// buddy_ctx per CPU (a thread's CPU id is the index of its ctx), and the
// end-of-run check: caches drained, then the invariant checker
// (buddy_invariants.cpp, the same one the simulated build runs) with the
// callers' objects as the shadow. Not libarena code.
#pragma once

#include <map>
#include <string>

#include "libarena/buddy.h"

namespace fl::libarena {

class NativeBuddy {
public:
	explicit NativeBuddy(buddy_level level);
	~NativeBuddy();
	NativeBuddy(const NativeBuddy &) = delete;
	NativeBuddy &operator=(const NativeBuddy &) = delete;

	// The globals pages, then buddy_init: 0 or the error (-ENOMEM: no arena).
	int init();
	buddy_ctx *cpu(int c) { return &cpu_[c]; }
	Arena &arena() { return arena_; }

	// Once every thread has stopped: every cache back to the buddy
	// (buddy_cache_drain_all), then I1-I12 with `live` (address -> order)
	// as what callers still hold. With nothing live the chunks must be
	// pristine again (I7) and every allocated bit accounted for (I9).
	// "" when all hold, else the first that does not.
	std::string drain_and_check(const std::map<u64, u64> &live = {});

private:
	Arena arena_;
	buddy_ctx cpu_[BUDDY_NR_CPUS];
	bool inited_ = false;
};

}  // namespace fl::libarena
