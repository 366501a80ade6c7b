// SPDX-License-Identifier: GPL-2.0-only
// Port of mm/memory.c: vm_insert_page, the file fault paths (do_fault,
// do_read_fault with fault-around, do_shared_fault, __do_fault, finish_fault
// with its one-reference-per-PTE rule and lost-race handling), PTE zapping,
// fork's copy_page_range and mremap's page-table move.
#include "mm.h"
#include "pagemap.h"

namespace fl::FL_ARCH_NS {

// mm/memory.c: fault_around_bytes = 64K, as pages
#define fault_around_pages ((ulong)65536 >> PAGE_SHIFT)

static ulong pte_index(ulong address)
{
	return (address >> PAGE_SHIFT) & (PTRS_PER_PTE - 1);
}

pte_t *pte_lookup(mm_struct *mm, ulong addr)
{
	return mm->ptes.find(addr);
}

// include/linux/pgtable.h: ptep_get_lockless - handle_pte_fault's first
// look, without the lock (a marked read)
static pte_t *ptep_get_lockless(mm_struct *mm, ulong addr)
{
	FL_SHARED_ACCESS(pte_shared_loc(mm, addr), kPteShared, marked_read, "pte");
	return pte_lookup(mm, addr);
}

// set_pte_at(mk_pte(page, vma->vm_page_prot)) + folio_add_file_rmap_pte +
// inc_mm_counter: the PTE now owns the reference the caller took.
static void set_pte_at(vm_area_struct *vma, ulong addr, page *pg)
{
	mm_struct *mm = vma->vm_mm;

	FL_SHARED_ACCESS(pte_shared_loc(mm, addr), kPteShared, write, "pte");
	mm->ptes.set(addr, mk_pte(pg, vma));
	pg->_mapcount++;
	kg->stats->ptes_installed++;
}

// mm/memory.c: zap_present_ptes for one PTE (rmap and reference dropped);
// the caller has cleared it (ptep_get_and_clear_full)
static void zap_pte(page *pg)
{
	pg->_mapcount--;
	put_page(pg);
	kg->stats->ptes_zapped++;
}

// mm/memory.c: validate_page_before_insert + insert_page_into_pte_locked
static int insert_page(vm_area_struct *vma, ulong addr, page *pg)
{
	mm_struct *mm = vma->vm_mm;

	BUG_ON(!pg);  /* the kernel would oops on a NULL page here */
	if (!page_ref_count(pg))
		return -EINVAL;
	kg->stats->ptl_locks++;  /* get_locked_pte() */
	spin_lock(pte_lockptr(mm));
	if (ptep_get(mm, addr)) {
		spin_unlock(pte_lockptr(mm));
		return -EBUSY;
	}
	get_page(pg);  /* folio_get */
	set_pte_at(vma, addr, pg);
	spin_unlock(pte_lockptr(mm));
	return 0;
}

/**
 * mm/memory.c: vm_insert_page - insert single page into user vma
 */
int vm_insert_page(vm_area_struct *vma, ulong addr, page *pg)
{
	if (addr < vma->vm_start || addr >= vma->vm_end)
		return -EFAULT;
	if (!(vma->vm_flags & VM_MIXEDMAP)) {
		/* BUG_ON(mmap_read_trylock(vma->vm_mm)): mmap_lock is held for write */
		BUG_ON(vma->vm_flags & VM_PFNMAP);
		vm_flags_set(vma, VM_MIXEDMAP);
	}
	return insert_page(vma, addr, pg);
}

// Used by ->map_pages handlers (set_pte_range under the window's PTL).
bool map_pages_install_pte(vm_fault *vmf, ulong addr, page *pg)
{
	set_pte_at(vmf->vma, addr, pg);
	return true;
}

// mm/memory.c: vmf_pte_changed (order-0: "is the PTE no longer none?")
static bool vmf_pte_changed(vm_fault *vmf)
{
	return ptep_get(vmf->vma->vm_mm, vmf->address) != nullptr;
}

/**
 * mm/memory.c: finish_fault - finish page fault once we have prepared the
 * page to fault in. Expects the page to be locked and on success it
 * consumes a reference.
 */
static vm_fault_t finish_fault(vm_fault *vmf)
{
	vm_area_struct *vma = vmf->vma;
	page *pg = vmf->pg;

#if defined(FL_PLANT_FINISH_FAULT_NO_PTL)
	/* planted slip (test-only build, -DFL_PLANT=finish_fault_no_ptl): the
	 * check and the set without the page-table lock. No scheduling point
	 * lies between them, so no schedule splits them: only the lockset
	 * checker (or access points) can see it. */
	if (vmf_pte_changed(vmf)) {
		kg->stats->lost_races++;
		return VM_FAULT_NOPAGE;
	}
	set_pte_at(vma, vmf->address, pg);
	return 0;
#elif defined(FL_PLANT_FAULT_REF_AFTER_UNLOCK)
	/* planted slip (test-only build, FL_SCHED_PLANTS): the reference the
	 * PTE will own dropped before the lock and taken again after it, so
	 * the page is mapped with one reference too few until the unlock's
	 * point has passed; the counts balance again when the fault returns */
	put_page(pg);
	kg->stats->ptl_locks++;
	spin_lock(pte_lockptr(vma->vm_mm));
	if (vmf_pte_changed(vmf)) {
		kg->stats->lost_races++;
		spin_unlock(pte_lockptr(vma->vm_mm));
		get_page(pg);
		return VM_FAULT_NOPAGE;
	}
	set_pte_at(vma, vmf->address, pg);
	spin_unlock(pte_lockptr(vma->vm_mm));
	get_page(pg);
	return 0;
#else
	kg->stats->ptl_locks++;  /* pte_offset_map_lock() */
	spin_lock(pte_lockptr(vma->vm_mm));
	/* Re-check under ptl */
	if (vmf_pte_changed(vmf)) {
		kg->stats->lost_races++;
		spin_unlock(pte_lockptr(vma->vm_mm));
		return VM_FAULT_NOPAGE;
	}

	set_pte_at(vma, vmf->address, pg);  /* set_pte_range */
	spin_unlock(pte_lockptr(vma->vm_mm));
	return 0;
#endif
}

// mm/memory.c: __do_fault
static vm_fault_t __do_fault(vm_fault *vmf)
{
	vm_area_struct *vma = vmf->vma;
	vm_fault_t ret;

	kg->stats->fault_handlers++;
	ret = vma->vm_ops->fault(vmf);
	if (ret & (VM_FAULT_ERROR | VM_FAULT_NOPAGE | VM_FAULT_RETRY | VM_FAULT_DONE_COW))
		return ret;

	/* folio_lock(folio) unless VM_FAULT_LOCKED: no lock state modelled */
	return ret;
}

// mm/memory.c: vmf_can_call_fault. ->fault-only vmops are not audited for
// the per-VMA lock: retry under mmap_lock.
static vm_fault_t vmf_can_call_fault(const vm_fault *vmf)
{
	vm_area_struct *vma = vmf->vma;

	if (vma->vm_ops->map_pages || !(vmf->flags & FAULT_FLAG_VMA_LOCK))
		return 0;
	vma_end_read(vma);
	kg->stats->vma_lock_retries++;
	return VM_FAULT_RETRY;
}

// mm/memory.c: should_fault_around
static bool should_fault_around(vm_fault *vmf)
{
	/* No ->map_pages?  No way to fault around... */
	if (!vmf->vma->vm_ops->map_pages)
		return false;

	/* A single page implies no faulting 'around' at all. */
	return fault_around_pages > 1;
}

/*
 * mm/memory.c: do_fault_around() tries to map few pages around the fault
 * address. The window is clamped to the VMA and to one page table.
 */
static vm_fault_t do_fault_around(vm_fault *vmf)
{
	pgoff_t nr_pages = fault_around_pages;
	pgoff_t pte_off = pte_index(vmf->address);
	/* The page offset of vmf->address within the VMA. */
	pgoff_t vma_off = vmf->pgoff - vmf->vma->vm_pgoff;
	pgoff_t from_pte, to_pte;
	vm_fault_t ret;

	/* The PTE offset of the start address, clamped to the VMA. */
	from_pte = max(ALIGN_DOWN(pte_off, nr_pages),
		       pte_off - min(pte_off, vma_off));

	/* The PTE offset of the end address, clamped to the VMA and PTE. */
	to_pte = min3(from_pte + nr_pages, (pgoff_t)PTRS_PER_PTE,
		      pte_off + vma_pages(vmf->vma) - vma_off) - 1;

	rcu_read_lock();
	kg->stats->map_pages_calls++;
	kg->stats->last_fault_around = {pte_off, vma_off, from_pte, to_pte, nr_pages,
		pte_off - min(pte_off, vma_off), pte_off + vma_pages(vmf->vma) - vma_off,
		PTRS_PER_PTE, 0};
	ret = vmf->vma->vm_ops->map_pages(vmf,
			vmf->pgoff + from_pte - pte_off,
			vmf->pgoff + to_pte - pte_off);
	rcu_read_unlock();

	return ret;
}

// mm/memory.c: do_read_fault
static vm_fault_t do_read_fault(vm_fault *vmf)
{
	vm_fault_t ret = 0;

	/*
	 * Let's call ->map_pages() first and use ->fault() as fallback
	 * if page by the offset is not ready to be mapped (cold cache or
	 * something).
	 */
	if (should_fault_around(vmf)) {
		ret = do_fault_around(vmf);
		if (ret)
			return ret;
	}

	ret = vmf_can_call_fault(vmf);
	if (ret)
		return ret;

	ret = __do_fault(vmf);
	if (ret & (VM_FAULT_ERROR | VM_FAULT_NOPAGE | VM_FAULT_RETRY))
		return ret;

	ret |= finish_fault(vmf);
	/* folio_unlock(folio); */
	if (kcfg->historic == Historic::finish_fault_put && (ret & VM_FAULT_NOPAGE))
		return ret;  /* historic finish_fault_put: the lost race forgets folio_put */
	if (ret & (VM_FAULT_ERROR | VM_FAULT_NOPAGE | VM_FAULT_RETRY))
		put_page(vmf->pg);  /* folio_put: the handler's reference */
	return ret;
}

// mm/memory.c: do_shared_fault (no ->page_mkwrite for BPF vmops)
static vm_fault_t do_shared_fault(vm_fault *vmf)
{
	vm_area_struct *vma = vmf->vma;
	vm_fault_t ret;

	ret = vmf_can_call_fault(vmf);
	if (ret)
		return ret;

	ret = __do_fault(vmf);
	if (ret & (VM_FAULT_ERROR | VM_FAULT_NOPAGE | VM_FAULT_RETRY))
		return ret;

	/*
	 * Check if the backing address space wants to know that the page is
	 * about to become writable
	 */
	BUG_ON(vma->vm_ops->page_mkwrite != nullptr);

	ret |= finish_fault(vmf);
	if (kcfg->historic == Historic::finish_fault_put && (ret & VM_FAULT_NOPAGE))
		return ret;  /* historic finish_fault_put: the lost race forgets put_page */
	if (ret & (VM_FAULT_ERROR | VM_FAULT_NOPAGE | VM_FAULT_RETRY)) {
		/* folio_unlock(folio); */
		put_page(vmf->pg);
		return ret;
	}

	/* fault_dirty_shared_page(vmf): no mapping to dirty-balance */
	return ret;
}

/*
 * mm/memory.c: do_fault. We enter with non-exclusive mmap_lock (to exclude
 * vma changes, but allow concurrent faults). The mmap_lock may have been
 * released depending on flags and our return value.
 */
static vm_fault_t do_fault(vm_fault *vmf)
{
	vm_area_struct *vma = vmf->vma;
	vm_fault_t ret;

	/*
	 * The VMA was not fully populated on mmap() or missing VM_DONTEXPAND
	 */
	if (!vma->vm_ops->fault) {
		kg->stats->ptl_locks++;
		spin_lock(pte_lockptr(vma->vm_mm));
		if (!ptep_get(vma->vm_mm, vmf->address))
			ret = VM_FAULT_SIGBUS;
		else
			ret = VM_FAULT_NOPAGE;
		spin_unlock(pte_lockptr(vma->vm_mm));
	} else if (!(vmf->flags & FAULT_FLAG_WRITE))
		ret = do_read_fault(vmf);
	else if (!(vma->vm_flags & VM_SHARED))
		ret = VM_FAULT_SIGBUS;  /* do_cow_fault: private file mappings never reach a BPF map */
	else
		ret = do_shared_fault(vmf);

	return ret;
}

/*
 * mm/memory.c: handle_mm_fault -> __handle_mm_fault -> handle_pte_fault,
 * for the order-0, non-huge case the BPF mapping needs.
 */
vm_fault_t handle_mm_fault(vm_area_struct *vma, ulong address, unsigned int flags)
{
	vm_fault vmf;

	kasan_check_vma(vma, __func__);
	vmf.vma = vma;
	vmf.address = address & PAGE_MASK;
	vmf.flags = flags;
	FL_SHARED_ACCESS(&vma->vm_start, kVmExtent, read, "vm_pgoff");
	vmf.pgoff = linear_page_index(vma, address);
	kg->stats->faults++;

	if (ptep_get_lockless(vma->vm_mm, vmf.address))
		return 0;  /* present: a spurious fault, or a racing fault won */

	if (vma_is_anonymous(vma))
		/* do_anonymous_page: the machine only uses anonymous memory
		 * as PROT_NONE reservations for MAP_FIXED targets and does not
		 * model anonymous pages. */
		return VM_FAULT_SIGSEGV;

	return do_fault(&vmf);
}

/*
 * mm/memory.c: zap_page_range_single / unmap_vmas -> zap_pte_range:
 * drop every PTE of the VMA's mm in [start, end) with its reference.
 */
void unmap_vmas(vm_area_struct *vma, ulong start, ulong end)
{
	mm_struct *mm = vma->vm_mm;

	const sched::Label &cleared = FL_SCHED_LABEL("pte");  /* ptep_get_and_clear_full */

#if !defined(FL_PLANT_ZAP_NO_PTL)
	kg->stats->ptl_locks++;
	spin_lock(pte_lockptr(mm));
#endif  /* planted slip (test-only build, FL_SCHED_PLANTS_MEASURED): the zap without the page-table lock */
	mm->ptes.take_range(start, end, [&]([[maybe_unused]] ulong addr, pte_t pte) {
		FL_SHARED_ACCESS_AT(pte_shared_loc(mm, addr), kPteShared, write, cleared);
		zap_pte(pte.pg);
	});
#if !defined(FL_PLANT_ZAP_NO_PTL)
	spin_unlock(pte_lockptr(mm));
#endif
}

void zap_page_range_single(vm_area_struct *vma, ulong address, ulong size)
{
	unmap_vmas(vma, address, address + size);
}

// mm/memory.c: vma_needs_copy
static bool vma_needs_copy(vm_area_struct *dst_vma, vm_area_struct *src_vma)
{
	/*
	 * Don't copy ptes where a page fault will fill them correctly.  Fork
	 * becomes much lighter when there are big shared or private readonly
	 * mappings. The tradeoff is that copy_page_range is more efficient
	 * than faulting.
	 */
	(void)src_vma;
	if (dst_vma->vm_flags & (VM_PFNMAP | VM_MIXEDMAP))
		return true;
	return false;  /* no anon_vma: BPF mappings are shared file mappings */
}

// mm/memory.c: copy_page_range (copy_present_pte for shared pages: the
// child PTE takes its own reference and rmap)
int copy_page_range(vm_area_struct *dst_vma, vm_area_struct *src_vma)
{
	mm_struct *src_mm = src_vma->vm_mm;
	const sched::Label &read = FL_SCHED_LABEL("src_pte");

	if (!vma_needs_copy(dst_vma, src_vma))
		return 0;

	kg->stats->ptl_locks++;
	spin_lock(pte_lockptr(dst_vma->vm_mm));
	spin_lock_nested(pte_lockptr(src_mm), SINGLE_DEPTH_NESTING);
	src_mm->ptes.for_range(src_vma->vm_start, src_vma->vm_end, [&](ulong addr, pte_t pte) {
		FL_SHARED_ACCESS_AT(pte_shared_loc(src_mm, addr), kPteShared, read, read);
		get_page(pte.pg);
		set_pte_at(dst_vma, addr, pte.pg);  /* the child's VMA has the parent's rights */
	});
	spin_unlock(pte_lockptr(src_mm));
	spin_unlock(pte_lockptr(dst_vma->vm_mm));
	return 0;
}

// mm/mremap.c: move_page_tables (the PTEs move; references move with them)
void move_page_tables(vm_area_struct *vma, ulong old_addr, vm_area_struct *new_vma, ulong new_addr, ulong len)
{
	mm_struct *mm = vma->vm_mm;
	std::vector<std::pair<ulong, pte_t>> moved;
	const sched::Label &moved_pte = FL_SCHED_LABEL("pte");

	kg->stats->ptl_locks++;
	spin_lock(pte_lockptr(mm));
	mm->ptes.take_range(old_addr, old_addr + len, [&](ulong addr, pte_t pte) {
		FL_SHARED_ACCESS_AT(pte_shared_loc(mm, addr), kPteShared, write, moved_pte);
		moved.emplace_back(addr - old_addr + new_addr, pte);
	});
	for (auto &[addr, pte] : moved) {
		FL_SHARED_ACCESS_AT(pte_shared_loc(new_vma->vm_mm, addr), kPteShared, write, moved_pte);
		new_vma->vm_mm->ptes.set(addr, pte);
	}
	spin_unlock(pte_lockptr(mm));
}

}  // namespace fl::FL_ARCH_NS
