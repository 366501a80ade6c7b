// SPDX-License-Identifier: GPL-2.0-only
// Port of mm/madvise.c for MADV_DONTNEED (zap: VM_MIXEDMAP is not refused)
// and MADV_DONTFORK / MADV_DOFORK (VM_DONTCOPY, splitting as needed).
#include "mm.h"

namespace fl::FL_ARCH_NS {

// mm/madvise.c: madvise_dontneed_free_valid_vma (non-hugetlb)
static bool madvise_dontneed_free_valid_vma(vm_area_struct *vma)
{
	vm_flags_t forbidden = VM_PFNMAP | VM_LOCKED;

	return !(vma->vm_flags & forbidden);
}

// mm/madvise.c: madvise_dontneed_free -> madvise_dontneed_single_vma
static int madvise_dontneed_free(vm_area_struct *vma, vm_area_struct **prev, ulong start, ulong end)
{
	*prev = vma;
	if (!madvise_dontneed_free_valid_vma(vma))
		return -EINVAL;
	if (start == end)
		return 0;
	zap_page_range_single(vma, start, end - start);
	return 0;
}

// mm/madvise.c: madvise_vma_behavior for DONTFORK/DOFORK -> madvise_update_vma
static int madvise_vma_behavior(vm_area_struct *vma, vm_area_struct **prev, ulong start, ulong end,
				int behavior)
{
	vm_flags_t new_flags = vma->vm_flags;

	switch (behavior) {
	case MADV_DONTNEED:
		return madvise_dontneed_free(vma, prev, start, end);
	case MADV_DONTFORK:
		new_flags |= VM_DONTCOPY;
		break;
	case MADV_DOFORK:
		if (vma->vm_flags & VM_IO)
			return -EINVAL;
		new_flags &= ~VM_DONTCOPY;
		break;
	}

	if (new_flags == vma->vm_flags) {
		*prev = vma;
		return 0;
	}
	vma = vma_modify_flags(vma, start, end, new_flags);
	if (IS_ERR(vma))
		return PTR_ERR(vma);
	*prev = vma;
	vm_flags_reset(vma, new_flags);
	return 0;
}

/*
 * mm/madvise.c: madvise_walk_vmas - walk the vmas in range [start,end) and
 * call the visit function on each one. Holes give -ENOMEM after the walk.
 */
static int madvise_walk_vmas(mm_struct *mm, ulong start, ulong end, int behavior)
{
	vm_area_struct *vma, *prev = nullptr;
	ulong tmp;
	int unmapped_error = 0;
	int error;

	vma = find_vma(mm, start);
	for (;;) {
		/* Still start < end. */
		if (!vma)
			return -ENOMEM;

		/* Here start < (end|vma->vm_end). */
		if (start < vma->vm_start) {
			unmapped_error = -ENOMEM;
			start = vma->vm_start;
			if (start >= end)
				break;
		}

		/* Here vma->vm_start <= start < (end|vma->vm_end) */
		tmp = vma->vm_end;
		if (end < tmp)
			tmp = end;

		/* Here vma->vm_start <= start < tmp <= (end|vma->vm_end). */
		error = madvise_vma_behavior(vma, &prev, start, tmp, behavior);
		if (error)
			return error;
		start = tmp;
		if (prev && start < prev->vm_end)
			start = prev->vm_end;
		if (start >= end)
			break;
		vma = find_vma(mm, prev ? prev->vm_end : start);
	}

	return unmapped_error;
}

// mm/madvise.c: madvise_behavior_valid (the subset ported)
static bool madvise_behavior_valid(int behavior)
{
	return behavior == MADV_DONTNEED || behavior == MADV_DONTFORK || behavior == MADV_DOFORK;
}

// mm/madvise.c: do_madvise
int do_madvise(mm_struct *mm, ulong start, size_t len_in, int behavior)
{
	ulong end;
	size_t len;

	if (!madvise_behavior_valid(behavior))
		return -EINVAL;

	if (!PAGE_ALIGNED(start))
		return -EINVAL;
	len = PAGE_ALIGN(len_in);

	/* Check to see whether len was rounded up from small -ve to zero */
	if (len_in && !len)
		return -EINVAL;

	end = start + len;
	if (end < start)
		return -EINVAL;

	if (end == start)
		return 0;

	/* madvise_lock: madvise_need_mmap_write() is false only for DONTNEED */
	int error;
	if (behavior == MADV_DONTNEED)
		mmap_read_lock(mm);
	else
		mmap_write_lock(mm);
	error = madvise_walk_vmas(mm, start, end, behavior);
	if (behavior == MADV_DONTNEED)
		mmap_read_unlock(mm);
	else
		mmap_write_unlock(mm);
	return error;
}

}  // namespace fl::FL_ARCH_NS
