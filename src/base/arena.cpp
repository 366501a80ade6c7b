// SPDX-License-Identifier: GPL-2.0-only
#include "base/arena.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define FL_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FL_ARENA_ASAN 1
#endif
#endif
#ifdef FL_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define FL_NO_ASAN __attribute__((no_sanitize("address")))
#else
#define FL_NO_ASAN
#endif

namespace fl::arena {

namespace {

constexpr size_t kAlign = 16;
// Virtual address space per thread arena (MAP_NORESERVE: only what a run
// touches becomes memory). A machine is sparse (pages hold bytes only once
// written), so even the eager reference of a 2^20-page mapping fits.
constexpr size_t kReserve = sizeof(void *) == 8 ? size_t(uint64_t(16) << 30) : size_t(512) << 20;
// A run that used more scratch than this gives the rest back to the kernel
// when it is dropped.
constexpr size_t kKeep = size_t(64) << 20;

size_t round_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }

#ifdef FL_ARENA_ASAN
// Under ASan every block has a 16-byte header (poisoned: the redzone after
// the block before it) holding its size and whether it is live.
constexpr size_t kHeader = 16;
constexpr uint64_t kLive = 0x6c69766561726e61ull, kFreed = 0x6465657266616e61ull;
struct Header {
	uint64_t size, state;
};
FL_NO_ASAN Header read_header(const void *p) { return *(reinterpret_cast<const Header *>(p) - 1); }
FL_NO_ASAN void write_header(void *p, Header h) { *(reinterpret_cast<Header *>(p) - 1) = h; }
unsigned char *shadow_of(const void *p)
{
	size_t scale, offset;
	__asan_get_shadow_mapping(&scale, &offset);
	return reinterpret_cast<unsigned char *>(((uintptr_t)p >> scale) + offset);
}
// Shadow bytes are copied uninstrumented, through volatile accesses (the
// shadow has no shadow of its own, and memcpy is checked): a word at a time
// where both sides are aligned alike (a frozen state restored for every
// run may be hundreds of KiB), else byte by byte.
FL_NO_ASAN void copy_shadow(unsigned char *to, const unsigned char *from, size_t n)
{
	size_t i = 0;
	if ((uintptr_t(to) ^ uintptr_t(from)) % 8 == 0) {
		for (; i < n && uintptr_t(to + i) % 8; i++)
			static_cast<volatile unsigned char *>(to)[i] = static_cast<const volatile unsigned char *>(from)[i];
		for (; i + 8 <= n; i += 8)
			*reinterpret_cast<volatile uint64_t *>(to + i) = *reinterpret_cast<const volatile uint64_t *>(from + i);
	}
	for (; i < n; i++)
		static_cast<volatile unsigned char *>(to)[i] = static_cast<const volatile unsigned char *>(from)[i];
}
#else
constexpr size_t kHeader = 0;
#endif

// Every arena ever made (they are never unmapped), so that operator delete
// recognises an arena pointer on any thread.
constexpr size_t kMaxArenas = 256;
std::atomic<Arena *> g_arenas[kMaxArenas];
std::atomic<size_t> g_count{0};
using detail::tl_active;                   // the arena operator new uses now
thread_local Arena *tl_own = nullptr;     // this thread's arena, if any

Arena *owner_of(const void *p)
{
	if (tl_own && tl_own->owns(p))
		return tl_own;
	size_t n = g_count.load(std::memory_order_acquire);
	for (size_t i = 0; i < n; i++) {
		Arena *a = g_arenas[i].load(std::memory_order_acquire);
		if (a && a->owns(p))
			return a;
	}
	return nullptr;
}

}  // namespace

Arena::Arena()
{
	for (size_t want = kReserve; want >= (size_t(64) << 20); want /= 2) {
		void *m = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m != MAP_FAILED) {
			base_ = static_cast<char *>(m);
			reserved_ = want;
			break;
		}
	}
	if (!base_) {
		std::fprintf(stderr, "faultline: arena: cannot reserve address space\n");
		std::abort();
	}
}

Arena::~Arena()
{
	munmap(base_, reserved_);
}

void *Arena::alloc(size_t size, size_t align)
{
	if (align < kAlign)
		align = kAlign;
	size_t at = round_up(used_ + kHeader, align);
	size_t end = at + round_up(size ? size : 1, kAlign);
	if (end > reserved_)
		return nullptr;  // operator new falls back to the heap (a block no restore drops)
	char *p = base_ + at;
#ifdef FL_ARENA_ASAN
	__asan_poison_memory_region(base_ + used_, end - used_);
	write_header(p, Header{size, kLive});
	__asan_unpoison_memory_region(p, size);
#endif
	used_ = end;
	if (used_ > high_)
		high_ = used_;
	return p;
}

void Arena::free(const void *p)
{
#ifdef FL_ARENA_ASAN
	Header h = read_header(p);
	if (h.state != kLive) {
		std::fprintf(stderr, "faultline: arena: %s of %p\n", h.state == kFreed ? "double free" : "bad free", p);
		std::abort();
	}
	write_header(const_cast<void *>(p), Header{h.size, kFreed});
	__asan_poison_memory_region(p, h.size);
#else
	(void)p;
#endif
}

void Arena::drop_scratch()
{
#ifdef FL_ARENA_ASAN
	if (high_ > frozen_)
		__asan_poison_memory_region(base_ + frozen_, high_ - frozen_);
#endif
	if (high_ - frozen_ > 2 * kKeep) {
		size_t from = round_up(frozen_ + kKeep, 4096);
		madvise(base_ + from, round_up(high_, 4096) - from, MADV_DONTNEED);
	}
	used_ = high_ = frozen_;
}

void Arena::begin_freeze()
{
	drop_scratch();
}

Arena::Frozen Arena::freeze()
{
	Pause heap;  /* the saved copy is not in the arena */
	Frozen f;
	copy_out(frozen_, &f);
	frozen_ = high_ = used_;
	return f;
}

void Arena::save(size_t from, Frozen *into)
{
	Pause heap;
	copy_out(from, into);
}

void Arena::copy_out(size_t from, Frozen *f)
{
	f->from = from;
	f->to = used_;
#ifdef FL_ARENA_ASAN
	/* the range holds poisoned headers and freed blocks: copy the shadow,
	 * read the bytes unpoisoned, then put the shadow back */
	unsigned char *s = shadow_of(base_ + f->from);
	f->shadow.resize((f->to - f->from) / 8);
	copy_shadow(f->shadow.data(), s, f->shadow.size());
	__asan_unpoison_memory_region(base_ + f->from, f->to - f->from);
#endif
	f->bytes.resize(f->to - f->from);  // (assign from char * copies byte by byte, instrumented)
	std::memcpy(f->bytes.data(), base_ + f->from, f->bytes.size());
#ifdef FL_ARENA_ASAN
	copy_shadow(s, f->shadow.data(), f->shadow.size());
#endif
}

void Arena::copy_in(const Frozen &f)
{
#ifdef FL_ARENA_ASAN
	__asan_unpoison_memory_region(base_ + f.from, f.to - f.from);
#endif
	std::memcpy(base_ + f.from, f.bytes.data(), f.bytes.size());
#ifdef FL_ARENA_ASAN
	copy_shadow(shadow_of(base_ + f.from), f.shadow.data(), f.shadow.size());
#endif
}

void Arena::restore(const Frozen &f)
{
	copy_in(f);
	drop_scratch();
}

void Arena::roll_back(const Frozen &f)
{
	copy_in(f);
#ifdef FL_ARENA_ASAN
	if (high_ > f.to)
		__asan_poison_memory_region(base_ + f.to, high_ - f.to);
#endif
	used_ = f.to;
}

Arena &registered_arena()
{
	Pause p;
	size_t i = g_count.fetch_add(1);
	if (i >= kMaxArenas) {
		std::fprintf(stderr, "faultline: arena: more than %zu arenas\n", kMaxArenas);
		std::abort();
	}
	Arena *a = new Arena;  // never freed: its blocks may be referenced until the process ends
	g_arenas[i].store(a, std::memory_order_release);
	return *a;
}

Arena &thread_arena()
{
	if (!tl_own)
		tl_own = &registered_arena();
	return *tl_own;
}

Scope::Scope(Arena *a) : prev_(tl_active) { tl_active = a; }
Scope::~Scope() { tl_active = prev_; }
bool owned(const void *p) { return owner_of(p) != nullptr; }

}  // namespace fl::arena

// The global allocation functions: the thread's arena inside a Scope, malloc
// otherwise. Deleting an arena block is a no-op (poison under ASan).
namespace {

void *allocate(std::size_t n, std::size_t align)
{
	if (fl::arena::Arena *a = fl::arena::detail::tl_active)
		if (void *p = a->alloc(n, align))
			return p;
	void *p = align > 16 ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n ? n : 1);
	if (!p)
		throw std::bad_alloc();
	return p;
}

void release(void *p)
{
	if (!p)
		return;
	if (fl::arena::Arena *a = fl::arena::owner_of(p))
		a->free(p);
	else
		std::free(p);
}

}  // namespace

void *operator new(std::size_t n) { return allocate(n, 16); }
void *operator new[](std::size_t n) { return allocate(n, 16); }
void *operator new(std::size_t n, std::align_val_t a) { return allocate(n, (std::size_t)a); }
void *operator new[](std::size_t n, std::align_val_t a) { return allocate(n, (std::size_t)a); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept
{
	try {
		return allocate(n, 16);
	} catch (...) {
		return nullptr;
	}
}
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept
{
	try {
		return allocate(n, 16);
	} catch (...) {
		return nullptr;
	}
}
void operator delete(void *p) noexcept { release(p); }
void operator delete[](void *p) noexcept { release(p); }
void operator delete(void *p, std::size_t) noexcept { release(p); }
void operator delete[](void *p, std::size_t) noexcept { release(p); }
void operator delete(void *p, std::align_val_t) noexcept { release(p); }
void operator delete[](void *p, std::align_val_t) noexcept { release(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { release(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { release(p); }
