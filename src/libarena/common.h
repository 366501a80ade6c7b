// SPDX-License-Identifier: GPL-2.0-only
// Port of tools/testing/selftests/bpf/libarena/include/libarena/common.h and
// src/common.bpf.c: the arena a libarena program runs on, and the BPF
// program's view of it. The arena is the port's BPF_MAP_TYPE_ARENA on a
// Machine (src/kernel/kernel/bpf/arena.cpp), created and mmapped the way
// libbpf does at load time; __arena pointers are the user addresses, and
// the program's loads and stores go through kern_vm_start + (u32)addr.
// A load of an unpopulated arena page reads 0 and a store to one is dropped
// (the JIT's exception table; UNCONFIRMED).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <memory>

#include "base/coverage.h"
#ifdef FL_BUDDY_NATIVE
#include "libarena/native/native_arena.h"
#else
#include "sim/machine.h"
#endif

namespace fl::libarena {

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

// include/libarena/common.h: max_entries = 1UL << (32 - ffs(PAGE_SIZE) + 1): 4 GiB of 4 KiB pages
inline constexpr u32 ARENA_PAGES = 1u << 20;
inline constexpr u64 __PAGE_SIZE = 4096;
inline constexpr int NUMA_NO_NODE = -1;

#ifdef FL_BUDDY_NATIVE
// The native build (src/libarena/native/): the same interface on this process's memory.
using Arena = NativeArena;
#else
// The arena map and the program's access to it (struct bpf_map arena SEC(".maps")).
class Arena {
public:
	Arena();  // a 64-bit, 4 KiB-page machine; map created and mmapped (libbpf)
	bool ok() const { return base_ != 0; }
	u64 base() const { return base_; }  // user_vm_start: 4 GiB aligned
	Machine &machine() { return *m_; }

	// bpf_arena_alloc_pages / free_pages / reserve_pages with an arena pointer.
	u64 alloc_pages(u64 addr, u32 cnt);
	void free_pages(u64 addr, u32 cnt);
	int reserve_pages(u64 addr, u32 cnt) { return int(m_->arena_reserve_pages(addr, cnt)); }

	// The program's arena loads and stores (absent page: 0 / dropped).
	u8 load8(u64 a);
	u32 load32(u64 a);
	u64 load64(u64 a);
	void store8(u64 a, u8 v);
	void store32(u64 a, u32 v);
	void store64(u64 a, u64 v);
	bool present(u64 a);  // a page is mapped in the kernel view at a
	// [lo, hi) is an object handed to its user: what the allocator did
	// there before is no evidence of a race with what comes next.
	void handed_over(u64 lo, u64 hi);

	// Not libarena: who is told which bytes may have changed, [lo, hi):
	// every store above and the pages alloc_pages and free_pages change
	// (the harness's incremental checks, buddy_check_incremental.h). A
	// write made around this class (a user store through the mapping)
	// is reported by whoever makes it, through written(). A function
	// pointer, not a virtual: under UBSan a virtual call, and every use
	// of a member inside a polymorphic watcher, checks the dynamic type
	// (a tenth of written()'s time at every store, ASan+UBSan build).
	struct WriteWatch {
		void (*on_write)(WriteWatch *self, u64 lo, u64 hi);
	};
	// Up to two at once (the checks after every op and at every point).
	void watch(WriteWatch *w)
	{
		WriteWatch **slot = std::find(std::begin(watch_), std::end(watch_), nullptr);
		if (slot == std::end(watch_))
			std::abort();  /* a third: a harness bug */
		*slot = w;
	}
	void unwatch(WriteWatch *w) { std::replace(std::begin(watch_), std::end(watch_), w, (WriteWatch *)nullptr); }
	// Not libarena: told of every successful alloc_pages (the buddy runner
	// notes which CPU grew the arena by a chunk).
	void on_alloc_pages(void (*f)(void *arg, u32 cnt), void *arg)
	{
		alloc_seen_ = f;
		alloc_seen_arg_ = arg;
	}
	// (No coverage, base/coverage.h: the harness's bookkeeping at every store.)
	FL_NO_COVERAGE void written(u64 lo, u64 hi)
	{
		writes_++;
		for (WriteWatch *w : watch_)
			if (w)
				w->on_write(w, lo, hi);
	}
	// How many times written() was called: the same count twice, no byte
	// of the arena changed in between (the runner tells the harness's own
	// writes from the allocator's by it).
	u64 writes() const { return writes_; }

private:
	std::unique_ptr<Machine> m_;
	u64 base_ = 0;
	WriteWatch *watch_[2] = {};
	u64 writes_ = 0;
	void (*alloc_seen_)(void *, u32) = nullptr;
	void *alloc_seen_arg_ = nullptr;
};
#endif

// Not libarena: whether this thread's arena accesses are the allocator's
// (the lockset checker sees them) or the harness's (its shadow model and
// checks: not). Set at each API function's entry and around the harness's
// callback at a point; the previous value comes back at the scope's end.
class AllocatorAccesses {
public:
	explicit AllocatorAccesses(bool allocator) : saved_(on_) { on_ = allocator; }
	~AllocatorAccesses() { on_ = saved_; }
	AllocatorAccesses(const AllocatorAccesses &) = delete;
	AllocatorAccesses &operator=(const AllocatorAccesses &) = delete;
	static bool on() { return on_; }
	// The scheduler's tasks are fibers on one thread: the flag must travel
	// with each task (a TLS slot), or a task that switches inside an API
	// function hands its value to the next, and the value the last task
	// restores outlives the run (into the next Program's harness checks).
	static void carry_across_fibers();

private:
	bool saved_;
	static inline thread_local bool on_ = false;
};

// src/common.bpf.c: arena_fls, 1-based (64 - clzll(x); 0 for 0).
inline u64 arena_fls(u64 x) { return x ? 64 - __builtin_clzll(x) : 0; }

}  // namespace fl::libarena
