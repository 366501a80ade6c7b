// SPDX-License-Identifier: GPL-2.0-only
#include "guest_differences.h"

#include <cerrno>
#include <sys/mman.h>

namespace fl::kernels {

namespace {

const GuestDifference kFreezePerm = {
	"freeze_perm",
	{6, 12},  // 6.12 has the check and 6.1 does not; the release between them that added it is not pinned here
	"Upstream map_freeze() starts with 'if (!(map_get_sys_perms(map, f) & FMODE_CAN_WRITE)) return -EPERM': "
	"a read-only fd, or any fd of an already frozen map (map_get_sys_perms masks FMODE_CAN_WRITE once "
	"frozen), gets EPERM. 6.1's map_freeze has no such check: the read-only fd's freeze succeeds and a "
	"second freeze gets EBUSY from 'if (READ_ONCE(map->frozen))'.",
};

const GuestDifference kAnonNoexec = {
	"anon_noexec",
	{6, 15},
	"Since v6.15 anon_inodefs raises SB_I_NOEXEC, so do_mmap() refuses PROT_EXEC on a BPF map fd with "
	"EPERM (path_noexec). 6.1's anon inodes are executable-mappable: the mmap succeeds.",
};

const GuestDifference kMremapCheckOrder = {
	"mremap_check_order",
	{6, 17},
	"Since v6.17 mremap validates its arguments (check_mremap_params: alignment, lengths, the new range "
	"overlapping the old) before it looks up the VMA, so a move of an unmapped range onto an overlapping "
	"target is EINVAL. 6.1 looks the VMA up first (vma_to_resize) and gets EFAULT. The port follows upstream.",
};

const GuestDifference kMremapFixedUnmapsFirst = {
	"mremap_fixed_unmaps_first",
	{6, 17},
	"Since v6.17 a MREMAP_FIXED move checks the source VMA (check_prep_vma) before it unmaps the "
	"target, so a move that fails (e.g. EFAULT: 'can't remap across vm area boundaries') leaves the "
	"target mapped. 6.1's mremap_to() calls do_munmap(new_addr) first and vma_to_resize() after: the "
	"failed move has already unmapped the target. The port follows upstream.",
};

const GuestDifference kMmapFixedUnmapsFirst = {
	"mmap_fixed_unmaps_first",
	{6, 12},
	"6.1's mmap_region() unmaps what a MAP_FIXED mapping replaces (do_mas_munmap) before it calls "
	"f_op->mmap, so a MAP_FIXED mmap that bpf_map_mmap()/array_map_mmap() refuses (EINVAL, EACCES) "
	"leaves a hole where the old mapping was. Since v6.12 __mmap_region() gathers the old VMAs first and "
	"puts them back when the hook fails (vms_abort_munmap_vmas): the old mapping survives. The port "
	"follows upstream. Shows up at a later op that touches the hole.",
};

const GuestDifference kNoGap = {
	"no_gap",
	{0, 0},
	"Not 6.1-specific: the real i386 guest process (binary, heap, stack, the executor's window) has no "
	"free gap for a mapping of 256 MiB or more (the executor's window alone takes 256 MiB to 2 GiB of "
	"the 3 GiB) that the port's otherwise empty 32-bit address space "
	"still has. do_mmap() calls get_unmapped_area() before file_mmap_ok() and f_op->mmap, so the guest "
	"gets ENOMEM where the port goes on to EINVAL, EOVERFLOW or EACCES.",
};

// Whether guest kernel k still has d.
const GuestDifference *in(GuestKernel k, const GuestDifference &d)
{
	return d.gone_in.major == 0 || k < d.gone_in ? &d : nullptr;
}

}  // namespace

const std::vector<const GuestDifference *> &guest_differences()
{
	static const std::vector<const GuestDifference *> all = {&kFreezePerm,		    &kAnonNoexec,
								 &kMremapCheckOrder,	    &kMremapFixedUnmapsFirst,
								 &kMmapFixedUnmapsFirst, &kNoGap};
	return all;
}

const GuestDifference *classify_guest(GuestKernel k, const Program &p, const Config &c, const Op &op, const Event &guest,
				      const Event &port)
{
	const GuestDifference *d = nullptr;
	// 0 only for a read-only fd; EBUSY for a frozen map (or one still mapped writable).
	bool rdonly_fd = p.map.map_flags & uapi::BPF_F_RDONLY;
	if (op.kind == OpKind::freeze && port.ret == -EPERM && (guest.ret == -EBUSY || (guest.ret == 0 && rdonly_fd)))
		d = in(k, kFreezePerm);
	if (op.kind == OpKind::mmap && (op.prot & PROT_EXEC) && port.ret == -EPERM && guest.ret != -EPERM)
		d = in(k, kAnonNoexec);
	if (op.kind == OpKind::mremap && port.ret == -EINVAL && guest.ret == -EFAULT)
		d = in(k, kMremapCheckOrder);
	if (op.kind == OpKind::mmap && c.arch == Arch::A32 && guest.ret == -ENOMEM && port.ret < 0 &&
	    port.ret != -ENOMEM && uint32_t(op.len.resolve(c.page_shift)) >= (256u << 20))
		d = in(k, kNoGap);
	return d;
}

const GuestDifference *earlier_guest(GuestKernel k, const Program &p, const Trace &port, size_t upto, size_t *at)
{
	for (size_t i = 0; i < upto && i < p.ops.size() && i < port.events.size(); i++) {
		const Op &op = p.ops[i];
		int64_t ret = port.events[i].ret;
		*at = i;
		if (op.kind == OpKind::mmap && (op.prot & PROT_EXEC) && ret == -EPERM)
			if (const GuestDifference *d = in(k, kAnonNoexec))
				return d;
		// ->mmap's refusals of a MAP_FIXED mapping (do_mmap's own come back
		// before the unmap too, but with the same errnos: a heuristic that
		// only ever explains a difference seen at a later op)
		if (op.kind == OpKind::mmap && op.has_at && (op.flags & MAP_FIXED) && (ret == -EINVAL || ret == -EACCES))
			if (const GuestDifference *d = in(k, kMmapFixedUnmapsFirst))
				return d;
		// vma_to_resize()'s refusals, which 6.1 and 6.12 reach after unmapping the target
		if (op.kind == OpKind::mremap && (op.flags & MREMAP_FIXED) &&
		    (ret == -EFAULT || ret == -ENOMEM || ret == -EAGAIN))
			if (const GuestDifference *d = in(k, kMremapFixedUnmapsFirst))
				return d;
	}
	return nullptr;
}

}  // namespace fl::kernels
