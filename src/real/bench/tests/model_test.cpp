// SPDX-License-Identifier: GPL-2.0-only
// The model backend's counts are the port's cost model: eager pre inserts
// every page at mmap, lazy levels nothing until touched, MAP_POPULATE costs
// one fault per page at v2 and one per fault-around window at v3.
#include <gtest/gtest.h>

#include "real/bench/model.h"

namespace fl::bench {
namespace {

constexpr uint64_t kPages = 64;

ModelCounts run(Patch patch, Arch arch, bool populate, uint64_t touch)
{
	Geometry g;
	g.map_bytes = kPages * 4096;
	std::string err;
	ModelCounts c = model_iteration(g, Pattern{populate, touch}, PortLevel{patch, arch}, &err);
	EXPECT_EQ(err, "");
	return c;
}

class ModelCountsTest : public ::testing::TestWithParam<Arch> {};

TEST_P(ModelCountsTest, PreInsertsEveryPagePerMmap)
{
	ModelCounts c = run(Patch::pre, GetParam(), false, 0);
	EXPECT_EQ(c.ptes_at_mmap, kPages);
	EXPECT_EQ(c.op.ptes_zapped, kPages);
	EXPECT_EQ(c.op.faults, 0u);
	// touching adds no faults: the PTEs are there
	EXPECT_EQ(run(Patch::pre, GetParam(), false, kPages).op.faults, 0u);
}

TEST_P(ModelCountsTest, LazyLevelsInsertNothingUntilTouched)
{
	for (Patch p : {Patch::v1, Patch::v2, Patch::v3}) {
		ModelCounts c = run(p, GetParam(), false, 0);
		EXPECT_EQ(c.ptes_at_mmap, 0u) << to_string(p);
		EXPECT_EQ(c.op.ptes_installed, 0u) << to_string(p);
		EXPECT_EQ(c.op.faults, 0u) << to_string(p);
	}
	for (Patch p : {Patch::v1, Patch::v2}) {
		ModelCounts c = run(p, GetParam(), false, 5);
		// handle_mm_fault runs twice per touch: vmf_can_call_fault() sends a
		// ->fault without ->map_pages from the per-VMA lock to the mmap_lock
		EXPECT_EQ(c.op.faults, 10u) << to_string(p);
		EXPECT_EQ(c.op.vma_lock_retries, 5u) << to_string(p);
		EXPECT_EQ(c.op.fault_handlers, 5u) << to_string(p);
		EXPECT_EQ(c.op.ptes_installed, 5u) << to_string(p);
		EXPECT_EQ(c.op.ptes_zapped, 5u) << to_string(p);
	}
}

TEST_P(ModelCountsTest, PopulateFaultsPerPageAtV2PerWindowAtV3)
{
	ModelCounts v2 = run(Patch::v2, GetParam(), true, 0);
	EXPECT_EQ(v2.op.faults, kPages);
	EXPECT_EQ(v2.op.fault_handlers, kPages);
	EXPECT_EQ(v2.ptes_at_mmap, kPages);
	ModelCounts v3 = run(Patch::v3, GetParam(), true, 0);
	// fault_around_bytes 64K = 16 pages at 4K, windows aligned to 64K
	const uint64_t first = v3.addr >> 16, last = (v3.addr + kPages * 4096 - 1) >> 16;
	const uint64_t windows = last - first + 1;
	EXPECT_GE(windows, kPages / 16);
	EXPECT_EQ(v3.op.faults, windows);
	EXPECT_EQ(v3.op.map_pages_calls, windows);
	EXPECT_EQ(v3.op.fault_handlers, 0u);
	EXPECT_EQ(v3.ptes_at_mmap, kPages);
	EXPECT_LT(v3.op.ptl_locks, v2.op.ptl_locks);
	// touching after populate adds nothing
	EXPECT_EQ(run(Patch::v3, GetParam(), true, kPages).op.faults, windows);
}

INSTANTIATE_TEST_SUITE_P(Widths, ModelCountsTest, ::testing::Values(Arch::A32, Arch::A64),
			 [](const auto &i) { return std::string("arch") + to_string(i.param); });

TEST(ModelLine, NamesTheLevelAndCounts)
{
	ModelCounts c = run(Patch::v2, Arch::A64, false, 3);
	std::string line = model_line(c, PortLevel{Patch::v2, Arch::A64});
	EXPECT_EQ(line.rfind("arraymap-mmap: model v2/arch64: per op: ptes at mmap 0, faults 6 (3 vma-lock retries), fault handlers 3,", 0), 0u) << line;
}

}  // namespace
}  // namespace fl::bench
