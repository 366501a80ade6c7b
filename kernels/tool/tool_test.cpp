// SPDX-License-Identifier: GPL-2.0-only
// The host side of the guest protocol: console framing and config names.
#include <gtest/gtest.h>

#include <cerrno>

#include "check/trace_text.h"
#include "console.h"
#include "guest_differences.h"
#include "guest_config.h"
#include "stock_look.h"

namespace fl::kernels {
namespace {

Trace sample()
{
	Trace t;
	t.events.push_back(Event{0, 0, {}, ""});
	t.events.push_back(Event{-22, 0, {}, ""});
	t.events.push_back(Event{0, 7, {}, ""});
	t.events.push_back(Event{8, 0, {1, 2, 3, 4, 5, 6, 7, 8}, ""});
	return t;
}

TEST(Console, FramesSurviveKernelNoiseEscapesAndCarriageReturns)
{
	std::string text = "\x1b" "c\x1b[?7l@@ start\r\n[    0.5] random: crng init done\r\n"
			   "@@ begin b-00000.fl\r\n" +
			   write_trace(sample()) +
			   "@@ end b-00000.fl\n"
			   "@@ begin m-00001.fl\nunsupported: the op reaches outside the region\n@@ end m-00001.fl\n"
			   "@@ done 2\n";
	Console c = parse_console(text);
	EXPECT_TRUE(c.done);
	ASSERT_EQ(c.results.size(), 2u);
	ASSERT_TRUE(c.results["b-00000.fl"].trace.has_value());
	EXPECT_EQ(*c.results["b-00000.fl"].trace, sample());
	EXPECT_FALSE(c.results["m-00001.fl"].trace.has_value());
	EXPECT_EQ(c.results["m-00001.fl"].note, "unsupported: the op reaches outside the region");
}

TEST(Console, AReproducersExitStatusIsKeptBesideItsTrace)
{
	std::string text = "@@ begin b-00000.repro\n" + write_trace(sample()) + "@@ exit 1\n@@ end b-00000.repro\n" +
			   "@@ begin b-00000.fl\n" + write_trace(sample()) + "@@ end b-00000.fl\n";
	Console c = parse_console(text);
	ASSERT_TRUE(c.results["b-00000.repro"].trace.has_value());
	EXPECT_EQ(*c.results["b-00000.repro"].trace, sample());
	EXPECT_EQ(c.results["b-00000.repro"].exit, 1);
	EXPECT_FALSE(c.results["b-00000.fl"].exit.has_value());
}

TEST(Console, AnUnfinishedRunHasNoResultForTheCutProgram)
{
	std::string text = "@@ begin b-00000.fl\n" + write_trace(sample()) + "@@ end b-00000.fl\n@@ begin b-00001.fl\ntrace ";
	Console c = parse_console(text);
	EXPECT_FALSE(c.done);
	EXPECT_EQ(c.results.count("b-00000.fl"), 1u);
	EXPECT_EQ(c.results.count("b-00001.fl"), 0u);
}

TEST(GuestConfig, NamesRoundTripAndBadNamesAreRefused)
{
	Config c{Arch::A32, Patch::v1, 12, Door::anon, false};
	ASSERT_TRUE(parse_config_name(c.name()).has_value());
	EXPECT_EQ(*parse_config_name(c.name()), c);
	EXPECT_FALSE(parse_config_name("v2/arch32/4k/anon").has_value());
	EXPECT_FALSE(parse_config_name("v9/arch32/4k/anon/mask").has_value());
	EXPECT_FALSE(parse_config_name("v2/32/4k/anon/mask").has_value());
}

constexpr GuestKernel k61{6, 1}, k612{6, 12};

TEST(GuestConfig, TheGuestIsFourKAnonAndRootBypassesUnlessTheProgramPins)
{
	Program p;
	auto c = guest_config(p, Arch::A64, Patch::v2, k612);
	ASSERT_TRUE(c.has_value());
	EXPECT_EQ(c->name(), "v2/arch64/4k/anon/bypass");
	p.header.bypass_spec_v1 = false;
	EXPECT_EQ(guest_config(p, Arch::A64, Patch::v2, k612)->name(), "v2/arch64/4k/anon/mask");
	p.header.door = Door::direct;
	EXPECT_FALSE(guest_config(p, Arch::A64, Patch::v2, k612).has_value());
	p.header.door.reset();
	p.header.arch = Arch::A64;
	EXPECT_FALSE(guest_config(p, Arch::A32, Patch::pre, k612).has_value());
	p.header.arch.reset();
	p.map.map_type = uapi::BPF_MAP_TYPE_ARENA;  // 6.9+, and 64-bit only
	EXPECT_TRUE(guest_config(p, Arch::A64, Patch::pre, k612).has_value());
	EXPECT_FALSE(guest_config(p, Arch::A32, Patch::pre, k612).has_value());
	EXPECT_FALSE(guest_config(p, Arch::A64, Patch::pre, k61).has_value());
}

TEST(GuestKernel, ReleasesParseFromTheOptionTheVersionAndTheRecordedLine)
{
	EXPECT_EQ(parse_guest_kernel("6.12"), k612);
	EXPECT_EQ(parse_guest_kernel("6.12.117-1~deb12u1"), k612);
	EXPECT_EQ(parse_guest_kernel("linux-source-6.1 6.1.192-3 x86_64, tree stock-7b72bc63"), k61);
	EXPECT_FALSE(parse_guest_kernel("linux-source").has_value());
	EXPECT_FALSE(parse_guest_kernel("").has_value());
	EXPECT_LT(k61, k612);
	EXPECT_EQ(to_string(k612), "6.12");
}

Event ret(int64_t r) { return Event{r, 0, {}, ""}; }

TEST(StockLook, APatchedKernelWhoseEveryMappingIsMixedLooksStock)
{
	Config v2, pre;
	v2.patch = Patch::v2;
	Trace eager, lazy;
	eager.events.push_back(Event{0, 0, {}, "VmFlags: rd wr sh mr mw ms mm de dd | Rss: 4p"});
	lazy.events.push_back(Event{0, 0, {}, "VmFlags: rd sh mr ms de dd | Rss: 1p"});
	StockLook stale;
	stale.add(v2, eager), stale.add(v2, eager);
	EXPECT_TRUE(stale.looks_stock());
	StockLook fine;
	fine.add(v2, eager), fine.add(v2, lazy);
	EXPECT_FALSE(fine.looks_stock());
	StockLook stock;
	stock.add(pre, eager);
	EXPECT_FALSE(stock.looks_stock());
	EXPECT_FALSE(StockLook{}.looks_stock());
}

TEST(GuestDifferences, EachMatchesOnlyItsOwnShape)
{
	Program p;
	Config c64{Arch::A64, Patch::v2, 12, Door::anon, true}, c32 = c64;
	c32.arch = Arch::A32;
	Op freeze{OpKind::freeze};
	ASSERT_NE(classify_guest(k61, p, c64, freeze, ret(-EBUSY), ret(-EPERM)), nullptr);
	EXPECT_STREQ(classify_guest(k61, p, c64, freeze, ret(-EBUSY), ret(-EPERM))->name, "freeze_perm");
	EXPECT_EQ(classify_guest(k61, p, c64, freeze, ret(0), ret(-EPERM)), nullptr);  // only a read-only fd succeeds
	p.map.map_flags |= uapi::BPF_F_RDONLY;
	EXPECT_NE(classify_guest(k61, p, c64, freeze, ret(0), ret(-EPERM)), nullptr);
	EXPECT_EQ(classify_guest(k61, p, c64, freeze, ret(-EPERM), ret(0)), nullptr);  // the other way round is a bug

	Op mmap{OpKind::mmap};
	mmap.prot = 4;  // PROT_EXEC
	EXPECT_STREQ(classify_guest(k61, p, c64, mmap, ret(0), ret(-EPERM))->name, "anon_noexec");
	mmap.prot = 1;
	EXPECT_EQ(classify_guest(k61, p, c64, mmap, ret(0), ret(-EPERM)), nullptr);

	Op big{OpKind::mmap};
	big.len.value = 0xb0000000;
	EXPECT_STREQ(classify_guest(k61, p, c32, big, ret(-ENOMEM), ret(-EINVAL))->name, "no_gap");
	EXPECT_EQ(classify_guest(k61, p, c64, big, ret(-ENOMEM), ret(-EINVAL)), nullptr);  // 64-bit always has the gap
	big.len.value = 0x1000000;
	EXPECT_EQ(classify_guest(k61, p, c32, big, ret(-ENOMEM), ret(-EINVAL)), nullptr);

	Op mremap{OpKind::mremap};
	EXPECT_STREQ(classify_guest(k61, p, c64, mremap, ret(-EFAULT), ret(-EINVAL))->name, "mremap_check_order");
	EXPECT_EQ(classify_guest(k61, p, c64, mremap, ret(0), ret(-ENOMEM)), nullptr);
}

TEST(GuestDifferences, EachAppliesOnlyToTheReleasesBeforeItsFix)
{
	Program p;
	p.map.map_flags |= uapi::BPF_F_RDONLY;
	Config c64{Arch::A64, Patch::v2, 12, Door::anon, true};
	Op freeze{OpKind::freeze}, exec{OpKind::mmap}, mremap{OpKind::mremap};
	exec.prot = 4;  // PROT_EXEC
	EXPECT_EQ(classify_guest(k612, p, c64, freeze, ret(0), ret(-EPERM)), nullptr);  // 6.12 checks FMODE_CAN_WRITE
	EXPECT_STREQ(classify_guest(k612, p, c64, exec, ret(0), ret(-EPERM))->name, "anon_noexec");  // 6.15
	EXPECT_STREQ(classify_guest(k612, p, c64, mremap, ret(-EFAULT), ret(-EINVAL))->name, "mremap_check_order");
	EXPECT_EQ(classify_guest(GuestKernel{6, 17}, p, c64, mremap, ret(-EFAULT), ret(-EINVAL)), nullptr);
	for (const GuestDifference *d : guest_differences())
		EXPECT_TRUE(d->gone_in.major == 0 || k61 < d->gone_in) << d->name;  // each one was seen on 6.1
}

// What earlier_guest blames (on guest kernel k) for a difference seen at op `upto` of a Program whose
// op 1 is `op`, refused by the port with `r` (nullptr: nothing).
const char *explained_by(const Op &op, int64_t r, size_t upto = 2, GuestKernel k = k61)
{
	Program p;
	p.ops = {Op{}, op, Op{}};
	Trace port;
	port.events = {ret(0), ret(r), ret(0)};
	size_t at = 99;
	const GuestDifference *d = earlier_guest(k, p, port, upto, &at);
	if (d) {
		EXPECT_EQ(at, 1u);
	}
	return d ? d->name : nullptr;
}

TEST(GuestDifferences, AnEarlierRefusedExecMappingExplainsALaterDifference)
{
	Op exec{OpKind::mmap};
	exec.prot = 7;  // rwx
	EXPECT_STREQ(explained_by(exec, -EPERM), "anon_noexec");
	EXPECT_EQ(explained_by(exec, -EPERM, 1), nullptr);  // only ops before the difference count
	EXPECT_EQ(explained_by(exec, -EINVAL), nullptr);
}

TEST(GuestDifferences, ARefusedFixedMmapExplainsALaterDifference)
{
	Op fixed{OpKind::mmap};
	fixed.has_at = true;
	fixed.flags = uapi::MAP_SHARED | uapi::MAP_FIXED;
	EXPECT_STREQ(explained_by(fixed, -EINVAL), "mmap_fixed_unmaps_first");
	EXPECT_EQ(explained_by(fixed, -EINVAL, 2, k612), nullptr);  // 6.12 puts the old VMAs back
	fixed.flags = uapi::MAP_SHARED;  // not MAP_FIXED: nothing was replaced
	EXPECT_EQ(explained_by(fixed, -EINVAL), nullptr);
}

TEST(GuestDifferences, AFailedFixedMoveExplainsALaterDifference)
{
	Op move{OpKind::mremap};
	move.flags = uapi::MREMAP_MAYMOVE | uapi::MREMAP_FIXED;
	EXPECT_STREQ(explained_by(move, -EFAULT), "mremap_fixed_unmaps_first");
	EXPECT_EQ(explained_by(move, -EINVAL), nullptr);  // refused before 6.1 unmaps anything
	move.flags = uapi::MREMAP_MAYMOVE;                 // no target to lose
	EXPECT_EQ(explained_by(move, -EFAULT), nullptr);
}

}  // namespace
}  // namespace fl::kernels
