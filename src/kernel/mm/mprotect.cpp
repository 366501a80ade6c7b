// SPDX-License-Identifier: GPL-2.0-only
// Port of mm/mprotect.c: do_mprotect_pkey and mprotect_fixup, with the
// VM_MAY* rule that makes a read-only BPF mapping impossible to upgrade.
#include <vector>

#include "mm.h"

namespace fl::FL_ARCH_NS {

/*
 * mm/mprotect.c: change_protection -> change_pte_range, for the present
 * PTEs of a shared mapping: each takes the VMA's new rights, under the
 * page-table lock (the hardware sees a PTE's old rights or its new ones).
 */
void change_protection(vm_area_struct *vma, ulong start, ulong end)
{
	mm_struct *mm = vma->vm_mm;
	std::vector<std::pair<ulong, page *>> present;

	spin_lock(pte_lockptr(mm));
	mm->ptes.for_range(start, end, [&](ulong addr, const pte_t &pte) { present.emplace_back(addr, pte.pg); });
	for (auto &[addr, pg] : present) {
		FL_SHARED_ACCESS(pte_shared_loc(mm, addr), kPteShared, write, "pte");
		mm->ptes.set(addr, mk_pte(pg, vma));
	}
	spin_unlock(pte_lockptr(mm));
}

// mm/mprotect.c: mprotect_fixup (the commit charge is not modelled, only
// the VM_ACCOUNT flag it leaves: smaps shows it, and it decides merges)
static int mprotect_fixup(vm_area_struct *vma, vm_area_struct **pprev, ulong start, ulong end,
			  ulong newflags)
{
	ulong oldflags = vma->vm_flags;

	if (newflags == oldflags) {
		*pprev = vma;
		return 0;
	}

	/*
	 * If we make a private mapping writable we increase our commit;
	 * but (without finer accounting) cannot reduce our commit if we
	 * make it unwritable again except in the anonymous case where no
	 * anon_vma has yet to be assigned.
	 *
	 * hugetlb mapping were accounted for even if read-only so there is
	 * no need to account for them here.
	 */
	if (newflags & VM_WRITE) {
		/* may_expand_vm, security_vm_enough_memory_mm: no limits in the machine */
		if (!(oldflags & (VM_ACCOUNT | VM_WRITE | VM_SHARED | VM_NORESERVE)))
			newflags |= VM_ACCOUNT;
	} else if ((oldflags & VM_ACCOUNT) && vma_is_anonymous(vma)) {
		/* !vma->anon_vma: the machine faults no anonymous pages in */
		newflags &= ~VM_ACCOUNT;
	}

	/*
	 * x86's arch_has_pfn_modify_check() walk for PROT_NONE on
	 * VM_MIXEDMAP only refuses non-RAM pfns; vmalloc pages always pass.
	 */
	vma = vma_modify_flags(vma, start, end, newflags);
	if (IS_ERR(vma))
		return PTR_ERR(vma);

	*pprev = vma;

	/*
	 * vm_flags and vm_page_prot are protected by the mmap_lock
	 * held in write mode.
	 */
#if defined(FL_PLANT_MPROTECT_NO_VMA_LOCK)
	/* planted slip (test-only build, FL_SCHED_PLANTS): vm_flags written
	 * under mmap_lock alone, without vma_start_write, so a fault under the
	 * per-VMA lock reads them concurrently; no scheduling point lies
	 * between the write and a reader's use: only the lockset sees it */
	FL_SHARED_ACCESS(&vma->vm_flags, kVmFlags, write, "vm_flags");
	vma->vm_flags = newflags;
#else
	vm_flags_reset(vma, newflags);
#endif
	change_protection(vma, start, end);
	return 0;
}

/*
 * mm/mprotect.c: do_mprotect_pkey. pkey==-1 when doing a legacy mprotect().
 */
int do_mprotect_pkey(ulong start, size_t len, ulong prot)
{
	mm_struct *mm = current->mm;
	ulong nstart, end, tmp, reqprot;
	vm_area_struct *vma, *prev;
	int error;

	if (start & ~PAGE_MASK)
		return -EINVAL;
	if (!len)
		return 0;
	len = PAGE_ALIGN(len);
	end = start + len;
	if (end <= start)
		return -ENOMEM;
	if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC))  /* arch_validate_prot (+PROT_SEM) */
		return -EINVAL;

	reqprot = prot;

	mmap_write_lock(current->mm);

	vma = find_vma(mm, start);
	error = -ENOMEM;
	if (!vma)
		goto out;

	if (vma->vm_start > start)
		goto out;

	prev = nullptr;
	nstart = start;
	tmp = vma->vm_start;
	while (vma && vma->vm_start < end) {
		ulong mask_off_old_flags;
		ulong newflags;

		/* Here we know that vma->vm_start <= nstart < vma->vm_end. */
		if (vma->vm_start != tmp) {
			error = -ENOMEM;
			break;
		}

		mask_off_old_flags = VM_ACCESS_FLAGS;

		newflags = calc_vm_prot_bits(prot);
		newflags |= (vma->vm_flags & ~mask_off_old_flags);

		/* newflags >> 4 shift VM_MAY% in place of VM_% */
		if ((newflags & ~(newflags >> 4)) & VM_ACCESS_FLAGS) {
			error = -EACCES;
			break;
		}

		tmp = vma->vm_end;
		if (tmp > end)
			tmp = end;

		error = mprotect_fixup(vma, &prev, nstart, tmp, newflags);
		if (error)
			break;

		tmp = prev->vm_end;
		nstart = tmp;
		prot = reqprot;
		vma = find_vma(mm, tmp);
	}

	if (!error && tmp < end)
		error = -ENOMEM;

out:
	mmap_write_unlock(current->mm);
	return error;
}

}  // namespace fl::FL_ARCH_NS
