// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_workspace.h"

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

}  // namespace fl::libarena
