// SPDX-License-Identifier: GPL-2.0-only
// Not libarena: a thread's allocator arena (the machine with its arena map
// created and mmapped, libarena/common.h) built once in the thread's arena
// (base/arena.h) and frozen, then restored for every run instead of built
// and torn down again, as check/workspace.h does for array-map Programs.
// While a run uses it, every allocation on the thread goes to the arena (a
// bump, where the heap under ASan fills and faults in a new 4 KiB block for
// every arena page the allocator touches), and the next restore drops it;
// the verdict is copied to the heap before that. The linearizability check
// runs up to 300 sequential candidates per concurrent run, each of them a
// fresh arena: this is most of what a concurrent fuzz input costs.
//
// State that outlives a run and grows inside one allocates under
// arena::Pause (the scheduler's calls into its strategy, the checkers'
// thread-local buffers). FL_MACHINE_REUSE=0 in the environment turns reuse
// off (every run builds its own arena, as before); the verdicts are the
// same either way (BuddyWorkspace.ReusedArenaGivesTheVerdictsOfFreshOnes).
#pragma once

#include <optional>
#include <utility>

#include "base/arena.h"
#include "libarena/buddy_runner.h"
#include "libarena/common.h"

namespace fl::libarena {

// This thread's arena, restored to its state right after construction; null
// when reuse is off or an arena scope is already open (not nested).
Arena *restored_buddy_arena();

// run(Arena &) on the restored arena, inside the thread's arena scope; on a
// new Arena of its own when there is none.
template <class Run> BuddyVerdict with_buddy_arena(Run &&run)
{
	Arena *a = restored_buddy_arena();
	if (!a) {
		Arena own;
		return run(own);
	}
	std::optional<BuddyVerdict> out;
	{
		arena::Scope in(&arena::thread_arena());
		const BuddyVerdict v = run(*a);
		arena::Pause heap;
		out.emplace(v);
	}
	return std::move(*out);
}

}  // namespace fl::libarena
