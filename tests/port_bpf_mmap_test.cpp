// SPDX-License-Identifier: GPL-2.0-only
// kernel/bpf/syscall.c: bpf_map_mmap's checks and their order, the VM_MAY*
// flags it leaves behind (docs/bpf-syscall.md#bpf_map_mmap, docs/mmap.md#do_mmap, docs/vma.md#split-munmap-mprotect-mremap), and the write-active
// accounting of bpf_map_mmap_open/close with BPF_MAP_FREEZE (docs/bpf-syscall.md#vma-open-and-close, docs/bpf-syscall.md#the-write-active-count, docs/bpf-syscall.md#map_freeze).
#include "port_helpers.h"

namespace fl::port {
namespace {

using namespace uapi;

std::vector<Config> levels_4k()
{
	ConfigFilter f = base_filter();
	f.page_shifts = {12};
	return f.expand();
}

MapSpec flags_spec(uint32_t flags)
{
	MapSpec s;
	s.map_flags = flags;
	return s;
}

// docs/bpf-syscall.md#bpf_map_mmap: a map without BPF_F_MMAPABLE has map_mmap, so bpf_map_mmap gets
// as far as array_map_mmap, which refuses it.
TEST(PortBpfMmap, NonMmapableIsEinval)
{
	for (const Config &c : levels_4k()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, flags_spec(0));
		EXPECT_EQ(map_pages(*m, 1, 0, R), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, 0, RW), -EINVAL);
		EXPECT_EQ(m->map_writecnt(), 0u);  // the VM_WRITE increment was undone
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/bpf-syscall.md#bpf_map_mmap check 2: MAP_PRIVATE has no VM_SHARED.
TEST(PortBpfMmap, MapPrivateIsEinval)
{
	for (const Config &c : levels_4k()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c);
		EXPECT_EQ(map_pages(*m, 1, 0, R, PRIVATE), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, 0, RW, PRIVATE), -EINVAL);
		EXPECT_EQ(m->map_writecnt(), 0u);
		EXPECT_GE(map_pages(*m, 1, 0, RW, SHARED), 0);
	}
}

// docs/bpf-syscall.md#bpf_map_mmap check 3: frozen + VM_WRITE is -EPERM; read-only is allowed.
TEST(PortBpfMmap, FrozenRefusesWritableMapping)
{
	for (const Config &c : levels_4k()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c);
		ASSERT_EQ(m->map_freeze(), 0);
		EXPECT_EQ(map_pages(*m, 1, 0, RW), -EPERM);
		EXPECT_EQ(map_pages(*m, 1, 0, W), -EPERM);
		EXPECT_EQ(m->map_writecnt(), 0u);
		int64_t a = map_pages(*m, 1, 0, R);
		EXPECT_GE(a, 0);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/bpf-syscall.md#bpf_map_mmap check 3: BPF_F_RDONLY_PROG + VM_WRITE is -EACCES, and the frozen
// test comes first.
TEST(PortBpfMmap, RdonlyProgRefusesWritableMapping)
{
	for (const Config &c : levels_4k()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, flags_spec(BPF_F_MMAPABLE | BPF_F_RDONLY_PROG));
		EXPECT_EQ(map_pages(*m, 1, 0, RW), -EACCES);
		EXPECT_EQ(m->map_writecnt(), 0u);
		EXPECT_GE(map_pages(*m, 1, 0, R), 0);
		ASSERT_EQ(m->map_freeze(), 0);
		EXPECT_EQ(map_pages(*m, 1, 0, RW), -EPERM);
	}
}

// docs/bpf-syscall.md#bpf_map_mmap: VM_SHARED (check 2) and the write checks (check 3) come before
// array_map_mmap's BPF_F_MMAPABLE test (check 5).
TEST(PortBpfMmap, CheckOrder)
{
	for (const Config &c : levels_4k()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, flags_spec(BPF_F_RDONLY_PROG));  // not mmapable
		EXPECT_EQ(map_pages(*m, 1, 0, RW), -EACCES);
		EXPECT_EQ(map_pages(*m, 1, 0, R), -EINVAL);
		ASSERT_EQ(m->map_freeze(), 0);
		EXPECT_EQ(map_pages(*m, 1, 0, RW), -EPERM);
		EXPECT_EQ(m->map_writecnt(), 0u);

		// a mapping past the end is refused by the bound, after the
		// write checks
		auto m2 = machine_with_map(c, flags_spec(BPF_F_MMAPABLE | BPF_F_RDONLY_PROG));
		EXPECT_EQ(map_pages(*m2, 1, 100, RW), -EACCES);
		EXPECT_EQ(map_pages(*m2, 1, 100, R), -EINVAL);
	}
}

// docs/bpf-syscall.md#the-map-file, docs/mmap.md#do_mmap: a BPF_F_RDONLY map fd is O_RDONLY. PROT_WRITE|MAP_SHARED
// fails in do_mmap (-EACCES); read-only MAP_SHARED loses VM_SHARED there and
// bpf_map_mmap refuses it (-EINVAL).
TEST(PortBpfMmap, RdonlyFd)
{
	for (const Config &c : levels_4k()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, flags_spec(BPF_F_MMAPABLE | BPF_F_RDONLY));
		EXPECT_EQ(map_pages(*m, 1, 0, RW), -EACCES);
		EXPECT_EQ(map_pages(*m, 1, 0, W), -EACCES);
		EXPECT_EQ(map_pages(*m, 1, 0, R), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, 0, R, PRIVATE), -EINVAL);
		EXPECT_EQ(m->map_writecnt(), 0u);
		// docs/bpf-syscall.md#map_freeze check 4: no FMODE_CAN_WRITE, no freeze
		EXPECT_EQ(m->map_freeze(), -EPERM);
		EXPECT_FALSE(m->map_frozen());
	}
}

// docs/mmap.md#do_mmap step 6: a BPF_F_WRONLY fd has no FMODE_READ: -EACCES for any mmap.
TEST(PortBpfMmap, WronlyFd)
{
	for (const Config &c : levels_4k()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, flags_spec(BPF_F_MMAPABLE | BPF_F_WRONLY));
		EXPECT_EQ(map_pages(*m, 1, 0, RW), -EACCES);
		EXPECT_EQ(map_pages(*m, 1, 0, R), -EACCES);
		EXPECT_EQ(map_pages(*m, 1, 0, W), -EACCES);
		EXPECT_EQ(m->map_writecnt(), 0u);
	}
}

// docs/bpf-syscall.md#bpf_map_mmap step 4: a read-only mapping loses VM_MAYWRITE (no "mw") and
// every mapping loses VM_MAYEXEC (no "me"); mprotect cannot add them back.
TEST(PortBpfMmap, ReadOnlyMappingCannotBecomeWritable)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		int64_t a = map_pages(*m, 2, 0, R);
		ASSERT_GE(a, 0);
		SmapsEntry s = m->smaps(0, a);
		ASSERT_TRUE(s.found);
		EXPECT_TRUE(has_vm_flag(s.vm_flags, "rd")) << s.vm_flags;
		EXPECT_TRUE(has_vm_flag(s.vm_flags, "sh")) << s.vm_flags;
		EXPECT_TRUE(has_vm_flag(s.vm_flags, "mr")) << s.vm_flags;
		EXPECT_FALSE(has_vm_flag(s.vm_flags, "wr")) << s.vm_flags;
		EXPECT_FALSE(has_vm_flag(s.vm_flags, "mw")) << s.vm_flags;
		EXPECT_FALSE(has_vm_flag(s.vm_flags, "me")) << s.vm_flags;

		EXPECT_EQ(m->mprotect(0, a, m->page_size(), RW), -EACCES);
		EXPECT_EQ(m->mprotect(0, a, 2 * m->page_size(), R | X), -EACCES);
		EXPECT_EQ(m->store(0, a + 8, 8, 1).sig, sigsegv);
		EXPECT_EQ(m->map_writecnt(), 0u);
		EXPECT_EQ(m->mprotect(0, a, 2 * m->page_size(), R), 0);
		EXPECT_EQ(m->mprotect(0, a, 2 * m->page_size(), uapi::PROT_NONE), 0);
		EXPECT_EQ(m->mprotect(0, a, 2 * m->page_size(), R), 0);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/bpf-syscall.md#bpf_map_mmap step 4, docs/vma.md#split-munmap-mprotect-mremap: a writable mapping keeps VM_MAYWRITE through
// mprotect(PROT_READ) and can be made writable again, but never executable.
// PROT_EXEC at mmap time is refused with -EPERM (SB_I_NOEXEC).
TEST(PortBpfMmap, WritableMappingFlags)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 2, 0, RW);
		ASSERT_GE(a, 0);
		SmapsEntry s = m->smaps(0, a);
		EXPECT_TRUE(has_vm_flag(s.vm_flags, "wr")) << s.vm_flags;
		EXPECT_TRUE(has_vm_flag(s.vm_flags, "mw")) << s.vm_flags;
		EXPECT_FALSE(has_vm_flag(s.vm_flags, "me")) << s.vm_flags;
		// VM_DONTEXPAND | VM_DONTDUMP on every level; VM_MIXEDMAP only
		// from the eager vm_insert_page (docs/arraymap.md#the-lazy-levels, docs/vmalloc.md#remap_vmalloc_range)
		EXPECT_TRUE(has_vm_flag(s.vm_flags, "de")) << s.vm_flags;
		EXPECT_TRUE(has_vm_flag(s.vm_flags, "dd")) << s.vm_flags;
		EXPECT_EQ(has_vm_flag(s.vm_flags, "mm"), !is_lazy(c.patch)) << s.vm_flags;

		EXPECT_EQ(m->mprotect(0, a, 2 * ps, RW | X), -EACCES);
		EXPECT_EQ(m->mprotect(0, a, 2 * ps, R), 0);
		s = m->smaps(0, a);
		EXPECT_FALSE(has_vm_flag(s.vm_flags, "wr")) << s.vm_flags;
		EXPECT_TRUE(has_vm_flag(s.vm_flags, "mw")) << s.vm_flags;
		EXPECT_EQ(m->store(0, a, 8, 1).sig, sigsegv);
		EXPECT_EQ(m->mprotect(0, a, 2 * ps, RW), 0);
		EXPECT_EQ(m->store(0, a, 8, 1).sig, 0);
		EXPECT_EQ(m->map_writecnt(), 1u);

		// anon_inodefs is SB_I_NOEXEC (v6.15+): do_mmap refuses PROT_EXEC
		// before bpf_map_mmap runs (found by the host oracle on 6.18;
		// corpora/program/regression/oracle-anon-noexec.fl)
		EXPECT_EQ(map_pages(*m, 1, 0, R | X), -EPERM);
		int64_t x = map_pages(*m, 1, 0, R);
		ASSERT_GE(x, 0);
		EXPECT_FALSE(has_vm_flag(m->smaps(0, x).vm_flags, "me"));
		EXPECT_EQ(m->mprotect(0, x, ps, R | X), -EACCES);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/bpf-syscall.md#bpf_map_mmap step 5: a writable mmap that fails in map_mmap undoes its
// write_active_inc; the count is unchanged whatever it was before.
TEST(PortWriteActive, FailedWritableMmapLeavesCountUnchanged)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		EXPECT_EQ(map_pages(*m, 5, 0, RW), -EINVAL);
		EXPECT_EQ(m->map_writecnt(), 0u);
		ASSERT_GE(map_pages(*m, 4, 0, RW), 0);
		EXPECT_EQ(m->map_writecnt(), 1u);
		EXPECT_EQ(map_pages(*m, 2, 3, RW), -EINVAL);
		EXPECT_EQ(map_pages(*m, 1, 4, RW), -EINVAL);
		EXPECT_EQ(m->map_writecnt(), 1u);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/bpf-syscall.md#map_freeze: freeze is -EBUSY while a writable mapping lives (even one
// mprotect'ed read-only: VM_MAYWRITE stays), succeeds once it is gone, and
// a second freeze is -EPERM. After it: no writable mmap, no update.
TEST(PortWriteActive, FreezeLifecycle)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 2, 0, RW);
		ASSERT_GE(a, 0);
		int64_t r = map_pages(*m, 2, 0, R);
		ASSERT_GE(r, 0);
		EXPECT_EQ(m->map_writecnt(), 1u);
		EXPECT_EQ(m->map_freeze(), -EBUSY);
		ASSERT_EQ(m->mprotect(0, a, 2 * ps, R), 0);
		EXPECT_EQ(m->map_writecnt(), 1u);
		EXPECT_EQ(m->map_freeze(), -EBUSY);
		EXPECT_FALSE(m->map_frozen());

		ASSERT_EQ(m->map_update(0, le_bytes(0x42), uapi::BPF_ANY), 0);
		ASSERT_EQ(m->munmap(0, a, 2 * ps), 0);
		EXPECT_EQ(m->map_writecnt(), 0u);
		EXPECT_EQ(m->map_freeze(), 0);  // a read-only mapping does not block it
		EXPECT_TRUE(m->map_frozen());
		EXPECT_EQ(m->map_freeze(), -EPERM);

		EXPECT_EQ(map_pages(*m, 1, 0, RW), -EPERM);
		EXPECT_EQ(m->map_writecnt(), 0u);
		int64_t r2 = map_pages(*m, 1, 0, R);
		ASSERT_GE(r2, 0);
		EXPECT_EQ(load64(*m, r2), 0x42u);
		EXPECT_EQ(m->map_update(0, le_bytes(1), uapi::BPF_ANY), -EPERM);
		std::vector<uint8_t> v;
		EXPECT_EQ(m->map_lookup(0, &v), 0);
		EXPECT_EQ(le_value(v), 0x42u);
		EXPECT_EQ(m->map_writecnt(), 0u);  // the update's transient writer is gone
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/bpf-syscall.md#vma-open-and-close, docs/vma.md#split-munmap-mprotect-mremap: every split opens the new piece, every removed piece is
// closed: writecnt == number of live VM_MAYWRITE VMAs.
TEST(PortWriteActive, SplitsKeepCountEqualToWritableVmas)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 8));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 6, 0, RW);
		int64_t ro = map_pages(*m, 6, 0, R);
		ASSERT_GE(a, 0);
		ASSERT_GE(ro, 0);
		EXPECT_EQ(m->map_writecnt(), 1u);

		ASSERT_EQ(m->munmap(0, a + ps, ps), 0);  // [0] [2..5]
		EXPECT_EQ(m->map_writecnt(), 2u);
		ASSERT_EQ(m->mprotect(0, a + 3 * ps, ps, R), 0);  // [0] [2] [3] [4..5]
		EXPECT_EQ(m->map_writecnt(), 4u);
		ASSERT_EQ(m->munmap(0, a + 5 * ps, ps), 0);  // [0] [2] [3] [4]
		EXPECT_EQ(m->map_writecnt(), 4u);
		ASSERT_EQ(m->munmap(0, a, ps), 0);
		EXPECT_EQ(m->map_writecnt(), 3u);

		// read-only pieces never count
		ASSERT_EQ(m->munmap(0, ro + 2 * ps, ps), 0);
		ASSERT_EQ(m->mprotect(0, ro + 4 * ps, ps, uapi::PROT_NONE), 0);
		EXPECT_EQ(m->map_writecnt(), 3u);
		EXPECT_TRUE(invariants_hold(*m));

		// one munmap across several pieces closes each
		ASSERT_EQ(m->munmap(0, a, 6 * ps), 0);
		EXPECT_EQ(m->map_writecnt(), 0u);
		EXPECT_EQ(m->map_freeze(), 0);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/vma.md#fork: fork opens every copied VMA; exit closes them.
TEST(PortWriteActive, ForkAndExit)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 8));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 4, 0, RW);
		ASSERT_GE(a, 0);
		ASSERT_GE(map_pages(*m, 2, 0, R), 0);
		ASSERT_EQ(m->mprotect(0, a + 2 * ps, ps, R), 0);  // 3 writable VMAs
		EXPECT_EQ(m->map_writecnt(), 3u);

		int64_t child = m->fork(0);
		ASSERT_GT(child, 0);
		EXPECT_EQ(m->map_writecnt(), 6u);
		int64_t grandchild = m->fork(int(child));
		ASSERT_GT(grandchild, child);
		EXPECT_EQ(m->map_writecnt(), 9u);
		EXPECT_TRUE(invariants_hold(*m));

		EXPECT_EQ(m->exit(int(child)), 0);
		EXPECT_EQ(m->map_writecnt(), 6u);
		EXPECT_EQ(m->exit(0), 0);
		EXPECT_EQ(m->map_writecnt(), 3u);
		EXPECT_EQ(m->map_freeze(), -EBUSY);
		EXPECT_EQ(m->exit(int(grandchild)), 0);
		EXPECT_EQ(m->map_writecnt(), 0u);
		EXPECT_EQ(m->map_freeze(), 0);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/bpf-syscall.md#vma-open-and-close, docs/vma.md#split-munmap-mprotect-mremap: MADV_DONTFORK'ed VMAs are not copied, so not opened.
TEST(PortWriteActive, DontforkIsNotCounted)
{
	for (const Config &c : levels_4k()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 4));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 4, 0, RW);
		ASSERT_GE(a, 0);
		ASSERT_EQ(m->madvise(0, a + 2 * ps, 2 * ps, uapi::MADV_DONTFORK), 0);
		EXPECT_EQ(m->map_writecnt(), 2u);  // split in two
		int64_t child = m->fork(0);
		ASSERT_GT(child, 0);
		EXPECT_EQ(m->map_writecnt(), 3u);
		EXPECT_TRUE(m->smaps(int(child), a).found);
		EXPECT_FALSE(m->smaps(int(child), a + 2 * ps).found);
		EXPECT_EQ(m->load(int(child), a + 2 * ps, 1).sig, sigsegv);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/vma.md#split-munmap-mprotect-mremap: mremap's move opens the copy and closes the old VMA; a shrink
// splits and closes the tail. The count is unchanged by both.
TEST(PortWriteActive, MremapKeepsCount)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 8));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 4, 0, RW);
		int64_t res = reserve(*m, 8);
		ASSERT_GE(a, 0);
		ASSERT_GE(res, 0);
		int64_t moved = m->mremap(0, a, 4 * ps, 4 * ps, uapi::MREMAP_MAYMOVE | uapi::MREMAP_FIXED,
					  res + 2 * ps);
		ASSERT_EQ(moved, res + 2 * int64_t(ps));
		EXPECT_EQ(m->map_writecnt(), 1u);
		ASSERT_EQ(m->mremap(0, moved, 4 * ps, 2 * ps, 0, 0), moved);
		EXPECT_EQ(m->map_writecnt(), 1u);
		EXPECT_EQ(m->mremap(0, moved, 2 * ps, 3 * ps, uapi::MREMAP_MAYMOVE, 0), -EFAULT);
		EXPECT_EQ(m->map_writecnt(), 1u);
		EXPECT_TRUE(invariants_hold(*m));
		ASSERT_EQ(m->munmap(0, moved, 2 * ps), 0);
		EXPECT_EQ(m->map_writecnt(), 0u);
	}
}

// docs/arraymap.md#lifetime: a VMA holds the map file, so the map outlives its fd: the
// mapping keeps working after close, bpf(2) on the fd fails with -EBADF,
// and the last munmap releases the map.
TEST(PortWriteActive, MappingOutlivesFd)
{
	for (const Config &c : levels_4k()) {
		SCOPED_TRACE(c.name());
		auto m = machine_with_map(c, page_elems(c, 2));
		const uint64_t ps = m->page_size();
		int64_t a = map_pages(*m, 2, 0, RW);
		ASSERT_GE(a, 0);
		ASSERT_EQ(m->map_update(1, le_bytes(0x6161), uapi::BPF_ANY), 0);
		ASSERT_EQ(m->map_close(), 0);
		EXPECT_EQ(m->map_close(), -EBADF);
		std::vector<uint8_t> v;
		EXPECT_EQ(m->map_lookup(0, &v), -EBADF);
		EXPECT_EQ(m->map_update(0, le_bytes(1), uapi::BPF_ANY), -EBADF);
		EXPECT_EQ(m->map_freeze(), -EBADF);
		EXPECT_EQ(map_pages(*m, 1, 0, R), -EBADF);

		EXPECT_EQ(load64(*m, a + ps), 0x6161u);
		ASSERT_EQ(store64(*m, a + 8, 0x11), 0);
		EXPECT_EQ(load64(*m, a + 8), 0x11u);
		EXPECT_EQ(m->map_writecnt(), 1u);
		EXPECT_GE(m->map_data_page_id(0), 0);
		EXPECT_TRUE(invariants_hold(*m));
		ASSERT_EQ(m->munmap(0, a, 2 * ps), 0);
		EXPECT_EQ(m->map_data_page_id(0), -1);  // the map is gone
		EXPECT_TRUE(invariants_hold(*m));
	}
}

}  // namespace
}  // namespace fl::port
