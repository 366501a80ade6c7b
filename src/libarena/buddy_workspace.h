// SPDX-License-Identifier: GPL-2.0-only
// Not libarena: a thread's allocator arena (the machine with its arena map
// created and mmapped, libarena/common.h) built once in the thread's arena
// (base/arena.h) and frozen, then restored for every run instead of built
// and torn down again, as check/workspace.h does for array-map Programs.
// While a run uses it, every allocation on the thread goes to the arena (a
// bump, where the heap under ASan fills and faults in a new 4 KiB block for
// every arena page the allocator touches), and the next restore drops it;
// the verdict is copied to the heap before that. The linearizability check
// runs sequential candidates after a concurrent run, each of them a fresh
// arena.
//
// A runner's own start (the globals page, the reservation, buddy_init and
// its first chunk, the checks at its points) is the same for every Program
// of a level: it is frozen too, once per level and kind of run, in an arena
// of its own (with_started_buddy_arena), and a run starts from there.
//
// State that outlives a run and grows inside one allocates under
// arena::Pause (the scheduler's calls into its strategy, the checkers'
// thread-local buffers). FL_MACHINE_REUSE=0 in the environment turns reuse
// off (every run builds its own arena, as before); the verdicts are the
// same either way (BuddyWorkspace.ReusedArenaGivesTheVerdictsOfFreshOnes).
#pragma once

#include <compare>
#include <functional>
#include <optional>
#include <utility>

#include "base/arena.h"
#include "libarena/buddy_runner.h"
#include "libarena/common.h"

namespace fl::libarena {

// This thread's arena, restored to its state right after construction; null
// when reuse is off or an arena scope is already open (not nested).
Arena *restored_buddy_arena();

// run() inside the arena scope `space`, its verdict copied to the heap
// before the scope closes (the next restore drops what the run allocated).
template <class Run> BuddyVerdict in_buddy_scope(arena::Arena *space, Run &&run)
{
	std::optional<BuddyVerdict> out;
	{
		arena::Scope in(space);
		const BuddyVerdict v = run();
		arena::Pause heap;
		out.emplace(v);
	}
	return std::move(*out);
}

// run(Arena &) on the restored arena, inside the thread's arena scope; on a
// new Arena of its own when there is none.
template <class Run> BuddyVerdict with_buddy_arena(Run &&run)
{
	Arena *a = restored_buddy_arena();
	if (!a) {
		Arena own;
		return run(own);
	}
	return in_buddy_scope(&arena::thread_arena(), [&] { return run(*a); });
}

// What a runner's start depends on (the runner says which kinds differ).
struct BuddyStartKey {
	buddy_level level;
	bool open_upstream;
	int kind;
	auto operator<=>(const BuddyStartKey &) const = default;
};

// An arena of this thread's restored to its state after start(Arena &) ran
// on a fresh one and returned true (frozen the first time for `key`), and
// the arena scope its runs allocate in; {null, null} when reuse is off, a
// scope is already open, or that start failed (every run starts afresh and
// meets the same failure).
std::pair<Arena *, arena::Arena *> started_buddy_arena(const BuddyStartKey &key,
						       const std::function<bool(Arena &)> &start);

// run(Arena &, bool started) on the arena `start` left for `key` (started:
// true), or on a fresh one (started: false), as with_buddy_arena.
template <class Run>
BuddyVerdict with_started_buddy_arena(const BuddyStartKey &key, const std::function<bool(Arena &)> &start, Run &&run)
{
	const auto [a, space] = started_buddy_arena(key, start);
	if (!a)
		return with_buddy_arena([&](Arena &fresh) { return run(fresh, false); });
	return in_buddy_scope(space, [&, a = a] { return run(*a, true); });
}

}  // namespace fl::libarena
