// SPDX-License-Identifier: GPL-2.0-only
// Small fixed-size objects from per-thread free lists (what kmem_cache is to
// the kernel): the machine allocates a struct page, a VMA or a hash node per
// page it touches and frees them all when it goes, thousands per fuzz input.
// From a free list that is a pointer pop instead of a malloc, which under
// ASan records a stack trace each time. Memory is never returned, only
// reused by the next machine on the thread. The price: ASan does not see a
// use of such an object after its free; the port's own KASAN model (freed
// VMAs and pages stay quarantined until the machine goes) still does.
// Inside an arena scope (base/arena.h) the objects come from the arena
// instead, and go back to it: the free lists live outside any arena, so no
// list may hold an arena object that a restore takes back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

#include "base/arena.h"

namespace fl::slab {

inline constexpr size_t kGranule = 16, kMaxSize = 1024;

struct FreeObject {
	FreeObject *next;
};

// The free list of objects of `size` bytes (rounded up to the granule).
inline FreeObject *&free_list(size_t size)
{
	thread_local FreeObject *lists[kMaxSize / kGranule + 1] = {};
	return lists[(size + kGranule - 1) / kGranule];
}

inline void *alloc(size_t size)
{
	if (size > kMaxSize || arena::active())
		return ::operator new(size);
	FreeObject *&head = free_list(size);
	if (!head) {  // a chunk of 64 objects at a time, reachable from the list (never freed)
		const size_t each = (size + kGranule - 1) / kGranule * kGranule;
		auto *chunk = static_cast<uint8_t *>(::operator new(each * 64));
		for (size_t i = 0; i < 64; i++) {
			auto *o = reinterpret_cast<FreeObject *>(chunk + i * each);
			o->next = head;
			head = o;
		}
	}
	FreeObject *o = head;
	head = o->next;
	return o;
}

inline void free(void *p, size_t size)
{
	if (!p)
		return;
	if (size > kMaxSize || arena::owned(p)) {
		::operator delete(p);
		return;
	}
	auto *o = static_cast<FreeObject *>(p);
	FreeObject *&head = free_list(size);
	o->next = head;
	head = o;
}

// For a class: `FL_SLAB_OBJECT` in its body allocates it from the lists.
#define FL_SLAB_OBJECT                                                                 \
	static void *operator new(std::size_t n) { return ::fl::slab::alloc(n); }      \
	static void operator delete(void *p, std::size_t n) { ::fl::slab::free(p, n); }

// For a node-based container: single objects from the lists, arrays (hash
// buckets) from the heap.
template <class T> struct Allocator {
	using value_type = T;
	Allocator() = default;
	template <class U> Allocator(const Allocator<U> &) {}
	T *allocate(size_t n)
	{
		return n == 1 ? static_cast<T *>(alloc(sizeof(T))) : static_cast<T *>(::operator new(n * sizeof(T)));
	}
	void deallocate(T *p, size_t n)
	{
		if (n == 1)
			free(p, sizeof(T));
		else
			::operator delete(p);
	}
	template <class U> bool operator==(const Allocator<U> &) const { return true; }
};

}  // namespace fl::slab
