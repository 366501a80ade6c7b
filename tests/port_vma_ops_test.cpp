// SPDX-License-Identifier: GPL-2.0-only
// VMA operations on a map mapping (docs/vma.md#split-munmap-mprotect-mremap): munmap and mprotect splits,
// mremap (grow, shrink, move, DONTUNMAP), and the argument errnos of
// munmap and madvise.
#include "port_helpers.h"

namespace fl::port {
namespace {

using namespace uapi;

void expect_vma(Machine &m, uint64_t addr, uint64_t start, uint64_t end, uint64_t pgoff, int pid = 0)
{
	SmapsEntry s = m.smaps(pid, addr);
	ASSERT_TRUE(s.found) << "no VMA at 0x" << std::hex << addr;
	EXPECT_EQ(s.start, start);
	EXPECT_EQ(s.end, end);
	EXPECT_EQ(s.pgoff, pgoff);
	// vma_at (the contents shadow's smaps without Rss and mnemonics) agrees
	VmaEntry v = m.vma_at(pid, addr);
	EXPECT_TRUE(v.found);
	EXPECT_EQ(v.start, start);
	EXPECT_EQ(v.end, end);
	EXPECT_EQ(v.pgoff, pgoff);
	EXPECT_EQ(v.shared, has_vm_flag(s.vm_flags, "sh")) << s.vm_flags;
}

// docs/vma.md#split-munmap-mprotect-mremap __split_vma / do_vmi_align_munmap: unmapping the middle page
// splits the VMA in three and drops the middle; each surviving address
// keeps its page (vm_pgoff of the upper piece is shifted).
TEST(PortVmaOps, MunmapMiddlePage)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 3, 1, RW);  // data pages 1..3
		ASSERT_GE(a, 0);
		ASSERT_EQ(store64(*m, a + 2 * ps, 0x33), 0);  // before the split
		ASSERT_EQ(m->munmap(0, a + ps, ps), 0);
		expect_vma(*m, a, a, a + ps, 1);
		EXPECT_FALSE(m->smaps(0, a + ps).found);
		expect_vma(*m, a + 2 * ps, a + 2 * ps, a + 3 * ps, 3);
		EXPECT_EQ(m->load(0, a + ps, 1).sig, sigsegv);
		expect_eager_pages(*m, a, 1, 1);
		expect_eager_pages(*m, a + 2 * ps, 1, 3);
		EXPECT_EQ(load64(*m, a + 2 * ps), 0x33u);
		EXPECT_EQ(m->map_writecnt(), 2u);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/vma.md#split-munmap-mprotect-mremap mprotect: the middle page becomes its own VMA with the new
// rights; all three keep their pages.
TEST(PortVmaOps, MprotectMiddlePage)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 3, 0, RW);
		ASSERT_GE(a, 0);
		ASSERT_EQ(m->mprotect(0, a + ps, ps, R), 0);
		expect_vma(*m, a, a, a + ps, 0);
		expect_vma(*m, a + ps, a + ps, a + 2 * ps, 1);
		expect_vma(*m, a + 2 * ps, a + 2 * ps, a + 3 * ps, 2);
		EXPECT_TRUE(has_vm_flag(m->smaps(0, a).vm_flags, "wr"));
		EXPECT_FALSE(has_vm_flag(m->smaps(0, a + ps).vm_flags, "wr"));
		EXPECT_TRUE(has_vm_flag(m->smaps(0, a + ps).vm_flags, "mw"));
		EXPECT_TRUE(has_vm_flag(m->smaps(0, a + 2 * ps).vm_flags, "wr"));

		EXPECT_EQ(m->store(0, a + ps, 8, 1).sig, sigsegv);
		EXPECT_EQ(store64(*m, a, 0x10), 0);
		EXPECT_EQ(store64(*m, a + 2 * ps, 0x12), 0);
		expect_eager_pages(*m, a, 3, 0);
		EXPECT_EQ(m->map_writecnt(), 3u);

		// PROT_NONE: even present pages are not readable
		ASSERT_EQ(m->mprotect(0, a + 2 * ps, ps, PROT_NONE), 0);
		EXPECT_EQ(m->load(0, a + 2 * ps, 8).sig, sigsegv);
		ASSERT_EQ(m->mprotect(0, a, 3 * ps, RW), 0);
		EXPECT_EQ(load64(*m, a + 2 * ps), 0x12u);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/vma.md#split-munmap-mprotect-mremap vma_to_resize: growing a VM_DONTEXPAND mapping is -EFAULT (in
// place or with MREMAP_MAYMOVE); shrinking unmaps the tail.
TEST(PortVmaOps, MremapGrowAndShrink)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 8));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 4, 0, RW);
		ASSERT_GE(a, 0);
		EXPECT_EQ(m->mremap(0, a, 4 * ps, 5 * ps, 0, 0), -EFAULT);
		EXPECT_EQ(m->mremap(0, a, 4 * ps, 5 * ps, MREMAP_MAYMOVE, 0), -EFAULT);
		EXPECT_EQ(m->mremap(0, a, 2 * ps, 3 * ps, 0, 0), -EFAULT);
		expect_vma(*m, a, a, a + 4 * ps, 0);

		EXPECT_EQ(m->mremap(0, a, 4 * ps, 4 * ps, 0, 0), a);
		EXPECT_EQ(m->mremap(0, a, 4 * ps, 2 * ps, 0, 0), a);
		expect_vma(*m, a, a, a + 2 * ps, 0);
		EXPECT_EQ(m->load(0, a + 2 * ps, 1).sig, sigsegv);
		expect_eager_pages(*m, a, 2, 0);
		EXPECT_EQ(m->map_writecnt(), 1u);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/vma.md#split-munmap-mprotect-mremap move_vma: a same-size move to MAP_FIXED'able space keeps the
// data and vm_pgoff; the old range is gone.
TEST(PortVmaOps, MremapMove)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 8));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 4, 3, RW);  // data pages 3..6
		int64_t res = reserve(*m, 8);
		ASSERT_GE(a, 0);
		ASSERT_GE(res, 0);
		ASSERT_EQ(store64(*m, a + ps + 8, 0x4444), 0);  // data page 4
		uint64_t to = uint64_t(res) + 2 * ps;
		int64_t moved = m->mremap(0, a, 4 * ps, 4 * ps, MREMAP_MAYMOVE | MREMAP_FIXED, to);
		ASSERT_EQ(moved, int64_t(to));
		expect_vma(*m, to, to, to + 4 * ps, 3);
		EXPECT_FALSE(m->smaps(0, a).found);
		EXPECT_EQ(m->load(0, a, 1).sig, sigsegv);
		EXPECT_EQ(load64(*m, to + ps + 8), 0x4444u);
		SmapsEntry s = m->smaps(0, to);
		EXPECT_TRUE(has_vm_flag(s.vm_flags, "de")) << s.vm_flags;
		EXPECT_EQ(has_vm_flag(s.vm_flags, "mm"), !is_lazy(c.patch)) << s.vm_flags;
		expect_eager_pages(*m, to, 4, 3);
		// the reservation around it is still there
		EXPECT_TRUE(m->smaps(0, res).found);
		EXPECT_TRUE(m->smaps(0, to + 4 * ps).found);
		EXPECT_EQ(m->map_writecnt(), 1u);
		EXPECT_TRUE(invariants_hold(*m));

		// moving a part of the VMA splits it first
		int64_t part = m->mremap(0, to + 2 * ps, ps, ps, MREMAP_MAYMOVE | MREMAP_FIXED, res);
		ASSERT_EQ(part, res);
		expect_vma(*m, res, res, res + ps, 5);
		expect_vma(*m, to, to, to + 2 * ps, 3);
		expect_vma(*m, to + 3 * ps, to + 3 * ps, to + 4 * ps, 6);
		expect_eager_pages(*m, res, 1, 5);
		EXPECT_EQ(m->map_writecnt(), 3u);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/vma.md#split-munmap-mprotect-mremap: MREMAP_DONTUNMAP is refused for VM_DONTEXPAND; a move to a
// free address (MAYMOVE without FIXED) is not needed to grow, so the plain
// same-size MAYMOVE is a no-op.
TEST(PortVmaOps, MremapDontunmapIsEinval)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 2, 0, RW);
		int64_t res = reserve(*m, 4);
		ASSERT_GE(a, 0);
		ASSERT_GE(res, 0);
		EXPECT_EQ(m->mremap(0, a, 2 * ps, 2 * ps, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, 0), -EINVAL);
		EXPECT_EQ(m->mremap(0, a, 2 * ps, 2 * ps, MREMAP_MAYMOVE | MREMAP_DONTUNMAP | MREMAP_FIXED,
				    res),
			  -EINVAL);
		expect_vma(*m, a, a, a + 2 * ps, 0);
		EXPECT_EQ(m->map_writecnt(), 1u);
		EXPECT_EQ(m->mremap(0, a, 2 * ps, 2 * ps, MREMAP_MAYMOVE, 0), a);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// Argument errnos: unaligned munmap is -EINVAL (do_vmi_munmap); madvise
// over a hole is -ENOMEM (madvise_walk_vmas), though the mapped part is
// still advised.
TEST(PortVmaOps, ArgumentErrnos)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 3, 0, RW);
		ASSERT_GE(a, 0);
		EXPECT_EQ(m->munmap(0, a + 8, ps), -EINVAL);
		EXPECT_EQ(m->munmap(0, a + ps / 2, ps), -EINVAL);
		EXPECT_EQ(m->munmap(0, a, 0), -EINVAL);
		expect_vma(*m, a, a, a + 3 * ps, 0);
		EXPECT_EQ(m->mprotect(0, a + 8, ps, R), -EINVAL);
		EXPECT_EQ(m->madvise(0, a + 8, ps, MADV_DONTNEED), -EINVAL);

		ASSERT_EQ(store64(*m, a, 5), 0);
		ASSERT_EQ(m->munmap(0, a + ps, ps), 0);
		EXPECT_EQ(m->madvise(0, a + ps, ps, MADV_DONTNEED), -ENOMEM);
		EXPECT_EQ(m->madvise(0, a, 3 * ps, MADV_DONTNEED), -ENOMEM);
		EXPECT_EQ(m->user_page_id(0, a), -1);  // page 0 was zapped anyway
		EXPECT_EQ(m->mprotect(0, a, 3 * ps, R), -ENOMEM);
		EXPECT_EQ(m->madvise(0, a, ps, MADV_DONTNEED), 0);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

}  // namespace
}  // namespace fl::port
