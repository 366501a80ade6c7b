// SPDX-License-Identifier: GPL-2.0-only
// CoverageUnobserved (src/base/coverage.h) puts the fuzzers' counters back:
// edges run inside it leave libFuzzer's inline 8-bit counters as they were,
// the same edges outside it do not. branchy.cpp is the only instrumented
// file, so the counters are its edges alone.
#include <gtest/gtest.h>

#include <vector>

#include "base/coverage.h"

int branchy(int x);

namespace {

std::vector<uint8_t> counters() { return {__start___sancov_cntrs, __stop___sancov_cntrs}; }

int run_branchy()
{
	int sum = 0;
	for (int x = -5; x < 6; x++)
		sum += branchy(x);
	return sum;
}

TEST(CoverageUnobserved, PutsTheCountersBack)
{
	ASSERT_FALSE(counters().empty()) << "branchy.cpp was built without -fsanitize-coverage";
	const std::vector<uint8_t> before = counters();
	{
		const fl::CoverageUnobserved unobserved;
		EXPECT_EQ(run_branchy(), 39);
		EXPECT_NE(counters(), before);  // counted inside...
	}
	EXPECT_EQ(counters(), before);  // ...and put back
	EXPECT_EQ(run_branchy(), 39);
	EXPECT_NE(counters(), before);  // outside, they count
}

}  // namespace
