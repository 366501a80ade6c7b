// SPDX-License-Identifier: GPL-2.0-only
// The incremental check_buddy (buddy_check_incremental.h): it rechecks only
// the chunks an op wrote or whose held objects changed, and on those it
// finds what the whole check finds: a corruption planted in a chunk the op
// touched, a shadow that changed with no write, a user store reported by
// whoever made it; on random op sequences with planted corruptions its
// verdict is the whole check's after every op. The point checks' read set
// (CachesReadSet) sees a write to what check_caches read, and no other.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "libarena/buddy_check_incremental.h"

namespace fl::libarena {

namespace {

// An arena and an allocator (as buddy_test.cpp's Fixture) watched by an
// incremental checker, with the whole check beside it on a copy of the shadow.
struct Watched {
	Arena arena;
	buddy_faults faults;
	buddy_ctx b{&arena, 0, &faults};
	Shadow shadow;
	IncrementalBuddyCheck inc{arena, BuddyCheckMode::incremental};
	Watched()
	{
		EXPECT_TRUE(arena.ok());
		b.buddy = arena.base() + (u64(ARENA_PAGES) - 1) * __PAGE_SIZE;
		EXPECT_EQ(arena.machine().store(0, b.buddy, 8, 0).sig, 0);
		EXPECT_EQ(arena.reserve_pages(arena.base(), 8), 0);
		EXPECT_EQ(buddy_init(&b), 0);
	}
	u64 alloc(u64 size)
	{
		const u64 p = buddy_alloc(&b, size);
		EXPECT_NE(p, 0u);
		shadow.live[p] = size_to_order(size);
		return p;
	}
	// The whole check's verdict now (on a copy: I11 remembers vaddr).
	std::string whole()
	{
		Shadow s = shadow;
		return check_buddy(&b, &s, true);
	}
	size_t chunks()
	{
		BuddyLayout l;
		Shadow s = shadow;
		EXPECT_EQ(check_buddy_shallow(&b, &s, &l), "");
		return l.chunks.size();
	}
	static u64 chunk_of(u64 p) { return p & ~BUDDY_CHUNK_OFFSET_MASK; }
	u64 bits_byte(u64 p) { return chunk_of(p) + CHUNK_ALLOCATED + (p - chunk_of(p)) / 16 / 8; }
};

}  // namespace

TEST(IncrementalCheck, RechecksOnlyTheChunkAnOpTouched)
{
	Watched w;
	const u64 big = w.alloc(512 << 10);  // half a chunk each: three chunks
	w.alloc(512 << 10);
	w.alloc(512 << 10);
	ASSERT_EQ(w.inc.check(&w.b, &w.shadow), "");
	ASSERT_GE(w.chunks(), 3u);
	EXPECT_EQ(w.inc.check(&w.b, &w.shadow), "");
	EXPECT_EQ(w.inc.rechecked(), 0u) << "nothing changed since the last check";
	const u64 small = w.alloc(64);
	EXPECT_EQ(w.inc.check(&w.b, &w.shadow), "");
	EXPECT_EQ(w.inc.rechecked(), 1u) << "one small alloc writes one chunk";
	ASSERT_EQ(buddy_free(&w.b, big), 0);
	w.shadow.live.erase(big);
	EXPECT_EQ(w.inc.check(&w.b, &w.shadow), "");
	EXPECT_EQ(w.inc.rechecked(), 1u) << "a free writes the chunk it frees into";
	ASSERT_EQ(buddy_free(&w.b, small), 0);
	w.shadow.live.erase(small);
	EXPECT_EQ(w.inc.check(&w.b, &w.shadow), "");
	EXPECT_EQ(w.inc.rechecked(), 1u);
}

// A bit cleared through the allocator's own store path in the chunk the
// last op wrote: the same I4 the whole check reports.
TEST(IncrementalCheck, CatchesACorruptionInTheChunkTheOpTouched)
{
	Watched w;
	w.alloc(512 << 10);
	w.alloc(512 << 10);
	ASSERT_EQ(w.inc.check(&w.b, &w.shadow), "");
	const u64 p = w.alloc(100);
	const u64 at = w.bits_byte(p);
	w.arena.store8(at, u8(w.arena.load8(at) & ~(1u << ((p - Watched::chunk_of(p)) / 16 % 8))));
	const std::string want = w.whole();
	ASSERT_NE(want, "");
	EXPECT_EQ(w.inc.check(&w.b, &w.shadow), want);
	EXPECT_EQ(w.inc.check(&w.b, &w.shadow), want) << "a failing chunk stays rechecked";
}

// The shadow changes and the arena does not (an object a free should have
// released, still allocated): the chunk's held objects differ, so it is rechecked.
TEST(IncrementalCheck, CatchesAShadowChangeWithoutAWrite)
{
	Watched w;
	const u64 p = w.alloc(256);
	w.alloc(256);
	ASSERT_EQ(w.inc.check(&w.b, &w.shadow), "");
	w.shadow.live.erase(p);  // as if freed; the allocator never saw a free
	const std::string want = w.whole();
	ASSERT_NE(want, "");
	EXPECT_EQ(w.inc.check(&w.b, &w.shadow), want);
}

// A user store goes through the mapping, around the Arena: whoever makes it
// reports it (the runner does), or the incremental check cannot see it.
TEST(IncrementalCheck, AWriteAroundTheArenaCountsOnceReported)
{
	Watched w;
	const u64 p = w.alloc(16);
	ASSERT_EQ(buddy_free(&w.b, p), 0);  // p is a free block again: its header is the allocator's
	w.shadow.live.erase(p);
	w.alloc(512 << 10);
	ASSERT_EQ(w.inc.check(&w.b, &w.shadow), "");
	const u64 free_block = p;
	ASSERT_EQ(w.arena.machine().store(0, free_block + BUDDY_HEADER_OFF + HDR_PREV, 4, 7).sig, 0);
	const std::string want = w.whole();
	ASSERT_NE(want, "");
	EXPECT_EQ(w.inc.check(&w.b, &w.shadow), "") << "unreported, the chunk is not rechecked";
	w.arena.written(free_block, free_block + 16);
	EXPECT_EQ(w.inc.check(&w.b, &w.shadow), want);
}

// Random ops across several chunks, now and then a byte of a chunk the op
// just wrote flipped through the Arena: after every op both checks agree,
// and the flips are found.
TEST(IncrementalCheck, RandomOpsAndPlantedCorruptionsAgreeWithTheWholeCheck)
{
	const uint32_t seed = 0x1c4e;
	std::printf("IncrementalCheck seed=0x%x\n", unsigned(seed));
	std::mt19937 rng(seed);
	const u64 sizes[] = {16, 100, 1000, 16350, 70000, 512 << 10};
	int found = 0, planted = 0;
	for (int round = 0; round < 6; round++) {
		Watched w;
		u64 last = 0;
		for (int step = 0; step < 60; step++) {
			if (rng() % 3 || w.shadow.live.empty()) {
				last = w.alloc(sizes[rng() % std::size(sizes)]);
			} else {
				auto it = w.shadow.live.begin();
				std::advance(it, long(rng() % w.shadow.live.size()));
				last = it->first;
				ASSERT_EQ(buddy_free(&w.b, last), 0);
				w.shadow.live.erase(it);
			}
			const bool plant = step > 10 && rng() % 12 == 0;
			if (plant) {  // a byte of the orders or bits of the chunk this op wrote
				const u64 c = Watched::chunk_of(last);
				const u64 at = c + CHUNK_ORDERS + rng() % (CHUNK_FREELISTS - CHUNK_ORDERS);
				w.arena.store8(at, u8(w.arena.load8(at) ^ (1u << (rng() % 8))));
				planted++;
			}
			const std::string want = w.whole();
			const std::string got = w.inc.check(&w.b, &w.shadow);
			ASSERT_EQ(got, want) << "round " << round << " step " << step;
			if (!got.empty()) {
				found += plant;
				break;  // as the runner does: a run ends at its first violation
			}
		}
	}
	EXPECT_GT(planted, 0);
	EXPECT_GT(found, 0) << "no planted corruption was visible to either check";
}

}  // namespace fl::libarena

namespace fl::libarena {
namespace {

// check_chunk as it was written first, over ordered maps: the oracle of the
// flat one (the same first violation, word for word).
std::string reference_check_chunk(buddy_ctx *b, u64 c, const HeldObjects &held)
{
	Arena &a = *b->arena;
	auto order_of = [&](u64 idx) {
		const u8 v = a.load8(c + CHUNK_ORDERS + idx / 2);
		return u64((idx & 1) ? (v & 0xf) : (v >> 4));
	};
	auto allocated = [&](u64 idx) { return (a.load8(c + CHUNK_ALLOCATED + idx / 8) & (1u << (idx % 8))) != 0; };
	std::map<u64, u64> meta, pristine;
	{
		u64 left = SIZEOF_BUDDY_CHUNK, idx = 0, max_order = BUDDY_CHUNK_NUM_ORDERS;
		while (left) {
			const u64 p = 63 - u64(__builtin_clzll(left));
			const u64 o = p >= BUDDY_MIN_ALLOC_SHIFT ? p - BUDDY_MIN_ALLOC_SHIFT : 0;
			left = p >= BUDDY_MIN_ALLOC_SHIFT ? left - (1ull << p) : 0;
			meta[idx] = o;
			for (u64 k = left ? o + 1 : o; k < max_order; k++)
				pristine[idx + (1ull << k)] = k;
			idx += 1ull << o;
			max_order = o;
		}
	}
	const std::string hc = "0x" + [&] {
		char s[24];
		std::snprintf(s, sizeof s, "%llx", (unsigned long long)c);
		return std::string(s);
	}();
	std::map<u64, u64> free_blocks;
	for (u64 o = 0; o < BUDDY_CHUNK_NUM_ORDERS; o++) {
		u64 prev = BUDDY_CHUNK_ITEMS, steps = 0;
		for (u64 i = a.load64(c + CHUNK_FREELISTS + 8 * o); i != BUDDY_CHUNK_ITEMS; steps++) {
			if (i >= BUDDY_CHUNK_ITEMS || steps > BUDDY_CHUNK_ITEMS)
				return "I6: freelist " + std::to_string(o) + " of chunk " + hc + " is corrupt";
			if (allocated(i) || order_of(i) != o || i % (1ull << o))
				return "I3: free block " + std::to_string(i) + " on freelist " + std::to_string(o) +
				       " has allocated=" + std::to_string(allocated(i)) + " order " + std::to_string(order_of(i));
			if (!free_blocks.emplace(i, o).second)
				return "I3: block " + std::to_string(i) + " is on a free list twice";
			const u64 h = c + 16 * i + BUDDY_HEADER_OFF;
			if (a.load32(h + HDR_PREV) != prev)
				return "I6: block " + std::to_string(i) + " prev is not its predecessor";
			prev = i;
			i = a.load32(h + HDR_NEXT);
		}
	}
	std::map<u64, u64> all = meta;
	for (auto [addr, order] : held)
		all[(addr - c) / 16] = order;
	const size_t allocated_starts = all.size();
	for (auto [idx, order] : all) {
		if (!allocated(idx))
			return "I4: allocated block " + std::to_string(idx) + " has no allocated bit";
		if (!meta.count(idx) && order_of(idx) != order)
			return "I4: allocated block " + std::to_string(idx) + " has order nibble " +
			       std::to_string(order_of(idx)) + ", not " + std::to_string(order);
	}
	for (auto [idx, order] : free_blocks)
		if (!all.emplace(idx, order).second)
			return "I1: free block " + std::to_string(idx) + " is also allocated";
	u64 next = 0;
	for (auto [idx, order] : all) {
		if (idx != next)
			return "I2: slots " + std::to_string(next) + ".." + std::to_string(idx) + " of chunk " + hc +
			       (idx < next ? " are covered twice" : " are neither free nor allocated (lost)");
		next = idx + (1ull << order);
	}
	if (next != BUDDY_CHUNK_ITEMS)
		return "I2: chunk " + hc + " tiles only " + std::to_string(next) + " slots";
	size_t bits = 0;
	for (u64 i = 0; i < BUDDY_CHUNK_ITEMS / 8; i++)
		bits += size_t(__builtin_popcount(a.load8(c + CHUNK_ALLOCATED + i)));
	if (bits != allocated_starts)
		return std::string(has_caches(b->level) ? "I9 (lost or duplicated across caches)" : "I4") + ": chunk " +
		       hc + " has " + std::to_string(bits) + " allocated bits for " + std::to_string(allocated_starts) +
		       " allocated blocks";
	for (auto [idx, order] : free_blocks) {
		if (order + 1 >= BUDDY_CHUNK_NUM_ORDERS)
			continue;
		auto it = free_blocks.find(idx ^ (1ull << order));
		if (it != free_blocks.end() && it->second == order)
			return "I5: free buddies " + std::to_string(idx) + " and " + std::to_string(it->first) + " of order " +
			       std::to_string(order) + " were not merged";
	}
	if (allocated_starts == meta.size() && free_blocks != pristine)
		return "I7: chunk " + hc + " has nothing allocated but is not pristine";
	return "";
}

// Random allocs and frees, then now and then a corruption (a bit of the
// orders, of the allocated bits, of a free list's head or of a free
// block's header links, or a held object the chunk does not have): after
// every step check_chunk and its reference give the same verdict, word for
// word, on every chunk. A round ends at its corruption.
TEST(IncrementalCheck, ChunkCheckAgreesWithItsMapBasedReference)
{
	std::mt19937 rng(0x5eed);
	const u64 sizes[] = {16, 48, 100, 1000, 4096, 16350, 70000, 512 << 10};
	size_t compared = 0;
	std::set<std::string> kinds;  // the invariants the corruptions broke
	for (int round = 0; round < 120; round++) {
		Watched w;
		for (int step = 0; step < 40; step++) {
			if (rng() % 3 || w.shadow.live.empty()) {
				w.alloc(sizes[rng() % std::size(sizes)]);
			} else {
				auto it = w.shadow.live.begin();
				std::advance(it, long(rng() % w.shadow.live.size()));
				ASSERT_EQ(buddy_free(&w.b, it->first), 0);
				w.shadow.live.erase(it);
			}
			std::vector<u64> chunks;
			for (u64 c = w.arena.load64(w.b.buddy + BUDDY_FIRST_CHUNK); c && chunks.size() < 64;
			     c = w.arena.load64(c + CHUNK_NEXT))
				chunks.push_back(c);
			std::map<u64, HeldObjects> held;
			for (auto [addr, order] : w.shadow.live)
				held[Watched::chunk_of(addr)].emplace_back(addr, order);
			const bool plant = step > 4 && rng() % 6 == 0;
			if (plant) {
				const u64 c = chunks[rng() % chunks.size()];
				const u64 o = rng() % BUDDY_CHUNK_NUM_ORDERS, head = w.arena.load64(c + CHUNK_FREELISTS + 8 * o);
				const u8 bit = u8(1u << (rng() % 8));
				auto flip = [&](u64 at) { w.arena.store8(at, u8(w.arena.load8(at) ^ bit)); };
				switch (rng() % 6) {
				case 0:
					flip(c + CHUNK_ORDERS + rng() % (CHUNK_ALLOCATED - CHUNK_ORDERS));
					break;
				case 1:
					flip(c + CHUNK_ALLOCATED + rng() % (CHUNK_FREELISTS - CHUNK_ALLOCATED));
					break;
				case 2:
					flip(c + CHUNK_FREELISTS + 8 * o + rng() % 3);
					break;
				case 3:
					if (head < BUDDY_CHUNK_ITEMS)
						flip(c + 16 * head + BUDDY_HEADER_OFF + rng() % SIZEOF_BUDDY_HEADER);
					break;
				case 4:  // the list forgets its blocks
					w.arena.store64(c + CHUNK_FREELISTS + 8 * o, BUDDY_CHUNK_ITEMS);
					break;
				default:
					if (head < BUDDY_CHUNK_ITEMS)
						held[c].emplace_back(c + 16 * head, o);
					std::sort(held[c].begin(), held[c].end());
					break;
				}
			}
			for (u64 c : chunks) {
				const std::string want = reference_check_chunk(&w.b, c, held[c]);
				ASSERT_EQ(check_chunk(&w.b, c, held[c]), want) << "round " << round << " step " << step;
				compared++;
				if (!want.empty())
					kinds.insert(want.substr(0, want.find(' ', want.find(' ') + 1)));  // "I4: allocated", "I4: chunk"
			}
			if (plant)
				break;
		}
	}
	EXPECT_GE(compared, 1000u);
	EXPECT_GE(kinds.size(), 6u) << "the corruptions broke too few invariants";
	for (const std::string &k : kinds)
		std::printf("'%s' ", k.c_str());
	std::printf("(%zu chunk checks)\n", compared);
}

// What check_caches read: the caches' region, the deferred list's head, a
// held object's word and its two header bytes (shared with its neighbours
// in the bitmap byte and the nibble pair). Another block's header bytes,
// the held object's payload past its word, the buddy lock: not read.
TEST(CachesReadSet, SeesAWriteToWhatThePointCheckReadAndNoOther)
{
	Watched w;
	CachesReadSet read{w.arena};
	const u64 c = Watched::chunk_of(w.alloc(16));
	const u64 held = c + 16 * 100, other = c + 16 * 200;
	CachedObjects cached;
	cached.objects = {{held, 0}};
	auto rewrite8 = [&](u64 a) { w.arena.store8(a, w.arena.load8(a)); };
	auto unchanged_after = [&](u64 a) {
		read.passed(&w.b, cached);
		rewrite8(a);
		return read.unchanged();
	};
	read.passed(&w.b, cached);
	EXPECT_TRUE(read.unchanged());
	for (u64 a : {c + CHUNK_ALLOCATED + 100 / 8, c + CHUNK_ORDERS + 100 / 2, held, held + 7,
		      buddy_cache_of(&w.b, 0), buddy_cache_of(&w.b, BUDDY_NR_CPUS - 1) + 8, buddy_xfer_of(&w.b, BUDDY_CACHE_ORDERS - 1),
		      w.b.buddy + BUDDY_DEFERRED_FREE + 7})
		EXPECT_FALSE(unchanged_after(a)) << std::hex << a - c;
	for (u64 a : {c + CHUNK_ALLOCATED + 200 / 8, c + CHUNK_ORDERS + 200 / 2, other, held + 8, w.b.buddy + BUDDY_LOCK})
		EXPECT_TRUE(unchanged_after(a)) << std::hex << a - c;
	// a write over a chunk's end (pages given back): whatever it covers
	read.passed(&w.b, cached);
	w.arena.written(c + BUDDY_CHUNK_BYTES - 8, c + BUDDY_CHUNK_BYTES + 8);
	EXPECT_FALSE(read.unchanged());
}

// The headers check_caches may take as known (CachesReadSet::known): those
// of the objects a passed check found held, until a byte of them (the
// allocated bit's byte, the nibble's byte, shared with neighbours) or a
// range over the chunk's end is written; other writes keep them.
TEST(CachesReadSet, ForgetsAHeaderWhenItsBytesAreWritten)
{
	Watched w;
	CachesReadSet read{w.arena};
	const u64 c = Watched::chunk_of(w.alloc(16));
	const u64 held = c + 16 * 100, next = c + 16 * 101, other = c + 16 * 200;
	CachedObjects cached;
	cached.objects = {{held, 0}, {other, 0}};
	auto rewrite8 = [&](u64 a) { w.arena.store8(a, w.arena.load8(a)); };
	auto known = [&](u64 obj) {
		return std::find(read.known().begin(), read.known().end(), std::pair<u64, u64>(obj, 0)) != read.known().end();
	};
	auto forgets_after = [&](u64 a) {
		read.learned(cached, 0);
		rewrite8(a);
		EXPECT_TRUE(known(other)) << "a header elsewhere in the chunk, written at " << std::hex << a - c;
		return !known(held);
	};
	for (u64 a : {c + CHUNK_ALLOCATED + 100 / 8, c + CHUNK_ALLOCATED + 101 / 8, c + CHUNK_ORDERS + 100 / 2,
		      c + CHUNK_ORDERS + 101 / 2})
		EXPECT_TRUE(forgets_after(a)) << std::hex << a - c;
	for (u64 a : {c + CHUNK_ALLOCATED + 104 / 8, c + CHUNK_ORDERS + 102 / 2, held, next, held + 8,
		      buddy_cache_of(&w.b, 0), w.b.buddy + BUDDY_DEFERRED_FREE, w.b.buddy + BUDDY_LOCK})
		EXPECT_FALSE(forgets_after(a)) << std::hex << a - c;
	read.learned(cached, 0);
	w.arena.written(c + BUDDY_CHUNK_BYTES - 8, c + BUDDY_CHUNK_BYTES + 8);
	EXPECT_TRUE(read.known().empty());
	// A header written after it was learned is read again: a planted
	// clear of a cached object's allocated bit is found where it was not before.
	const bool busy[BUDDY_NR_CPUS] = {};
	const u64 p = w.alloc(64);  // order 2, put in CPU 0's order-2 LIFO by hand
	w.shadow.live.erase(p);
	const u64 cache = buddy_cache_of(&w.b, 0);
	w.arena.store64(cache_obj_at(cache, 2, 0), p);
	w.arena.store32(cache_nr_at(cache, 2), 1);
	CachedObjects now;
	const CachesBytes bytes = read_caches(&w.b);
	ASSERT_EQ(check_caches(&w.b, bytes, w.shadow.live, &now, busy, &read.known()), "");
	ASSERT_EQ(now.objects.size(), 1u);
	read.learned(now, 0);
	ASSERT_EQ(read.known().size(), 1u);
	const u64 idx = (p - Watched::chunk_of(p)) / 16, bit = Watched::chunk_of(p) + CHUNK_ALLOCATED + idx / 8;
	w.arena.store8(bit, u8(w.arena.load8(bit) & ~(1u << (idx % 8))));
	EXPECT_TRUE(read.known().empty());
	EXPECT_NE(check_caches(&w.b, bytes, w.shadow.live, &now, busy, &read.known()).find("which is not an allocated block"),
		  std::string::npos);
}

}  // namespace
}  // namespace fl::libarena
