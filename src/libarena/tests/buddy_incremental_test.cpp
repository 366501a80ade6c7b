// SPDX-License-Identifier: GPL-2.0-only
// The incremental check_buddy (buddy_check_incremental.h): it rechecks only
// the chunks an op wrote or whose held objects changed, and on those it
// finds what the whole check finds: a corruption planted in a chunk the op
// touched, a shadow that changed with no write, a user store reported by
// whoever made it; on random op sequences with planted corruptions its
// verdict is the whole check's after every op.
#include <gtest/gtest.h>

#include <random>

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
