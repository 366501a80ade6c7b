// SPDX-License-Identifier: GPL-2.0-only
// Port of mm/gup.c for MAP_POPULATE: __mm_populate walks the range with
// __get_user_pages, faulting in what follow_page does not find. Shared
// mappings are populated with read faults; errors skip the rest of a VMA.
#include "mm.h"

namespace fl::FL_ARCH_NS {

constexpr unsigned int FOLL_WRITE = 0x01, FOLL_TOUCH = 0x02, FOLL_FORCE = 0x10;

// mm/gup.c: follow_page_mask -> follow_page_pte, order 0: is the page
// present? Read under the page-table lock (pte_offset_map_lock, ptep_get,
// pte_unmap_unlock).
static bool follow_page_mask(mm_struct *mm, ulong address)
{
	bool present;

	kg->stats->ptl_locks++;
	spin_lock(pte_lockptr(mm));
	present = ptep_get(mm, address) != nullptr;
	spin_unlock(pte_lockptr(mm));
	return present;
}

// mm/gup.c: check_vma_flags
static int check_vma_flags(vm_area_struct *vma, unsigned int gup_flags)
{
	vm_flags_t vm_flags;
	int write = (gup_flags & FOLL_WRITE);

	FL_SHARED_ACCESS(&vma->vm_flags, kVmFlags, read, "vm_flags");
	vm_flags = vma->vm_flags;

	if (vm_flags & (VM_IO | VM_PFNMAP))
		return -EFAULT;

	if (write) {
		if (!(vm_flags & VM_WRITE)) {
			if (!(gup_flags & FOLL_FORCE))
				return -EFAULT;
			/* FOLL_FORCE on a shared mapping: !is_cow_mapping */
			return -EFAULT;
		}
	} else if (!(vm_flags & VM_READ)) {
		if (!(gup_flags & FOLL_FORCE))
			return -EFAULT;
		/*
		 * Is there actually any vma we can reach here which does not
		 * have VM_MAYREAD set?
		 */
		if (!(vm_flags & VM_MAYREAD))
			return -EFAULT;
	}
	return 0;
}

// mm/gup.c: vm_fault_to_errno
static int vm_fault_to_errno(vm_fault_t vm_fault)
{
	if (vm_fault & VM_FAULT_OOM)
		return -ENOMEM;
	if (vm_fault & (VM_FAULT_HWPOISON))
		return -EHWPOISON;
	if (vm_fault & (VM_FAULT_SIGBUS | VM_FAULT_SIGSEGV))
		return -EFAULT;
	return 0;
}

// mm/gup.c: faultin_page
static int faultin_page(vm_area_struct *vma, ulong address, unsigned int flags)
{
	unsigned int fault_flags = 0;
	vm_fault_t ret;

	if (flags & FOLL_WRITE)
		fault_flags |= FAULT_FLAG_WRITE;

	ret = handle_mm_fault(vma, address, fault_flags);

	if (ret & VM_FAULT_ERROR) {
		int err = vm_fault_to_errno(ret);

		if (err)
			return err;
		BUG_ON(1);
	}

	if (ret & VM_FAULT_RETRY)
		return -EBUSY;

	return 0;
}

// mm/gup.c: __get_user_pages (pages not returned: only populating)
static long __get_user_pages(mm_struct *mm, ulong start, ulong nr_pages, unsigned int gup_flags)
{
	long ret = 0, i = 0;
	vm_area_struct *vma = nullptr;

	if (!nr_pages)
		return 0;

	do {
		/* first iteration or cross vma bound */
		if (!vma || start >= vma->vm_end) {
			vma = vma_lookup(mm, start);
			if (!vma) {
				ret = -EFAULT;
				goto out;
			}
			ret = check_vma_flags(vma, gup_flags);
			if (ret)
				goto out;
		}
retry:
		/* follow_page_mask: a present PTE is all populate needs */
		if (!follow_page_mask(mm, start & PAGE_MASK)) {
			ret = faultin_page(vma, start, gup_flags);
			switch (ret) {
			case 0:
				goto retry;
			case -EBUSY:
			case -EAGAIN:
				ret = 0;
				[[fallthrough]];
			case -EFAULT:
			case -ENOMEM:
			case -EHWPOISON:
				goto out;
			}
			BUG_ON(1);
		}
		i++;
		start += PAGE_SIZE;
		nr_pages--;
	} while (nr_pages);
out:
	return i ? i : ret;
}

// mm/gup.c: populate_vma_page_range
static long populate_vma_page_range(vm_area_struct *vma, ulong start, ulong end)
{
	mm_struct *mm = vma->vm_mm;
	ulong nr_pages = (end - start) / PAGE_SIZE;
	unsigned int gup_flags;

	gup_flags = FOLL_TOUCH;
	/*
	 * We want to touch writable mappings with a write fault in order
	 * to break COW, except for shared mappings because these don't COW
	 * and we would not want to dirty them for nothing.
	 */
	if ((vma->vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE)
		gup_flags |= FOLL_WRITE;

	/*
	 * We want mlock to succeed for regions that have any permissions
	 * other than PROT_NONE.
	 */
	if (vma_is_accessible(vma))
		gup_flags |= FOLL_FORCE;

	return __get_user_pages(mm, start, nr_pages, gup_flags);
}

/*
 * mm/gup.c: __mm_populate - populate and/or mlock pages within a range of
 * address space. Errors skip to the next VMA when ignore_errors is set.
 */
int __mm_populate(ulong start, ulong len, int ignore_errors)
{
	mm_struct *mm = current->mm;
	ulong end, nstart, nend;
	vm_area_struct *vma = nullptr;
	long ret = 0;

	end = start + len;

	mmap_read_lock(mm);
	for (nstart = start; nstart < end; nstart = nend) {
		vma = find_vma_intersection(mm, nstart, end);
		if (!vma)
			break;
		/*
		 * Set [nstart; nend) to intersection of desired address
		 * range with the first VMA. Also, skip undesirable VMA types.
		 */
		nend = min(end, vma->vm_end);
		if (vma->vm_flags & (VM_IO | VM_PFNMAP))
			continue;
		if (nstart < vma->vm_start)
			nstart = vma->vm_start;
		/*
		 * Now fault in a range of pages. populate_vma_page_range()
		 * double checks the vma flags, so that it won't mlock pages
		 * if the vma was already munlocked.
		 */
		ret = populate_vma_page_range(vma, nstart, nend);
		if (ret < 0) {
			if (ignore_errors) {
				ret = 0;
				continue;	/* continue at next VMA */
			}
			break;
		}
		nend = nstart + ret * PAGE_SIZE;
		ret = 0;
	}
	mmap_read_unlock(mm);
	return ret;
}

}  // namespace fl::FL_ARCH_NS
