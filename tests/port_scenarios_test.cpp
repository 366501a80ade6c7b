// SPDX-License-Identifier: GPL-2.0-only
// Whole scenarios as Programs, run by the differential runner against the
// eager (pre) kernel in lockstep: the v1 32-bit overflow (docs/arraymap.md#the-lazy-levels, docs/mmap.md#do_mmap,
// docs/invariants.md#what-the-port-must-keep), the documented lazy/eager differences (docs/differences.md#eager-and-lazy) and a long
// lifecycle that must be clean on every configuration.
#include "port_helpers.h"

#include <algorithm>

namespace fl::port {
namespace {

bool saw(const RunReport &r, Difference d, size_t op)
{
	return std::any_of(r.expected_differences.begin(), r.expected_differences.end(),
			   [&](const SeenDifference &s) { return s.what == d && s.op == op; });
}

bool saw_any(const RunReport &r, Difference d)
{
	return std::any_of(r.expected_differences.begin(), r.expected_differences.end(),
			   [&](const SeenDifference &s) { return s.what == d; });
}

// The first expectation of the program that matches `c` ("ok" if none).
Verdict expected(const Program &p, const Config &c)
{
	for (const Expectation &e : p.expects) {
		if (!e.when.matches(c))
			continue;
		Verdict v;
		if (e.violation != Invariant::none) {
			v.kind = Verdict::violation;
			v.invariant = e.violation;
		} else if (e.difference) {
			v.kind = Verdict::difference;
		}
		return v;
	}
	return Verdict{};
}

const char kV1Overflow[] = R"(
# v1: vm_pgoff * PAGE_SIZE + len wraps in a 32-bit unsigned long
map value_size=8 max_entries=1024
mmap A len=1p pgoff=0xfffff prot=r
load A+0xff0
expect violation foreign_page if patch=v1 arch=32 door=regular,direct page=4k
)";

// docs/invariants.md#what-the-port-must-keep: on v1 with 32-bit unsigned long, through the regular and direct
// doors, the lazy mapping hands out the bpf_array header page. Everything
// else refuses the mmap: -EOVERFLOW (anon door, 32-bit) or -EINVAL.
TEST(PortScenario, V1OverflowIsForeignPageOnlyOnV1Arch32)
{
	Program p = program(kV1Overflow);
	ASSERT_EQ(p.ops.size(), 2u);
	ConfigFilter f;
	f.page_shifts = {12};
	for (const Config &c : f.expand()) {
		SCOPED_TRACE(c.name());
		RunReport r = run_differential(p, c);
		ASSERT_EQ(r.trace.events.size(), 2u);
		const bool hit = c.patch == Patch::v1 && c.arch == Arch::A32 && c.door != Door::anon;
		if (hit) {
			EXPECT_EQ(r.verdict.kind, Verdict::violation) << r.verdict.str();
			EXPECT_EQ(r.verdict.invariant, Invariant::foreign_page) << r.verdict.str();
			EXPECT_EQ(r.verdict.op, 1u);
			EXPECT_EQ(r.verdict.config, c);
			EXPECT_EQ(r.trace.events[0].ret, 0);
			EXPECT_EQ(r.trace.events[1].sig, 0);
			EXPECT_EQ(r.trace.events[1].data.size(), 8u);
		} else {
			EXPECT_EQ(r.verdict.kind, Verdict::ok) << r.verdict.str();
			int64_t want = c.arch == Arch::A32 && c.door == Door::anon ? -EOVERFLOW : -EINVAL;
			EXPECT_EQ(r.trace.events[0].ret, want);
		}
		EXPECT_EQ(r.verdict, expected(p, c));
	}
}

// docs/vma.md#fork: after MADV_DONTNEED the eager side SIGBUSes and the lazy side
// reads its data: the runner names the difference dontneed_refault, replays
// the lazy store into the eager kernel view, and the rest stays identical.
TEST(PortScenario, DontneedRefaultIsNamed)
{
	Program p = program(R"(
map value_size=8 max_entries=16384
mmap A len=2p prot=rw
store A+8 val=0x1122
madvise A len=2p advice=dontneed
load A+8
store A+1p val=5
lookup idx=1
load A+1p
)");
	ASSERT_EQ(p.ops.size(), 7u);
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		RunReport r = run_differential(p, c);
		EXPECT_EQ(r.verdict.kind, Verdict::ok) << r.verdict.str();
		ASSERT_EQ(r.trace.events.size(), 7u);
		if (!is_lazy(c.patch)) {
			EXPECT_EQ(r.trace.events[3].sig, uapi::sigbus);
			EXPECT_EQ(r.trace.events[4].sig, uapi::sigbus);
			EXPECT_TRUE(r.expected_differences.empty());
			continue;
		}
		EXPECT_EQ(r.trace.events[3].sig, 0);
		EXPECT_EQ(le_value(r.trace.events[3].data), 0x1122u);
		EXPECT_EQ(r.trace.events[4].sig, 0);
		ASSERT_TRUE(r.reference.has_value());
		EXPECT_EQ(r.reference->events[3].sig, uapi::sigbus);
		EXPECT_TRUE(saw(r, Difference::dontneed_refault, 3));
		EXPECT_TRUE(saw(r, Difference::dontneed_refault, 4));
		// the lookup saw the store on both sides (element 1 is at byte 8)
		EXPECT_EQ(le_value(r.trace.events[5].data), 0x1122u);
		EXPECT_EQ(r.trace.events[5], r.reference->events[5]);
	}
}

// docs/differences.md#eager-and-lazy: smaps of a fresh lazy mapping lacks "mm" (VM_MIXEDMAP)
// and has Rss 0; MAP_POPULATE closes the Rss gap but not the flag one;
// a forked lazy child again has Rss 0.
TEST(PortScenario, SmapsDifferencesAreNamed)
{
	Program p = program(R"(
map value_size=8 max_entries=65536
mmap A len=4p prot=rw
smaps A
mmap B len=4p prot=r flags=shared,populate
smaps B
fork
smaps B proc=1
load B+8 proc=1
)");
	ASSERT_EQ(p.ops.size(), 7u);
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		RunReport r = run_differential(p, c);
		EXPECT_EQ(r.verdict.kind, Verdict::ok) << r.verdict.str();
		if (!is_lazy(c.patch)) {
			EXPECT_TRUE(r.expected_differences.empty());
			EXPECT_NE(r.trace.events[1].info.find(" mm"), std::string::npos) << r.trace.events[1].info;
			continue;
		}
		EXPECT_EQ(r.trace.events[1].info.find(" mm"), std::string::npos) << r.trace.events[1].info;
		EXPECT_NE(r.trace.events[1].info.find("Rss: 0p"), std::string::npos) << r.trace.events[1].info;
		EXPECT_TRUE(saw(r, Difference::vm_mixedmap, 1));
		EXPECT_TRUE(saw(r, Difference::populate_timing, 1));
		EXPECT_TRUE(saw(r, Difference::vm_mixedmap, 3));
		EXPECT_FALSE(saw(r, Difference::populate_timing, 3));  // populated: same Rss
		EXPECT_NE(r.trace.events[3].info.find("Rss: 4p"), std::string::npos) << r.trace.events[3].info;
		EXPECT_TRUE(saw(r, Difference::populate_timing, 5));    // the child has no PTEs
		EXPECT_FALSE(saw_any(r, Difference::dontneed_refault));
	}
}

// A long lifecycle on every configuration: data flows both ways, splits,
// fork, mremap, freeze and close behave alike on the eager and the lazy
// kernels, and no invariant breaks.
const char kLifecycle[] = R"(
map value_size=8 max_entries=65536
mmap A len=4p prot=rw
store A+8 val=0x1122334455667788
lookup idx=1
update idx=3 val=42
load A+24
madvise A+1p len=1p advice=dontneed
load A+1p
freeze
munmap A+1p len=1p
mprotect A+2p len=1p prot=r
store A+2p val=1
mmap B len=4p pgoff=2 prot=r
fork
load B+8 proc=1
store A+3p val=0x99 proc=1
load A+3p
reserve R len=8p
mremap B len=4p new_len=4p flags=maymove,fixed to=R+2p as=C
load C+8
mremap C len=4p new_len=5p
mremap C len=4p new_len=2p
munmap A len=4p
freeze
exit proc=1
freeze
freeze
mmap D len=1p prot=rw
mmap E len=1p prot=r
update idx=0 val=1
close
load C+8
load E
)";

TEST(PortScenario, LifecycleIsCleanEverywhere)
{
	Program p = program(kLifecycle);
	ASSERT_EQ(p.ops.size(), 32u);
	for (const Config &c : ConfigFilter{}.expand()) {
		SCOPED_TRACE(c.name());
		RunReport r = run_differential(p, c);
		EXPECT_EQ(r.verdict.kind, Verdict::ok) << r.verdict.str() << " " << r.verdict.detail;
		const std::vector<Event> &e = r.trace.events;
		ASSERT_EQ(e.size(), 32u);
		EXPECT_EQ(r.trace.map_ret, 0);
		EXPECT_EQ(e[0].ret, 0);                                   // mmap A
		EXPECT_EQ(le_value(e[2].data), 0x1122334455667788u);      // lookup idx=1
		EXPECT_EQ(le_value(e[4].data), 42u);                      // load A+24
		EXPECT_EQ(e[6].sig, is_lazy(c.patch) ? 0 : uapi::sigbus); // after DONTNEED
		EXPECT_EQ(e[7].ret, -EBUSY);                              // freeze, A writable
		EXPECT_EQ(e[10].sig, uapi::sigsegv);                      // store to read-only piece
		EXPECT_EQ(e[12].ret, 1);                                  // fork
		EXPECT_EQ(e[13].sig, 0);                                  // child reads B
		EXPECT_EQ(e[14].sig, 0);                                  // child writes A
		EXPECT_EQ(le_value(e[15].data), 0x99u);                   // ... and the parent sees it
		EXPECT_EQ(e[17].ret, 0);                                  // mremap move
		EXPECT_EQ(e[18].sig, 0);
		EXPECT_EQ(e[19].ret, -EFAULT);                            // grow
		EXPECT_EQ(e[20].ret, 0);                                  // shrink
		EXPECT_EQ(e[22].ret, -EBUSY);                             // the child's pieces
		EXPECT_EQ(e[24].ret, 0);                                  // freeze
		EXPECT_EQ(e[25].ret, -EPERM);                             // frozen twice
		EXPECT_EQ(e[26].ret, -EPERM);                             // writable after freeze
		EXPECT_EQ(e[27].ret, 0);                                  // read-only after freeze
		EXPECT_EQ(e[28].ret, -EPERM);                             // update after freeze
		EXPECT_EQ(e[30].sig, 0);                                  // the mapping outlives the fd
		EXPECT_EQ(e[31].sig, 0);
		if (c.patch == Patch::pre) {
			EXPECT_TRUE(r.expected_differences.empty());
		} else {
			EXPECT_TRUE(saw(r, Difference::dontneed_refault, 6));
		}
	}
}

}  // namespace
}  // namespace fl::port
