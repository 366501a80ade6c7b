// SPDX-License-Identifier: GPL-2.0-only
// The mmap bound of array_map_mmap (docs/arraymap.md#array_map_mmap-pre, docs/arraymap.md#the-lazy-levels), remap_vmalloc_range's
// own checks (docs/vmalloc.md#remap_vmalloc_range) and do_mmap's offset checks (docs/mmap.md#do_mmap) on every
// front door: exact fit, offset windows, the visible vs allocated end, and
// the 32-bit wraps that make v1 hand out the wrong page (docs/invariants.md#mmap-acceptance).
#include "port_helpers.h"

namespace fl::port {
namespace {

using namespace uapi;

// 64 elements of 4 KiB: 64 visible pages at 4k, 16 at 16k, 4 at 64k.
MapSpec bound_spec()
{
	MapSpec s;
	s.value_size = 4096;
	s.max_entries = 64;
	return s;
}

uint64_t visible_pages(const Config &c)
{
	return (uint64_t(64) * 4096) >> c.page_shift;
}

std::vector<Config> every_door()
{
	ConfigFilter f = base_filter();
	f.doors = {Door::anon, Door::regular, Door::direct};
	return f.expand();
}

// docs/arraymap.md#array_map_mmap-pre: the bound is `>`: a mapping that ends exactly at the visible
// end is accepted, one page more is not.
TEST(PortBounds, ExactFitAcceptedOnePageMoreRefused)
{
	for (const Config &c : every_door()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, bound_spec());
		const uint64_t n = visible_pages(c);
		EXPECT_EQ(map_pages(*m, n + 1, 0, R), -EINVAL);
		EXPECT_EQ(map_pages(*m, n + 1, 0, RW), -EINVAL);
		EXPECT_EQ(m->map_writecnt(), 0u);
		int64_t a = map_pages(*m, n, 0, RW);
		ASSERT_GE(a, 0);
		EXPECT_EQ(m->map_writecnt(), 1u);
		// byte-granular length: do_mmap page-aligns it first
		EXPECT_GE(m->mmap(0, 0, n * m->page_size() - 1, R, SHARED, true, 0), 0);
		EXPECT_EQ(m->mmap(0, 0, n * m->page_size() + 1, R, SHARED, true, 0), -EINVAL);
		expect_eager_pages(*m, a, n, 0);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/arraymap.md#array_map_mmap-pre: windows at a page offset: inside, ending at the last page,
// and starting at or running past the end.
TEST(PortBounds, OffsetWindows)
{
	for (const Config &c : every_door()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, bound_spec());
		const uint64_t n = visible_pages(c);

		int64_t inside = map_pages(*m, n - 2, 1, RW);
		ASSERT_GE(inside, 0);
		expect_eager_pages(*m, inside, n - 2, 1);
		int64_t tail = map_pages(*m, n - 1, 1, R);  // ends exactly at the end
		ASSERT_GE(tail, 0);
		int64_t last = map_pages(*m, 1, n - 1, RW);
		ASSERT_GE(last, 0);
		expect_eager_pages(*m, last, 1, n - 1);
		EXPECT_EQ(m->smaps(0, last).pgoff, n - 1);

		EXPECT_EQ(map_pages(*m, 2, n - 1, R), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, n, R), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, n, RW), -EINVAL);
		EXPECT_EQ(map_pages(*m, n, 1, R), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, 4096, R), -EINVAL);
		EXPECT_EQ(m->map_writecnt(), 2u);

		// the window's data is the map's data at that offset
		ASSERT_EQ(m->map_update(uint32_t(((n - 1) << c.page_shift) / 4096), le_bytes(0xabc),
					BPF_ANY),
			  0);
		EXPECT_EQ(load64(*m, last), 0xabcu);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/arraymap.md#array_map_alloc, docs/arraymap.md#array_map_mmap-pre, docs/vmalloc.md#remap_vmalloc_range: without the bypass, 5 entries are allocated as 8,
// but the bound uses map.max_entries: the three pages past the visible
// end are never mappable, although remap_vmalloc_range would accept them.
TEST(PortBounds, VisibleEndNotAllocatedEnd)
{
	ConfigFilter f = base_filter();
	f.spec_v1 = {false, true};
	for (const Config &c : f.expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 5));
		EXPECT_EQ(map_pages(*m, 6, 0, R), -EINVAL);
		EXPECT_EQ(map_pages(*m, 8, 0, R), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, 5, R), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, 7, RW), -EINVAL);
		EXPECT_EQ(map_pages(*m, 2, 4, R), -EINVAL);
		int64_t a = map_pages(*m, 5, 0, RW);
		ASSERT_GE(a, 0);
		int64_t b = map_pages(*m, 1, 4, R);
		ASSERT_GE(b, 0);
		expect_eager_pages(*m, a, 5, 0);
		expect_eager_pages(*m, b, 1, 4);
		EXPECT_EQ(m->smaps(0, b).end, uint64_t(b) + m->page_size());
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/mmap.md#do_mmap file_mmap_ok, docs/vmalloc.md#remap_vmalloc_range step 1, docs/arraymap.md#array_map_mmap-pre, docs/arraymap.md#the-lazy-levels and docs/invariants.md#what-the-port-must-keep: a one-page mapping
// at pgoff 0xfffff on a 32-bit kernel. vm_pgoff * PAGE_SIZE + len is 2^32
// and wraps to 0 in unsigned long.
//   anon (maxsize ULONG_MAX): do_mmap refuses it, -EOVERFLOW.
//   regular (MAX_LFS_FILESIZE) and direct reach array_map_mmap:
//     pre: the bound wraps, remap_vmalloc_range's shl-overflow check -EINVAL;
//     v1:  the bound wraps, accepted; the fault maps the header page;
//     v2/v3: u64 bound, -EINVAL.
TEST(PortBounds, Arch32PgoffFfffFOneMapping)
{
	ConfigFilter f = base_filter();
	f.arches = {Arch::A32};
	f.page_shifts = {12};
	f.doors = {Door::anon, Door::regular, Door::direct};
	for (const Config &c : f.expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c);  // 8 KiB of data
		int64_t a = map_pages(*m, 1, 0xfffff, R);
		if (c.door == Door::anon) {
			EXPECT_EQ(a, -EOVERFLOW);
		} else if (c.patch == Patch::v1) {
			ASSERT_GE(a, 0);
			EXPECT_TRUE(invariants_hold(*m));
			Access acc = m->load(0, a + 0xff0, 8);
			EXPECT_EQ(acc.sig, 0);
			EXPECT_EQ(broken_invariant(*m), Invariant::foreign_page);
		} else {
			EXPECT_EQ(a, -EINVAL);
		}
		// writable: the same outcome, and a refusal leaves writecnt alone
		int64_t w = map_pages(*m, 1, 0xfffff, RW);
		if (c.door == Door::anon)
			EXPECT_EQ(w, -EOVERFLOW);
		else if (c.patch == Patch::v1)
			EXPECT_GE(w, 0);
		else
			EXPECT_EQ(w, -EINVAL);
		EXPECT_EQ(m->map_writecnt(), c.door != Door::anon && c.patch == Patch::v1 ? 1u : 0u);
	}
}

// The same request on a 64-bit kernel: no wrap anywhere, always -EINVAL.
TEST(PortBounds, Arch64PgoffFfffFIsEinval)
{
	ConfigFilter f = base_filter();
	f.arches = {Arch::A64};
	f.doors = {Door::anon, Door::regular, Door::direct};
	for (const Config &c : f.expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c);
		EXPECT_EQ(map_pages(*m, 1, 0xfffff, R), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, 0xfffff, RW), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, 0xffffffffull, R), -EINVAL);
		EXPECT_EQ(m->map_writecnt(), 0u);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/mmap.md#do_mmap step 3, docs/vmalloc.md#remap_vmalloc_range, docs/arraymap.md#array_map_mmap-pre: pgoff 2^32 - 1 on a 32-bit kernel.
//   anon / regular: pgoff + 1 wraps in do_mmap: -EOVERFLOW.
//   direct: array_map_mmap's bound wraps (0xfffff000 + 0x1000 == 0), and
//     pre:   remap_vmalloc_range(vm_pgoff + 1 == 0) maps the header page;
//     v1:    the fault's (vmf->pgoff + 1) << PAGE_SHIFT wraps to the header;
//     v2/v3: the u64 bound refuses it.
TEST(PortBounds, Arch32PgoffUlongMax)
{
	ConfigFilter f = base_filter();
	f.arches = {Arch::A32};
	f.page_shifts = {12};
	f.doors = {Door::anon, Door::regular, Door::direct};
	for (const Config &c : f.expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c);
		int64_t a = map_pages(*m, 1, 0xffffffffull, R);
		if (c.door != Door::direct) {
			EXPECT_EQ(a, -EOVERFLOW);
			EXPECT_TRUE(invariants_hold(*m));
		} else if (c.patch == Patch::pre) {
			ASSERT_GE(a, 0);
			EXPECT_EQ(rss(*m, a), 1u);  // eager: the header page is mapped at once
			EXPECT_EQ(broken_invariant(*m), Invariant::foreign_page);
		} else if (c.patch == Patch::v1) {
			ASSERT_GE(a, 0);
			EXPECT_TRUE(invariants_hold(*m));
			EXPECT_EQ(m->load(0, a, 8).sig, 0);
			EXPECT_EQ(broken_invariant(*m), Invariant::foreign_page);
		} else {
			EXPECT_EQ(a, -EINVAL);
			EXPECT_TRUE(invariants_hold(*m));
		}
	}
}

// With larger pages the wrap of v1 needs a smaller pgoff: vm_pgoff *
// PAGE_SIZE + len == 2^32 at pgoff 2^(32 - PAGE_SHIFT) - 1. The regular
// door admits it (MAX_LFS_FILESIZE), the anon door does not.
TEST(PortBounds, Arch32WrapAtEveryPageSize)
{
	ConfigFilter f = base_filter();
	f.arches = {Arch::A32};
	f.doors = {Door::anon, Door::regular, Door::direct};
	for (const Config &c : f.expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c);
		uint64_t pgoff = (uint64_t(1) << (32 - c.page_shift)) - 1;
		int64_t a = map_pages(*m, 1, pgoff, R);
		if (c.door == Door::anon) {
			EXPECT_EQ(a, -EOVERFLOW);
		} else if (c.patch == Patch::v1) {
			ASSERT_GE(a, 0);
			EXPECT_EQ(m->load(0, a, 8).sig, 0);
			EXPECT_EQ(broken_invariant(*m), Invariant::foreign_page);
		} else {
			EXPECT_EQ(a, -EINVAL);
			EXPECT_TRUE(invariants_hold(*m));
		}
	}
}

// docs/mmap.md#do_mmap ("Reachable vm_pgoff": < 2^52 through 64-bit mmap) and docs/arraymap.md#the-lazy-levels:
// on a 64-bit kernel the v2 cast `(u64)vma->vm_pgoff` is a no-op, so with
// an unconstrained vm_pgoff (the direct door) vm_pgoff * PAGE_SIZE + len
// wraps to 0 on every lazy level and the fault maps the header page. pre
// is saved by remap_vmalloc_range's shl-overflow check. Both real doors
// refuse the offset in file_mmap_ok. This pins the faithful behaviour of
// the patch as ported (see the report), not a port defect.
TEST(PortBounds, Arch64DirectPgoffWrapsEvenTheU64Bound)
{
	ConfigFilter f = base_filter();
	f.arches = {Arch::A64};
	f.doors = {Door::anon, Door::regular, Door::direct};
	for (const Config &c : f.expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c);
		uint64_t pgoff = (~uint64_t(0)) >> c.page_shift;  // (pgoff + 1) * PAGE_SIZE == 2^64
		int64_t a = map_pages(*m, 1, pgoff, R);
		if (c.door != Door::direct) {
			EXPECT_EQ(a, -EOVERFLOW);
		} else if (c.patch == Patch::pre) {
			EXPECT_EQ(a, -EINVAL);
		} else {
			ASSERT_GE(a, 0);
			EXPECT_TRUE(invariants_hold(*m));
			EXPECT_EQ(m->load(0, a, 8).sig, 0);
			EXPECT_EQ(broken_invariant(*m), Invariant::foreign_page);
		}
	}
}

}  // namespace
}  // namespace fl::port
