// SPDX-License-Identifier: GPL-2.0-only
// A per-thread bump arena that the global operator new allocates from while
// an arena::Scope is open on the thread, so that a whole machine (kernel
// globals, processes, pages, VMAs, page tables, the containers inside them)
// lives in one contiguous range of memory. Then a machine built once can be
// saved as bytes (Arena::freeze: a copy of the range it occupies) and
// brought back to that state in O(its size) (Arena::restore: copy the bytes
// back, drop everything allocated since), instead of tearing down the old
// machine and building a new one per input. Every restore puts the same
// bytes at the same addresses and hands out the same addresses after it, so
// the same input takes the same path every time (fuzzer stability).
//
// Outside a Scope, operator new is malloc as usual; operator delete of an
// arena pointer (anywhere) is a no-op that poisons the block under ASan, as
// is every block the next restore drops. Under ASan each block has a 16-byte
// poisoned header in front (a redzone against the previous block's
// overflow), and freed or dropped blocks stay poisoned until the arena hands
// the memory out again, so ASan still reports overflows and uses after free
// of arena objects within one run.
//
// What must outlive a restore may not be allocated in a Scope: state kept
// across runs outside the arena (caches, registries) allocates under
// arena::Pause. src/check/workspace.h is the user.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fl::arena {

class Arena {
public:
	Arena();
	~Arena();
	Arena(const Arena &) = delete;
	Arena &operator=(const Arena &) = delete;

	void *alloc(size_t size, size_t align);
	void free(const void *p);
	bool owns(const void *p) const
	{
		return (const char *)p >= base_ && (const char *)p < base_ + reserved_;
	}

	// The frozen prefix: [base, frozen) holds the saved states; everything
	// after it is scratch that the next restore drops. A Frozen is one
	// saved range; freeze() appends the bytes allocated since the last
	// freeze (or restore) to the prefix and returns them as a new Frozen.
	struct Frozen {
		size_t from = 0, to = 0;
		std::vector<unsigned char> bytes;   // [from, to) at freeze time
		std::vector<unsigned char> shadow;  // its ASan shadow (empty without ASan)
	};
	// Drops the scratch (allocations since the last freeze/restore), then
	// the next allocations go to the end of the frozen prefix: call before
	// building what freeze() will save.
	void begin_freeze();
	Frozen freeze();
	// Puts f's bytes back and drops the scratch.
	void restore(const Frozen &f);
	// A state inside a run to come back to (the buddy linearizability
	// candidates resume a prefix they share with the one before): the bytes
	// from `from` (the start of the frozen state the run began from) to the
	// bump pointer, into *into (whose buffers keep their capacity).
	void save(size_t from, Frozen *into);
	// Puts a saved state back: its bytes, and the bump pointer where it
	// was; what was allocated after it is dropped (poisoned under ASan).
	void roll_back(const Frozen &f);

	size_t used() const { return used_; }
	size_t high_water() const { return high_; }

private:
	void drop_scratch();
	void copy_out(size_t from, Frozen *f);
	void copy_in(const Frozen &f);

	char *base_ = nullptr;
	size_t reserved_ = 0;
	size_t frozen_ = 0;  // end of the frozen prefix
	size_t used_ = 0;    // bump pointer
	size_t high_ = 0;    // highest used_ since the last drop
};

// The calling thread's arena (created on first use).
Arena &thread_arena();
// Another arena (a second frozen state a thread restores by turns), known
// to operator delete on every thread, never destroyed.
Arena &registered_arena();

// While a Scope lives, operator new on this thread allocates from `a`, or
// from the heap when a is null (even inside another Scope).
class Scope {
public:
	explicit Scope(Arena *a);
	~Scope();
	Scope(const Scope &) = delete;
	Scope &operator=(const Scope &) = delete;

private:
	Arena *prev_;
};

// The heap even inside a Scope: for state that outlives the runs
// (registries, caches).
class Pause : public Scope {
public:
	Pause() : Scope(nullptr) {}
};

// Whether operator new on this thread goes to an arena now.
namespace detail {
inline thread_local Arena *tl_active = nullptr;
}  // namespace detail
inline bool active() { return detail::tl_active != nullptr; }
// Whether p is in any thread's arena.
bool owned(const void *p);

}  // namespace fl::arena
