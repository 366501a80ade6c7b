// SPDX-License-Identifier: GPL-2.0-only
// Port of kernel/fork.c: dup_mmap. Every VMA without VM_DONTCOPY is
// duplicated and ->open'ed; PTEs are copied only where vma_needs_copy()
// says so (VM_MIXEDMAP: the eager mapping), otherwise the child refaults.
// And the mm's user count: the address space is torn down (exit_mmap) only
// when its last user drops it (mmput), never while a task still runs in it.
#include "mm.h"

namespace fl::FL_ARCH_NS {

// kernel/fork.c: dup_mmap
int dup_mmap(mm_struct *mm, mm_struct *oldmm)
{
	int retval = 0;

	mmap_write_lock(oldmm);
	mmap_write_lock_nested(mm);
	mm->mmap_base = oldmm->mmap_base;
	mm->task_size = oldmm->task_size;
	FL_SHARED_ACCESS(&oldmm->mmap, kVmaTree, read, "mm_mt");  /* for_each_vma(vmi, mpnt) */
	for (vm_area_struct *mpnt : std::vector<vm_area_struct *>(oldmm->mmap)) {
		vm_area_struct *tmp;

		/* fb49c455323f ("fork: lock VMAs of the parent process when
		 * forking"): no fault may change the parent's VMA under the copy */
		vma_start_write(mpnt);
		if (mpnt->vm_flags & VM_DONTCOPY)
			continue;
		tmp = vm_area_dup(mpnt);
		tmp->vm_mm = mm;
		if (tmp->vm_file)
			get_file(tmp->vm_file);

		/* Link the vma into the MT */
		vma_link(mm, tmp);

		if (tmp->vm_ops && tmp->vm_ops->open)
			tmp->vm_ops->open(tmp);

		retval = copy_page_range(tmp, mpnt);
		if (retval)
			break;
	}
	mmap_write_unlock(mm);
	mmap_write_unlock(oldmm);
	return retval;
}

// include/linux/sched/mm.h: mmget - pin the address space (mm_users). The
// port's atomic_inc is a plain increment: no scheduling point.
void mmget(mm_struct *mm)
{
	mm->mm_users++;
}

// kernel/fork.c: __mmput - the last user is gone: everything the port models
// of it is exit_mmap (no uprobes, aio, ksm, khugepaged, mmdrop).
static void __mmput(mm_struct *mm)
{
	exit_mmap(mm);
}

// kernel/fork.c: mmput - decrement the use count and release all resources
// for an mm when it reaches zero.
void mmput(mm_struct *mm)
{
	if (--mm->mm_users == 0)  /* atomic_dec_and_test */
		__mmput(mm);
}

}  // namespace fl::FL_ARCH_NS
