// SPDX-License-Identifier: GPL-2.0-only
// Port of arch/x86/mm/fault.c: do_user_addr_fault for a user access whose
// PTE is missing or forbids the access. First under the per-VMA lock
// (lock_vma_under_rcu); a VM_FAULT_RETRY falls back to the mmap_lock.
#include <csignal>

#include "mm.h"

namespace fl::FL_ARCH_NS {

// arch/x86/mm/fault.c: access_error
static int access_error(bool write, bool present, vm_area_struct *vma)
{
	FL_SHARED_ACCESS(&vma->vm_flags, kVmFlags, read, "vm_flags");
	if (write) {
		/* write, present and write, not present: */
		if (!(vma->vm_flags & VM_WRITE))
			return 1;
		return 0;
	}

	/* read, present: */
	if (present)
		return 1;

	/* read, not present: */
	if (!vma_is_accessible(vma))
		return 1;

	return 0;
}

// arch/x86/mm/fault.c: mm_fault_error (the signals)
static int mm_fault_error(vm_fault_t fault)
{
	if (fault & VM_FAULT_OOM)
		return SIGKILL;  /* pagefault_out_of_memory */
	if (fault & (VM_FAULT_SIGBUS | VM_FAULT_HWPOISON))
		return SIGBUS;   /* do_sigbus */
	return SIGSEGV;          /* VM_FAULT_SIGSEGV: bad_area_nosemaphore */
}

/*
 * arch/x86/mm/fault.c: do_user_addr_fault. Returns the signal the access
 * raises, or 0 once the PTE is present.
 */
int do_user_addr_fault(ulong address, bool write)
{
	mm_struct *mm = current->mm;
	unsigned int flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_USER;
	bool present = pte_lookup(mm, address & PAGE_MASK) != nullptr;
	vm_area_struct *vma;
	vm_fault_t fault;

	if (write)
		flags |= FAULT_FLAG_WRITE;

	/*
	 * lock_vma_under_rcu(): the VMA read lock is a trylock under RCU; when
	 * it fails (write-locked, or spuriously: a schedule's "fail") the fault
	 * retries under mmap_lock (lock_mm_and_find_vma, a plain
	 * mmap_read_lock here: the port has no trylock on that path).
	 */
	rcu_read_lock();
	{
		/* mas_walk under RCU: a declared lockless walk (locking.h kVmaTree) */
		::fl::sched::MarkedAccess rcu_walk;
		vma = vma_lookup(mm, address);
	}
	if (vma && !vma_start_read(vma))
		vma = nullptr;
	rcu_read_unlock();
	if (!vma)
		goto lock_mmap;

	if (access_error(write, present, vma)) {
		vma_end_read(vma);
		return SIGSEGV;  /* bad_area_access_error */
	}
	fault = handle_mm_fault(vma, address, flags | FAULT_FLAG_VMA_LOCK);
	if (!(fault & VM_FAULT_RETRY))
		vma_end_read(vma);
	if (!(fault & VM_FAULT_RETRY))
		goto done;

lock_mmap:
	/* lock_mm_and_find_vma() */
	mmap_read_lock(mm);
	vma = vma_lookup(mm, address);
	if (!vma) {
		mmap_read_unlock(mm);
		return SIGSEGV;  /* bad_area_nosemaphore */
	}

	if (access_error(write, present, vma)) {
		mmap_read_unlock(mm);
		return SIGSEGV;
	}

	fault = handle_mm_fault(vma, address, flags);
	mmap_read_unlock(mm);

done:
	if (fault & VM_FAULT_ERROR)
		return mm_fault_error(fault);
	return 0;
}

}  // namespace fl::FL_ARCH_NS
