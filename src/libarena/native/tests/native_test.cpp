// SPDX-License-Identifier: GPL-2.0-only
// The native build on real threads: both levels, both variants, two
// producers, then the end-of-run invariants; and that the end-of-run check
// does see an object nobody gave back.
#include <gtest/gtest.h>

#include "libarena/native/native_bench.h"
#include "libarena/native/native_buddy.h"

namespace fl::arena_bench {
namespace {

struct Case {
	bool series;
	Variant variant;
};

void PrintTo(const Case &c, std::ostream *os)
{
	*os << (c.series ? "series " : "before ") << to_string(c.variant);
}

class NativeRun : public ::testing::TestWithParam<Case> {};

// 16 objects per invocation: past the LIFO's capacity (8), so the series'
// refills, spills and transfer caches run, across CPUs in malloc-xfree.
TEST_P(NativeRun, TwoProducersKeepTheInvariants)
{
	RunSpec s;
	s.series = GetParam().series;
	s.variant = GetParam().variant;
	s.nallocs = 16;
	s.producers = 2;
	s.invocations = 100;
	s.cpus = allowed_cpus();
	const RunResult r = run_native(s);
	EXPECT_TRUE(r.ok) << r.error;
	EXPECT_EQ(r.allocs, 2u * 100 * 16);
	EXPECT_EQ(r.frees, r.allocs - (s.variant == Variant::malloc_xfree ? 16 : 0));  // the last hand-off is freed untimed
}

INSTANTIATE_TEST_SUITE_P(Levels, NativeRun,
			 ::testing::Values(Case{false, Variant::malloc_free}, Case{false, Variant::malloc_xfree},
					   Case{true, Variant::malloc_free}, Case{true, Variant::malloc_xfree}),
			 [](const auto &info) {
				 return std::string(info.param.series ? "series_" : "before_") +
					(info.param.variant == Variant::malloc_free ? "free" : "xfree");
			 });

// The check must be able to fail: an object kept back is lost to it unless
// the shadow names it.
TEST(NativeCheck, AnObjectNobodyFreedIsReported)
{
	for (auto level : {libarena::buddy_level::before, libarena::buddy_level::series}) {
		libarena::NativeBuddy nb(level);
		ASSERT_EQ(nb.init(), 0);
		const uint64_t kept = libarena::buddy_alloc(nb.cpu(1), 64);
		ASSERT_NE(kept, 0u);
		for (int i = 0; i < 20; i++)  // through the caches too
			ASSERT_EQ(libarena::buddy_free(nb.cpu(0), libarena::buddy_alloc(nb.cpu(0), 64)), 0);
		EXPECT_NE(nb.drain_and_check(), "") << libarena::to_string(level);
		EXPECT_EQ(nb.drain_and_check({{kept, 2}}), "") << libarena::to_string(level);
		ASSERT_EQ(libarena::buddy_free(nb.cpu(1), kept), 0);
		EXPECT_EQ(nb.drain_and_check(), "") << libarena::to_string(level);
	}
}

}  // namespace
}  // namespace fl::arena_bench
