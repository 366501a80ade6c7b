// SPDX-License-Identifier: GPL-2.0-only
// kernels diff's comparison: the documented eager/lazy differences are
// named, everything else is a difference.
#include <gtest/gtest.h>

#include <cerrno>

#include "check/program_text.h"
#include "eager_lazy.h"

namespace fl::kernels {
namespace {

Program program(const std::string &text)
{
	ParseResult r = parse_program(text);
	EXPECT_TRUE(r.program) << r.error.str();
	return *r.program;
}

const char kDontneed[] = "map value_size=8 max_entries=1024\n"
			 "mmap A len=1p prot=rw\n"
			 "madvise A len=1p advice=dontneed\n"
			 "load A\n"
			 "smaps A\n"
			 "store A val=1\n"
			 "lookup idx=0\n";

Trace stock_dontneed()
{
	Trace t;
	t.events = {Event{}, Event{}, Event{0, 7, {}, ""}, Event{0, 0, {}, "VmFlags: rd wr sh mr mw me ms de dd mm | Rss: 0p"},
		    Event{0, 7, {}, ""}, Event{0, 0, std::vector<uint8_t>(8, 0), ""}};
	return t;
}

Trace lazy_dontneed()
{
	Trace t;
	t.events = {Event{}, Event{}, Event{0, 0, std::vector<uint8_t>(8, 0), ""},
		    Event{0, 0, {}, "VmFlags: rd wr sh mr mw me ms de dd | Rss: 1p"}, Event{}, Event{0, 0, {1, 0, 0, 0, 0, 0, 0, 0}, ""}};
	return t;
}

TEST(KernelsDiff, IdenticalTracesAgreeWithoutNames)
{
	Program p = program(kDontneed);
	KernelDiff d = diff_kernels(p, stock_dontneed(), stock_dontneed());
	EXPECT_TRUE(d.agree);
	EXPECT_FALSE(d.stopped);
	EXPECT_TRUE(d.named.empty());
}

TEST(KernelsDiff, DontneedRefaultAndSmapsAreNamedAndAStoreThatLandedStops)
{
	Program p = program(kDontneed);
	KernelDiff d = diff_kernels(p, stock_dontneed(), lazy_dontneed());
	EXPECT_TRUE(d.agree);
	EXPECT_TRUE(d.stopped);
	EXPECT_EQ(d.op, 4u);  // the store: the data differ from here (the lookup is not compared)
	std::vector<std::pair<size_t, Difference>> want = {{2, Difference::dontneed_refault},
							   {3, Difference::vm_mixedmap},
							   {3, Difference::populate_timing},
							   {4, Difference::dontneed_refault}};
	EXPECT_EQ(d.named, want);
}

// madvise over a range with a hole returns -ENOMEM after advising every VMA
// in it: the zap happened, so the stock kernel's SIGBUS on refault is the same
// documented difference (random seed=7 i=750 of `kernels diff`, v2 x86_64).
TEST(KernelsDiff, ADontneedAcrossAHoleStillZaps)
{
	Program p = program(kDontneed);
	Trace stock = stock_dontneed(), lazy = lazy_dontneed();
	stock.events[1].ret = lazy.events[1].ret = -ENOMEM;
	KernelDiff d = diff_kernels(p, stock, lazy);
	EXPECT_TRUE(d.agree);
	EXPECT_EQ(d.named.front(), std::make_pair(size_t(2), Difference::dontneed_refault));
	lazy.events[1].ret = 0;  // the kernels disagree on the madvise itself: a difference
	EXPECT_FALSE(diff_kernels(p, stock, lazy).agree);
}

TEST(KernelsDiff, ASigbusWithoutAnEarlierDontneedIsADifference)
{
	Program p = program("map value_size=8 max_entries=1024\nmmap A len=1p prot=rw\nload A\n");
	Trace stock, lazy;
	stock.events = {Event{}, Event{0, 7, {}, ""}};
	lazy.events = {Event{}, Event{0, 0, std::vector<uint8_t>(8, 0), ""}};
	KernelDiff d = diff_kernels(p, stock, lazy);
	EXPECT_FALSE(d.agree);
	EXPECT_EQ(d.op, 1u);
	// ... and the other way round (the patched kernel SIGBUSes) never is one.
	Program q = program(kDontneed);
	d = diff_kernels(q, lazy_dontneed(), stock_dontneed());
	EXPECT_FALSE(d.agree);
	EXPECT_EQ(d.op, 2u);
}

TEST(KernelsDiff, OtherSmapsFlagsAReturnValueOrTheMapAreDifferences)
{
	Program p = program(kDontneed);
	Trace lazy = lazy_dontneed();
	lazy.events[3].info = "VmFlags: rd sh mr mw me ms de dd | Rss: 1p";  // lost "wr"
	KernelDiff d = diff_kernels(p, stock_dontneed(), lazy);
	EXPECT_FALSE(d.agree);
	EXPECT_EQ(d.op, 3u);

	Trace other = stock_dontneed();
	other.events[1].ret = -22;
	d = diff_kernels(p, stock_dontneed(), other);
	EXPECT_FALSE(d.agree);
	EXPECT_EQ(d.op, 1u);

	other = stock_dontneed();
	other.map_ret = -12;
	d = diff_kernels(p, stock_dontneed(), other);
	EXPECT_FALSE(d.agree);
	EXPECT_EQ(d.op, KernelDiff::kMapCreate);
}

}  // namespace
}  // namespace fl::kernels
