// SPDX-License-Identifier: GPL-2.0-only
// The reference note's invariants I1-I7, I11 and I12 (src/libarena/README.md) for
// one buddy allocator, checked against a shadow model of what its callers
// hold. Not libarena code: the checker reads the allocator's arena memory
// the way a debugger would and compares it with the shadow.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/coverage.h"
#include "libarena/buddy.h"

namespace fl::libarena {

// N bytes of arena memory read at once (a missing page reads as zeros, as
// Arena::load32's), their fields read by arena address: the checks that run
// at every scheduling point read a structure in one go, not word by word.
template <size_t N>
class ArenaBytes {
public:
	// Zeroed only if a page is missing (then read again over the zeros):
	// zeroing every read first was a tenth of the point checks' copying.
	ArenaBytes(Arena &a, u64 base) : base_(base)
	{
		if (!a.machine().arena_kernel_read(base, bytes_.data(), u32(N))) {
			bytes_.fill(0);
			(void)a.machine().arena_kernel_read(base, bytes_.data(), u32(N));
		}
	}
	// No coverage (base/coverage.h): the runner's copy is the one the
	// linker kept, and its trace-cmp callbacks (UBSan's pointer checks)
	// were a twentieth of a buddy-series input, all in the checks.
	template <typename T> FL_NO_COVERAGE T get(u64 addr) const { return peek<T>(addr); }
	// get(), always inlined: for callers without coverage only
	// (check_caches and poison_past_count, at every point), where a call
	// per field was 2 % of an input; inlined into a function with coverage
	// it would have that function's coverage.
	template <typename T> __attribute__((always_inline)) T peek(u64 addr) const
	{
		T v;
		std::memcpy(&v, &bytes_[addr - base_], sizeof v);
		return v;
	}

private:
	u64 base_;
	std::array<u8, N> bytes_;
};

// (series) what the allocator's caches hold, read by check_caches(): per-CPU
// LIFOs, transfer caches, the deferred list, as (address, order) in address
// order. A vector kept between reads, not a map: it is refilled at every
// scheduling point.
struct CachedObjects {
	std::vector<std::pair<u64, u64>> objects;
	bool count(u64 addr) const;
	bool empty() const { return objects.empty(); }
	size_t size() const { return objects.size(); }
	auto begin() const { return objects.begin(); }
	auto end() const { return objects.end(); }
};

// What the callers hold: live objects (address -> order).
struct Shadow {
	std::map<u64, u64> live;
	CachedObjects cached;  // for I1-I7 a cached object is allocated
	u64 last_vaddr = 0;  // I11: vaddr only grows (until destroy)
};

// (series levels) I8 cache bounds (0 <= nr <= CAP, 0 <= count <= XCAP,
// every cached pointer distinct, allocated, of the cache's order), I10 (a
// CPU's guard is set only while that CPU is inside an op: `busy[cpu]`; a
// transfer lock only while its CPU is), and fills shadow->cached. Skips a
// LIFO whose CPU holds its guard (mid-update) and a transfer cache whose
// lock is held. "" when all hold.
std::string check_caches(buddy_ctx *b, Shadow *shadow, const bool busy[BUDDY_NR_CPUS]);
// The same against `live`, into *cached: the checks at every named point and
// scheduling decision read the runner's live objects without copying them.
std::string check_caches(buddy_ctx *b, const std::map<u64, u64> &live, CachedObjects *cached,
			 const bool busy[BUDDY_NR_CPUS]);
// Held objects whose header bytes (allocated bit, order nibble) a passed
// check_caches read and nobody has written since (CachesReadSet::known):
// (address, order nibble), by address. check_caches takes such an object's
// nibble from here instead of two arena loads through the machine's page
// lookup (a fifth of a point check): the bytes are the same, so is the verdict.
using KnownHeaders = std::vector<std::pair<u64, u64>>;

// The first of a list of (address, x) pairs sorted by address at or past
// addr: std::lower_bound against (addr, 0) comparing the addresses alone,
// which is the same pair (no x is below 0). The pairs' operator<=> was an
// out-of-line call at every step of the checks' lookups.
template <class List> auto first_at(List &list, u64 addr)
{
	return std::lower_bound(list.begin(), list.end(), addr,
				[](const std::pair<u64, u64> &p, u64 a) { return p.first < a; });
}

// The caches' region (the per-CPU caches, then the transfer caches), read in
// one go: a point check reads it once for check_caches and the runner's
// poisoning of transfer slots past their count.
using CachesBytes = ArenaBytes<SIZEOF_BUDDY_SERIES - BUDDY_CACHES>;
inline CachesBytes read_caches(buddy_ctx *b) { return CachesBytes(*b->arena, buddy_cache_of(b, 0)); }
// The same on that copy (read at this point, of a level with caches); with
// `known`, the headers of the objects in it are not read again, and with
// `known_not_live` (the live objects are the ones that check had: none of
// its objects was a caller's then, so none is now) neither is `live` asked
// of them.
std::string check_caches(buddy_ctx *b, const CachesBytes &caches, const std::map<u64, u64> &live,
			 CachedObjects *cached, const bool busy[BUDDY_NR_CPUS], const KnownHeaders *known = nullptr,
			 bool known_not_live = false);

// The first invariant that does not hold ("I5: ..."), or "" when all do.
// `deep` adds the O(chunk) checks (tiling, every bit and nibble) of every
// chunk: check_buddy_shallow, then check_chunk on each chunk in list order.
std::string check_buddy(buddy_ctx *b, Shadow *shadow, bool deep = true);

// What the deep part needs from the shallow one: the chunk list in order,
// and per chunk the held (live and cached) objects inside it, by address.
using HeldObjects = std::vector<std::pair<u64, u64>>;  // (address, order)
using HeldSpan = std::span<const std::pair<u64, u64>>;  // a chunk's, in a HeldObjects
struct BuddyLayout {
	std::vector<u64> chunks;
	// Every held object by address, so a chunk's are one run (held(c)):
	// one list, not a vector per chunk in a map, as this is built after
	// every op (its nodes and vectors were a twentieth of an input).
	HeldObjects objects;
	std::vector<u64> sorted;  // the chunks by address (I11's cycle, I1's "in a chunk")
	HeldSpan held(u64 c) const;
	bool has_chunk(u64 c) const;
};
// The checks that are not per chunk (I11, the lock between ops, I1's
// disjointness and placement), filling *layout; "" when all hold.
std::string check_buddy_shallow(buddy_ctx *b, Shadow *shadow, BuddyLayout *layout);
// The deep checks of chunk c (I2-I7, I9's bit count): a function of its
// metadata, its free blocks' headers and `held` alone, which is what lets
// a caller skip a chunk none of those changed in (buddy_check_incremental.h).
// `held` is by address, as check_buddy_shallow lists it.
std::string check_chunk(buddy_ctx *b, u64 c, HeldSpan held);

// The allocator-visible state (struct buddy, every chunk's metadata and the
// headers on its free lists) as bytes: I12 compares it around a failing op.
std::vector<u8> snapshot_buddy(buddy_ctx *b);

// The free blocks (idx -> order) of a chunk nobody has allocated from: the
// carve-out of buddy_chunk_get, computed independently of buddy_chunk_get.
const std::map<u64, u64> &pristine_free_blocks();

}  // namespace fl::libarena
