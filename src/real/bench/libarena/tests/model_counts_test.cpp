// SPDX-License-Identifier: GPL-2.0-only
// The simulated build's counts per op: deterministic, and the protocol the
// levels promise (before: one lock per op; series: a LIFO hit takes no lock,
// refills and spills move batches, cross-CPU frees go through the transfer
// cache). About 1 s under ASan.
#include <gtest/gtest.h>

#include "real/bench/libarena/model_counts.h"

namespace fl::arena_bench {
namespace {

TEST(ModelCounts, BeforeTakesTheLockOncePerOp)
{
	for (Variant v : {Variant::malloc_free, Variant::malloc_xfree}) {
		const ModelCounts c = model_counts(false, v, 16, 2, 8);
		ASSERT_TRUE(c.ok) << c.error;
		EXPECT_EQ(c.allocs, 2u * 8 * 16);
		EXPECT_EQ(c.alloc_locks, c.allocs);
		EXPECT_EQ(c.free_locks, c.frees);
		EXPECT_EQ(c.alloc_hits + c.free_hits + c.xfer_locks, 0u);
	}
}

TEST(ModelCounts, SeriesHitsItsOwnLifoWithoutALock)
{
	const ModelCounts c = model_counts(true, Variant::malloc_free, 1, 1, 64);
	ASSERT_TRUE(c.ok) << c.error;
	EXPECT_EQ(c.alloc_hits, c.allocs);
	EXPECT_EQ(c.free_hits, c.frees);
	EXPECT_EQ(c.alloc_locks + c.free_locks + c.xfer_locks, 0u);
}

// 16 objects per invocation overflow the 8-object LIFO: batches of 4 go out
// and come back, so at most one op in four takes a lock.
TEST(ModelCounts, SeriesMovesBatchesPastTheLifo)
{
	const ModelCounts c = model_counts(true, Variant::malloc_free, 16, 1, 32);
	ASSERT_TRUE(c.ok) << c.error;
	EXPECT_GT(c.refill_xfer + c.refill_bulk, 0u);
	EXPECT_GT(c.spill_xfer + c.spill_bulk, 0u);
	EXPECT_LE(4 * (c.alloc_locks + c.free_locks), c.allocs + c.frees);
}

TEST(ModelCounts, CrossCpuFreesGoThroughTheTransferCache)
{
	const ModelCounts c = model_counts(true, Variant::malloc_xfree, 16, 2, 32);
	ASSERT_TRUE(c.ok) << c.error;
	EXPECT_GT(c.spill_xfer, 0u);
	EXPECT_GT(c.refill_xfer, 0u);
}

TEST(ModelCounts, AreDeterministic)
{
	const ModelCounts a = model_counts(true, Variant::malloc_xfree, 64, 4, 4),
			  b = model_counts(true, Variant::malloc_xfree, 64, 4, 4);
	ASSERT_TRUE(a.ok) << a.error;
	EXPECT_EQ(a.alloc_locks, b.alloc_locks);
	EXPECT_EQ(a.free_locks, b.free_locks);
	EXPECT_EQ(a.refill_xfer, b.refill_xfer);
	EXPECT_EQ(a.spill_bulk, b.spill_bulk);
}

TEST(ModelCounts, MoreProducersThanSimulatedCpusIsAnError)
{
	const ModelCounts c = model_counts(true, Variant::malloc_free, 1, kModelCpus + 1, 1);
	EXPECT_FALSE(c.ok);
	EXPECT_NE(c.error.find("4 CPUs"), std::string::npos);
}

}  // namespace
}  // namespace fl::arena_bench
