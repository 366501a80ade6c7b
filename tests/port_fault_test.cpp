// SPDX-License-Identifier: GPL-2.0-only
// The lazy fault path (docs/arraymap.md#the-lazy-levels, docs/fault.md#fault-dispatch, docs/fault.md#finish_fault, docs/mmap.md#do_mmap, docs/mmap.md#map_populate, docs/fault.md#fault-around, docs/vma.md#fork): no PTE at mmap, the fault
// handler's page equals the eager page, one reference per PTE (also on a
// lost race), the per-VMA lock retry, MAP_POPULATE with read faults, v3's
// fault-around window, MADV_DONTNEED and fork.
#include "port_helpers.h"

namespace fl::port {
namespace {

using namespace uapi;

constexpr uint64_t kHint = 0x10000000;  // 256 MiB: aligned to any PTE table

uint64_t fault_around_pages(const Config &c) { return 65536 >> c.page_shift; }

struct Range {
	int pid;
	uint64_t addr, npages;
};

// docs/fault.md#finish_fault, docs/invariants.md#refcounts: every data page's refcount is the allocator's
// reference plus one per PTE that maps it, counted over `ranges`.
void expect_refcounts(Machine &m, const std::vector<Range> &ranges, uint64_t data_pages)
{
	for (uint64_t i = 0; i < data_pages; i++) {
		int ptes = 0;
		for (const Range &r : ranges)
			for (uint64_t k = 0; k < r.npages; k++)
				if (m.user_page_id(r.pid, r.addr + k * m.page_size()) == m.map_data_page_id(i))
					ptes++;
		EXPECT_EQ(m.page_refcount_of_map_page(i), 1 + ptes) << "data page " << i;
	}
}

// docs/arraymap.md#array_map_mmap-pre vs docs/arraymap.md#the-lazy-levels: the eager mmap inserts every PTE; the lazy one none.
TEST(PortFault, LazyMmapInstallsNoPte)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 8));
		Stats before = m->stats();
		int64_t a = map_pages(*m, 6, 1, RW);
		ASSERT_GE(a, 0);
		uint64_t installed = m->stats().ptes_installed - before.ptes_installed;
		EXPECT_EQ(m->stats().faults, before.faults);
		if (is_lazy(c.patch)) {
			EXPECT_EQ(rss(*m, a), 0u);
			EXPECT_EQ(installed, 0u);
			for (uint64_t k = 0; k < 6; k++)
				EXPECT_EQ(m->user_page_id(0, a + k * m->page_size()), -1) << k;
		} else {
			EXPECT_EQ(rss(*m, a), 6u);
			EXPECT_EQ(installed, 6u);
		}
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/arraymap.md#the-lazy-levels, docs/fault.md#fault-dispatch, docs/invariants.md#page-choice: for every address, the page the fault
// handler returns is the page remap_vmalloc_range would have mapped:
// data page vm_pgoff + (addr - vm_start) / PAGE_SIZE.
TEST(PortFault, FaultPageEqualsEagerPage)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		const uint64_t n = 8;
		auto m = machine_with_map(c, page_elems(c, uint32_t(n)));
		for (uint64_t pgoff : {uint64_t(0), uint64_t(1), n / 2, n - 1}) {
			SCOPED_TRACE(pgoff);
			int64_t a = map_pages(*m, n - pgoff, pgoff, pgoff % 2 ? R : RW);
			ASSERT_GE(a, 0);
			expect_eager_pages(*m, a, n - pgoff, pgoff);
		}
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// A store through a lazy write fault lands in the eager page too.
TEST(PortFault, WriteFaultPageEqualsEagerPage)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 3, 1, RW);
		ASSERT_GE(a, 0);
		for (uint64_t k = 0; k < 3; k++) {
			ASSERT_EQ(store64(*m, a + k * ps + 16, 0x100 + k), 0);
			EXPECT_EQ(m->user_page_id(0, a + k * ps), m->map_data_page_id(1 + k));
			std::vector<uint8_t> v;
			ASSERT_EQ(m->map_lookup(uint32_t(1 + k), &v), 0);
			EXPECT_EQ(le_value(std::vector<uint8_t>(v.begin() + 16, v.begin() + 24)), 0x100 + k);
		}
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/fault.md#finish_fault: one reference per installed PTE, dropped again by the zap.
TEST(PortFault, RefcountIsOnePlusPtes)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 4, 0, RW);
		int64_t b = map_pages(*m, 3, 1, R);
		ASSERT_GE(a, 0);
		ASSERT_GE(b, 0);
		std::vector<Range> ranges = {{0, uint64_t(a), 4}, {0, uint64_t(b), 3}};
		expect_refcounts(*m, ranges, 4);
		if (!is_lazy(c.patch)) {
			EXPECT_EQ(m->page_refcount_of_map_page(0), 2);
			EXPECT_EQ(m->page_refcount_of_map_page(2), 3);
		} else {
			EXPECT_EQ(m->page_refcount_of_map_page(2), 1);
		}
		ASSERT_EQ(load64(*m, a + 2 * ps), 0u);
		ASSERT_EQ(load64(*m, b + ps), 0u);  // data page 2 again
		EXPECT_EQ(m->page_refcount_of_map_page(2), 3);
		ASSERT_EQ(store64(*m, a + 3 * ps, 9), 0);
		expect_refcounts(*m, ranges, 4);
		EXPECT_TRUE(invariants_hold(*m));

		ASSERT_EQ(m->munmap(0, a, 4 * ps), 0);
		EXPECT_EQ(m->page_refcount_of_map_page(2), 2);
		ASSERT_EQ(m->munmap(0, b, 3 * ps), 0);
		for (uint64_t i = 0; i < 4; i++)
			EXPECT_EQ(m->page_refcount_of_map_page(i), 1) << i;
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// The lost race in finish_fault (docs/fault.md#finish_fault) is a schedule now: see
// tests/interleave_test.cpp (FinishFaultLostRace*).

// docs/fault.md#fault-dispatch: a ->fault-only vm_ops (v1, v2) is retried under mmap_lock
// (VM_FAULT_RETRY from vmf_can_call_fault); with ->map_pages (v3) the
// fault runs under the per-VMA lock. The eager mapping never faults.
TEST(PortFault, PerVmaLockRetry)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		int64_t a = map_pages(*m, 4, 0, RW);
		ASSERT_GE(a, 0);
		const bool retries = c.patch == Patch::v1 || c.patch == Patch::v2;

		Stats s0 = m->stats();
		ASSERT_EQ(load64(*m, a), 0u);  // read fault
		Stats s1 = m->stats();
		EXPECT_EQ(s1.vma_lock_retries - s0.vma_lock_retries, retries ? 1u : 0u);
		if (!is_lazy(c.patch)) {
			EXPECT_EQ(s1.faults, s0.faults);
		} else {
			EXPECT_EQ(s1.faults - s0.faults, retries ? 2u : 1u);
		}

		// a write fault, on a second mapping whose page nothing has touched
		int64_t b = map_pages(*m, 1, 3, RW);
		ASSERT_GE(b, 0);
		ASSERT_EQ(store64(*m, b, 1), 0);
		Stats s2 = m->stats();
		EXPECT_EQ(s2.vma_lock_retries - s1.vma_lock_retries, retries ? 1u : 0u);
		if (!is_lazy(c.patch))
			EXPECT_EQ(s2.faults, s1.faults);
		else
			EXPECT_EQ(s2.faults - s1.faults, retries ? 2u : 1u);

		// a second access to a present page does not fault
		ASSERT_EQ(load64(*m, b), 1u);
		ASSERT_EQ(load64(*m, a), 0u);
		EXPECT_EQ(m->stats().faults, s2.faults);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/mmap.md#map_populate: MAP_POPULATE walks the range with read faults. v1/v2 take one
// fault per page; v3 faults around (16 pages at 4K, 4 at 16K) and at 64K
// (fault_around_pages == 1) also takes one per page. The eager mapping
// is already fully present.
TEST(PortFault, PopulateFaultsInEveryPage)
{
	for (const Config &c : base_filter().expand()) {
		for (int prot : {RW, R}) {
			SCOPED_TRACE(c.name() + (prot == R ? " read-only" : " read-write"));
			const uint64_t n = 64;
			auto m = machine_with_map(c, page_elems(c, uint32_t(n)));
			Stats s0 = m->stats();
			int64_t a = map_pages(*m, n, 0, prot, SHARED | MAP_POPULATE, kHint);
			ASSERT_EQ(a, int64_t(kHint));
			Stats s1 = m->stats();
			EXPECT_EQ(rss(*m, a), n);
			EXPECT_EQ(s1.ptes_installed - s0.ptes_installed, n);
			EXPECT_EQ(s1.vma_lock_retries, s0.vma_lock_retries);  // GUP holds mmap_lock
			uint64_t faults = s1.faults - s0.faults;
			switch (c.patch) {
			case Patch::pre:
				EXPECT_EQ(faults, 0u);
				break;
			case Patch::v1:
			case Patch::v2:
				EXPECT_EQ(faults, n);
				EXPECT_EQ(s1.fault_handlers - s0.fault_handlers, n);
				break;
			case Patch::v3:
				EXPECT_EQ(faults, n / fault_around_pages(c));
				if (fault_around_pages(c) > 1) {
					EXPECT_EQ(s1.map_pages_calls - s0.map_pages_calls, n / fault_around_pages(c));
					EXPECT_EQ(s1.fault_handlers, s0.fault_handlers);
				} else {
					EXPECT_EQ(s1.map_pages_calls, s0.map_pages_calls);
					EXPECT_EQ(s1.fault_handlers - s0.fault_handlers, n);
				}
				break;
			}
			// everything is present now: loads take no fault, pages are right
			expect_eager_pages(*m, a, n, 0);
			EXPECT_EQ(m->stats().faults, s1.faults);
			// docs/fault.md#finish_fault: a read fault in a shared writable VMA installs a
			// writable PTE (no writenotify): later stores do not fault
			if (prot == RW) {
				for (uint64_t k = 0; k < n; k += 7)
					ASSERT_EQ(store64(*m, a + k * m->page_size(), k), 0);
				EXPECT_EQ(m->stats().faults, s1.faults);
			}
			expect_refcounts(*m, {{0, uint64_t(a), n}}, n);
			EXPECT_TRUE(invariants_hold(*m));
		}
	}
}

// A populated window at a page offset gets the eager pages too.
TEST(PortFault, PopulateAtOffset)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 16));
		int64_t a = map_pages(*m, 5, 11, R, SHARED | MAP_POPULATE);
		ASSERT_GE(a, 0);
		EXPECT_EQ(rss(*m, a), 5u);
		expect_eager_pages(*m, a, 5, 11);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

ConfigFilter v3_4k()
{
	ConfigFilter f = base_filter();
	f.patches = {Patch::v3};
	f.page_shifts = {12};
	return f;
}

uint64_t present_pages(Machine &m, uint64_t addr, uint64_t npages)
{
	uint64_t n = 0;
	for (uint64_t k = 0; k < npages; k++)
		n += m.user_page_id(0, addr + k * m.page_size()) >= 0;
	return n;
}

// docs/fault.md#fault-around: v3's fault-around window is clamped to the VMA.
TEST(PortFault, FaultAroundClampsToVma)
{
	for (const Config &c : v3_4k().expand()) {
		SCOPED_TRACE(c.name());
		const uint64_t ps = 4096;
		auto m = machine_with_map(c, page_elems(c, 64));

		int64_t small = map_pages(*m, 3, 0, R, SHARED, kHint);
		ASSERT_EQ(small, int64_t(kHint));
		Stats s0 = m->stats();
		ASSERT_EQ(load64(*m, small + ps), 0u);
		EXPECT_EQ(rss(*m, small), 3u);
		EXPECT_EQ(m->stats().ptes_installed - s0.ptes_installed, 3u);
		expect_eager_pages(*m, small, 3, 0);

		// a 64-page VMA: the window is the aligned 16 pages around the fault
		int64_t big = map_pages(*m, 64, 0, R, SHARED, kHint + 0x100000);
		ASSERT_EQ(big, int64_t(kHint + 0x100000));
		ASSERT_EQ(load64(*m, big + 20 * ps), 0u);
		EXPECT_EQ(rss(*m, big), 16u);
		EXPECT_EQ(present_pages(*m, big + 16 * ps, 16), 16u);
		EXPECT_EQ(m->user_page_id(0, big + 15 * ps), -1);
		EXPECT_EQ(m->user_page_id(0, big + 32 * ps), -1);
		ASSERT_EQ(load64(*m, big + 63 * ps), 0u);
		EXPECT_EQ(rss(*m, big), 32u);
		EXPECT_EQ(present_pages(*m, big + 48 * ps, 16), 16u);

		// a VMA that starts mid-block: the window starts at the VMA and
		// still spans fault_around_pages
		int64_t mid = map_pages(*m, 32, 0, R, SHARED, kHint + 0x200000 + 8 * ps);
		ASSERT_EQ(mid, int64_t(kHint + 0x200000 + 8 * ps));
		ASSERT_EQ(load64(*m, mid), 0u);
		EXPECT_EQ(rss(*m, mid), 16u);
		EXPECT_EQ(present_pages(*m, mid, 16), 16u);

		// and the window never reaches beyond the VMA's end
		int64_t tail = map_pages(*m, 20, 40, R, SHARED, kHint + 0x300000);
		ASSERT_EQ(tail, int64_t(kHint + 0x300000));
		ASSERT_EQ(load64(*m, tail + 19 * ps), 0u);
		EXPECT_EQ(rss(*m, tail), 4u);  // pages 16..19
		expect_eager_pages(*m, tail, 20, 40);

		// nor into a neighbouring piece of the same mapping after a split
		int64_t split = map_pages(*m, 16, 8, RW, SHARED, kHint + 0x400000);
		ASSERT_EQ(split, int64_t(kHint + 0x400000));
		ASSERT_EQ(m->mprotect(0, split + 6 * ps, ps, R), 0);  // [0..5] [6] [7..15]
		ASSERT_EQ(load64(*m, split), 0u);
		EXPECT_EQ(rss(*m, split), 6u);
		EXPECT_EQ(rss(*m, split + 6 * ps), 0u);
		EXPECT_EQ(rss(*m, split + 7 * ps), 0u);
		ASSERT_EQ(load64(*m, split + 15 * ps), 0u);
		EXPECT_EQ(rss(*m, split + 7 * ps), 9u);
		EXPECT_EQ(rss(*m, split + 6 * ps), 0u);
		expect_eager_pages(*m, split, 16, 8);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/fault.md#fault-around: the window is clamped to one PTE table: PTRS_PER_PTE is 512 on
// x86-64 (a 2 MiB table at 4K) and 1024 on i386 (4 MiB).
TEST(PortFault, FaultAroundClampsToPteTable)
{
	for (const Config &c : v3_4k().expand()) {
		SCOPED_TRACE(c.name());
		const uint64_t ps = 4096;
		const uint64_t table = c.arch == Arch::A64 ? 2ull << 20 : 4ull << 20;
		auto m = machine_with_map(c, page_elems(c, 64));

		// straddles a 2 MiB boundary (inside one i386 table)
		uint64_t at2m = kHint + (2ull << 20) - 8 * ps;
		int64_t a = map_pages(*m, 16, 0, R, SHARED, at2m);
		ASSERT_EQ(a, int64_t(at2m));
		ASSERT_EQ(load64(*m, a), 0u);
		EXPECT_EQ(rss(*m, a), table == (2ull << 20) ? 8u : 16u);
		ASSERT_EQ(load64(*m, a + 15 * ps), 0u);
		EXPECT_EQ(rss(*m, a), 16u);
		expect_eager_pages(*m, a, 16, 0);

		// straddles a table boundary on both
		uint64_t at4m = kHint + (8ull << 20) - 8 * ps;
		int64_t b = map_pages(*m, 16, 16, R, SHARED, at4m);
		ASSERT_EQ(b, int64_t(at4m));
		ASSERT_EQ(load64(*m, b + 8 * ps), 0u);
		EXPECT_EQ(rss(*m, b), 8u);
		EXPECT_EQ(present_pages(*m, b + 8 * ps, 8), 8u);
		expect_eager_pages(*m, b, 16, 16);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/fault.md#fault-dispatch, docs/vma.md#fork: after MADV_DONTNEED the eager mapping (no ->fault)
// SIGBUSes; the lazy one refaults the same page and the data is intact.
TEST(PortFault, DontneedThenAccess)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 4, 0, RW);
		ASSERT_GE(a, 0);
		ASSERT_EQ(m->map_update(0, le_bytes(0x1111), BPF_ANY), 0);
		ASSERT_EQ(store64(*m, a + ps + 8, 0x2222), 0);
		ASSERT_EQ(load64(*m, a + 3 * ps), 0u);

		ASSERT_EQ(m->madvise(0, a + ps, 3 * ps, MADV_DONTNEED), 0);
		EXPECT_EQ(present_pages(*m, a + ps, 3), 0u);
		// page 0 was not advised: still there
		EXPECT_EQ(load64(*m, a), 0x1111u);

		Access r = m->load(0, a + ps + 8, 8);
		Access w = m->store(0, a + 2 * ps, 8, 0x3333);
		if (is_lazy(c.patch)) {
			EXPECT_EQ(r.sig, 0);
			EXPECT_EQ(le_value(r.bytes), 0x2222u);
			EXPECT_EQ(w.sig, 0);
			EXPECT_EQ(m->user_page_id(0, a + ps), m->map_data_page_id(1));
		} else {
			EXPECT_EQ(r.sig, sigbus);
			EXPECT_EQ(w.sig, sigbus);
			EXPECT_EQ(m->user_page_id(0, a + ps), -1);
		}
		// the kernel's view is untouched either way
		std::vector<uint8_t> v;
		ASSERT_EQ(m->map_lookup(uint32_t(1), &v), 0);
		EXPECT_EQ(le_value(std::vector<uint8_t>(v.begin() + 8, v.begin() + 16)), 0x2222u);
		expect_refcounts(*m, {{0, uint64_t(a), 4}}, 4);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/vma.md#fork: the eager (VM_MIXEDMAP) VMA's PTEs are copied to the child;
// the lazy child has none until it touches the pages. Both see the same
// data, in both directions.
TEST(PortFault, ForkSharesData)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 4, 0, RW);
		ASSERT_GE(a, 0);
		ASSERT_EQ(store64(*m, a + 8, 0xaaaa), 0);
		ASSERT_EQ(store64(*m, a + 2 * ps, 0xbbbb), 0);
		uint64_t parent_rss = rss(*m, a);

		int64_t child = m->fork(0);
		ASSERT_GT(child, 0);
		const int cp = int(child);
		SmapsEntry cs = m->smaps(cp, a);
		ASSERT_TRUE(cs.found);
		EXPECT_EQ(cs.start, uint64_t(a));
		EXPECT_EQ(cs.pgoff, 0u);
		if (is_lazy(c.patch)) {
			EXPECT_EQ(cs.rss_pages, 0u);
		} else {
			EXPECT_EQ(parent_rss, 4u);
			EXPECT_EQ(cs.rss_pages, 4u);
		}
		EXPECT_EQ(rss(*m, a), parent_rss);  // the parent keeps its PTEs

		EXPECT_EQ(load64(*m, a + 8, cp), 0xaaaau);
		EXPECT_EQ(load64(*m, a + 2 * ps, cp), 0xbbbbu);
		if (is_lazy(c.patch)) {
			EXPECT_GE(rss(*m, a, cp), 2u);
		}
		ASSERT_EQ(store64(*m, a + 3 * ps + 16, 0xcccc, cp), 0);
		EXPECT_EQ(load64(*m, a + 3 * ps + 16), 0xccccu);
		std::vector<uint8_t> v;
		ASSERT_EQ(m->map_lookup(3, &v), 0);
		EXPECT_EQ(le_value(std::vector<uint8_t>(v.begin() + 16, v.begin() + 24)), 0xccccu);

		expect_eager_pages(*m, a, 4, 0, cp);
		expect_refcounts(*m, {{0, uint64_t(a), 4}, {cp, uint64_t(a), 4}}, 4);
		EXPECT_TRUE(invariants_hold(*m));
		ASSERT_EQ(m->exit(cp), 0);
		expect_refcounts(*m, {{0, uint64_t(a), 4}}, 4);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/vma.md#split-munmap-mprotect-mremap, docs/invariants.md#page-choice: linear_page_index is unchanged by split, move and
// fork, so every piece faults in the eager page for each address.
TEST(PortFault, PiecesMovesAndForksKeepTheirPages)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 12));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 10, 2, RW);  // data pages 2..11
		int64_t res = reserve(*m, 16);
		ASSERT_GE(a, 0);
		ASSERT_GE(res, 0);
		ASSERT_EQ(m->munmap(0, a + 2 * ps, ps), 0);        // [2,3] [5..11]
		ASSERT_EQ(m->mprotect(0, a + 5 * ps, ps, R), 0);   // [2,3] [5,6] [7] [8..11]
		int64_t moved = m->mremap(0, a + 7 * ps, 3 * ps, 3 * ps,
					  MREMAP_MAYMOVE | MREMAP_FIXED, res + 5 * ps);
		ASSERT_EQ(moved, res + 5 * int64_t(ps));            // [9..11] moved
		EXPECT_EQ(m->smaps(0, moved).pgoff, 9u);
		int64_t child = m->fork(0);
		ASSERT_GT(child, 0);

		for (int pid : {0, int(child)}) {
			SCOPED_TRACE(pid);
			expect_eager_pages(*m, a, 2, 2, pid);
			expect_eager_pages(*m, a + 3 * ps, 4, 5, pid);
			expect_eager_pages(*m, moved, 3, 9, pid);
			EXPECT_EQ(m->load(pid, a + 2 * ps, 1).sig, sigsegv);  // the hole
			EXPECT_EQ(m->load(pid, a + 7 * ps, 1).sig, sigsegv);  // moved away
		}
		expect_refcounts(*m,
				 {{0, uint64_t(a), 7}, {0, uint64_t(moved), 3},
				  {int(child), uint64_t(a), 7}, {int(child), uint64_t(moved), 3}},
				 12);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

}  // namespace
}  // namespace fl::port
