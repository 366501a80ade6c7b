// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_workspace.h"

#include <map>

#include "check/workspace.h"

namespace fl::libarena {

Arena *restored_buddy_arena()
{
	if (!machine_reuse() || arena::active())
		return nullptr;
	struct Frozen {
		Arena *arena = nullptr;  // in the thread arena's frozen prefix, never destroyed
		arena::Arena::Frozen bytes;
	};
	arena::Arena &a = arena::thread_arena();
	thread_local Frozen frozen = [&a] {
		Frozen f;
		a.begin_freeze();
		{
			arena::Scope in(&a);
			f.arena = new Arena;
		}
		f.bytes = a.freeze();
		return f;
	}();
	a.restore(frozen.bytes);
	return frozen.arena;
}

std::pair<Arena *, arena::Arena *> started_buddy_arena(const BuddyStartKey &key,
						       const std::function<bool(Arena &)> &start)
{
	if (!machine_reuse() || arena::active())
		return {nullptr, nullptr};
	// Each start in an arena of its own: the frozen bytes are the whole of
	// it (the machine, what start allocated, the chunk's pages), and a
	// restore brings the machine back with them.
	struct Started {
		arena::Arena *space = nullptr;  // registered, never destroyed
		Arena *arena = nullptr;  // in the frozen bytes, never destroyed
		arena::Arena::Frozen bytes;
	};
	thread_local std::map<BuddyStartKey, Started> started;
	auto it = started.find(key);
	if (it == started.end()) {
		arena::Pause heap;  // the map and the spaces outlive every run
		Started s;
		s.space = &arena::registered_arena();
		s.space->begin_freeze();
		{
			arena::Scope in(s.space);
			s.arena = new Arena;
			if (!start(*s.arena))
				s.arena = nullptr;
		}
		s.bytes = s.space->freeze();
		it = started.emplace(key, std::move(s)).first;
	}
	if (!it->second.arena)
		return {nullptr, nullptr};
	it->second.space->restore(it->second.bytes);
	return {it->second.arena, it->second.space};
}

}  // namespace fl::libarena
