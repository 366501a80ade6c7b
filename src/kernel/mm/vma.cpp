// SPDX-License-Identifier: GPL-2.0-only
// Port of mm/vma.c (and the VMA allocation helpers of kernel/fork.c):
// vm_area_alloc/dup/free, linking into the mm, __split_vma/split_vma,
// vma_modify_flags, remove_vma and do_vmi_munmap / do_vmi_align_munmap.
//
// Merging is not ported: every BPF map VMA has vm_ops->close, which makes
// it unmergeable (is_mergeable_vma), and the only other VMAs are PROT_NONE
// reservations. A merge of two of those changes map_count and what an
// mremap/munmap range crosses (the host oracle's anon_vma_merge entry,
// src/oracle/host_differences.cpp), never the BPF fault path.
#include <algorithm>

#include "mm.h"

namespace fl::FL_ARCH_NS {

#define sysctl_max_map_count 65530

// kernel/fork.c: vm_area_alloc
vm_area_struct *vm_area_alloc(mm_struct *mm)
{
	vm_area_struct *vma = new vm_area_struct;
	vma->vm_mm = mm;
	return vma;
}

// kernel/fork.c: vm_area_dup
vm_area_struct *vm_area_dup(vm_area_struct *orig)
{
	return new vm_area_struct(*orig);
}

// kernel/fork.c: vm_area_free. The memory goes to KASAN's quarantine (kg),
// so a stale pointer to it is reported rather than followed into reuse.
void vm_area_free(vm_area_struct *vma)
{
	vma->kasan_freed = true;
	kg->kasan_quarantine.emplace_back(vma);
}

// mm/kasan/report.c: kasan_report (the first report wins until the machine reads it)
void kasan_report(const char *what, const char *where)
{
	if (kg->kasan_report.empty())
		kg->kasan_report = std::string("BUG: KASAN: ") + what + " in " + where;
}

// mm/vma.c: vma_link (the maple-tree store plus map_count)
void vma_link(mm_struct *mm, vm_area_struct *vma)
{
	vma_start_write(vma);
	FL_SHARED_ACCESS(&mm->mmap, kVmaTree, write, "mm_mt");
	auto pos = std::lower_bound(mm->mmap.begin(), mm->mmap.end(), vma,
				    [](auto *a, auto *b) { return a->vm_start < b->vm_start; });
	mm->mmap.insert(pos, vma);
	mm->map_count++;
}

void vma_unlink(mm_struct *mm, vm_area_struct *vma)
{
	vma_start_write(vma);  /* vma_mark_detached: no reader may hold it */
	FL_SHARED_ACCESS(&mm->mmap, kVmaTree, write, "mm_mt");
	mm->mmap.erase(std::find(mm->mmap.begin(), mm->mmap.end(), vma));
	mm->map_count--;
}

/*
 * mm/vma.c: __split_vma() bypasses sysctl_max_map_count checking. We use
 * this where it has already been checked or doesn't make sense to fail.
 * VMA Iterator will point to the original VMA.
 */
int __split_vma(vm_area_struct *vma, ulong addr, int new_below)
{
	vm_area_struct *n;
	int err;

	BUG_ON(vma->vm_start >= addr);
	BUG_ON(vma->vm_end <= addr);

	if (vma->vm_ops && vma->vm_ops->may_split) {
		err = vma->vm_ops->may_split(vma, addr);
		if (err)
			return err;
	}

	vma_start_write(vma);  /* vma_prepare */
	n = vm_area_dup(vma);

	if (new_below) {
		n->vm_end = addr;
	} else {
		n->vm_start = addr;
		n->vm_pgoff += ((addr - vma->vm_start) >> PAGE_SHIFT);
	}

	if (n->vm_file)
		get_file(n->vm_file);

#if !defined(FL_PLANT_SPLIT_LINK_BEFORE_OPEN)
	if (n->vm_ops && n->vm_ops->open)
		n->vm_ops->open(n);
#endif

	FL_SHARED_ACCESS(&vma->vm_start, kVmExtent, write, "vm_start");  /* the linked half */
	if (new_below) {
		vma->vm_start = addr;
		vma->vm_pgoff += (addr - n->vm_start) >> PAGE_SHIFT;
	} else {
		vma->vm_end = addr;
	}

	/* vma_complete stores the new vma */
	vma_link(vma->vm_mm, n);
#if defined(FL_PLANT_SPLIT_LINK_BEFORE_OPEN)
	/* planted slip (test-only build, FL_SCHED_PLANTS): the new VMA linked
	 * before ->open counts it, so a VM_MAYWRITE mapping is live and not
	 * write-active until the open; balanced again when the split returns */
	if (n->vm_ops && n->vm_ops->open)
		n->vm_ops->open(n);
#endif
	return 0;
}

/*
 * mm/vma.c: split_vma - Split a vma into two pieces at address 'addr', a new
 * vma is allocated either for the first part or the tail.
 */
int split_vma(vm_area_struct *vma, ulong addr, int new_below)
{
	if (vma->vm_mm->map_count >= sysctl_max_map_count)
		return -ENOMEM;

	return __split_vma(vma, addr, new_below);
}

/*
 * mm/vma.c: vma_modify_flags -> vma_modify: split off what lies outside
 * [start, end) and return the VMA that covers exactly [start, end). The
 * caller sets the new flags.
 */
vm_area_struct *vma_modify_flags(vm_area_struct *vma, ulong start, ulong end, vm_flags_t new_flags)
{
	int err;

	(void)new_flags;  /* only used for the (unported) merge attempt */
	/* Split any preceding portion of VMA. */
	if (vma->vm_start < start) {
		err = split_vma(vma, start, 1);
		if (err)
			return ERR_PTR<vm_area_struct>(err);
	}

	/* Split any trailing portion of VMA. */
	if (vma->vm_end > end) {
		err = split_vma(vma, end, 0);
		if (err)
			return ERR_PTR<vm_area_struct>(err);
	}

	return vma;
}

// mm/vma.c: remove_vma - close and free a detached VMA
void remove_vma(vm_area_struct *vma)
{
	if (vma->vm_ops && vma->vm_ops->close)
		vma->vm_ops->close(vma);
	if (vma->vm_file)
		fput(vma->vm_file);
	vm_area_free(vma);
}

/*
 * mm/vma.c: do_vmi_align_munmap() - munmap the aligned region from @start to
 * @end. Splits the first and last VMA as needed (the new pieces are opened),
 * zaps the detached range and closes every detached VMA.
 */
static int do_vmi_align_munmap(vm_area_struct *vma, mm_struct *mm, ulong start, ulong end)
{
	std::vector<vm_area_struct *> detached;
	int error;

	/*
	 * If we need to split any vma, do it now to save pain later.
	 */
	if (start > vma->vm_start) {
		/*
		 * Make sure that map_count on return from munmap() will
		 * not exceed its limit; but let map_count go just above
		 * its limit temporarily, to help free resources as expected.
		 */
		if (end < vma->vm_end && mm->map_count >= sysctl_max_map_count)
			return -ENOMEM;

		error = __split_vma(vma, start, 1);
		if (error)
			return error;
	}

	/* Does it split the end? Detach every VMA in [start, end). */
	for (vm_area_struct *next = vma; next && next->vm_start < end;
	     next = find_vma(mm, next->vm_end)) {
		if (next->vm_end > end) {
			error = __split_vma(next, end, 0);
			if (error)
				return error;
		}
		detached.push_back(next);
	}

	for (vm_area_struct *v : detached)
		vma_unlink(mm, v);
	/* unmap_region(): zap the page tables of the detached range */
	for (vm_area_struct *v : detached)
		unmap_vmas(v, v->vm_start, v->vm_end);
	for (vm_area_struct *v : detached)
		remove_vma(v);
	return 0;
}

/*
 * mm/vma.c: do_vmi_munmap() - munmap a given range. Returns 0 on success or
 * -errno.
 */
int do_vmi_munmap(mm_struct *mm, ulong start, size_t len)
{
	ulong end;
	vm_area_struct *vma;

	if ((offset_in_page(start)) || start > mm->task_size || len > mm->task_size - start)
		return -EINVAL;

	end = start + PAGE_ALIGN(len);
	if (end == start)
		return -EINVAL;

	/* Find the first overlapping VMA */
	vma = find_vma_intersection(mm, start, end);
	if (!vma)
		return 0;

	return do_vmi_align_munmap(vma, mm, start, end);
}

}  // namespace fl::FL_ARCH_NS
