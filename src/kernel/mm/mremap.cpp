// SPDX-License-Identifier: GPL-2.0-only
// Port of mm/mremap.c: the checks of sys_mremap, vma_to_resize (growing a
// VM_DONTEXPAND mapping is refused with EFAULT), mremap_to and move_vma
// (copy_vma opens the new VMA, the old one is unmapped and closed).
#include "mm.h"

namespace fl::FL_ARCH_NS {

#define sysctl_max_map_count 65530

// mm/vma.c: copy_vma (for a move to a new, unmergeable place)
static vm_area_struct *copy_vma(vm_area_struct *vma, ulong addr, ulong len, pgoff_t pgoff)
{
	vm_area_struct *new_vma = vm_area_dup(vma);

	new_vma->vm_start = addr;
	new_vma->vm_end = addr + len;
	new_vma->vm_pgoff = pgoff;
	if (new_vma->vm_file)
		get_file(new_vma->vm_file);
	if (new_vma->vm_ops && new_vma->vm_ops->open)
		new_vma->vm_ops->open(new_vma);
	vma_link(vma->vm_mm, new_vma);
	return new_vma;
}

// mm/mremap.c: move_vma
static ulong move_vma(vm_area_struct *vma, ulong old_addr, ulong old_len, ulong new_len,
		      ulong new_addr, ulong flags)
{
	mm_struct *mm = vma->vm_mm;
	vm_area_struct *new_vma;
	ulong new_pgoff;
	int err = 0;

	/*
	 * We'd prefer to avoid failure later on in do_munmap:
	 * which may split one vma into three before unmapping.
	 */
	if (mm->map_count >= sysctl_max_map_count - 3)
		return -ENOMEM;

	if (vma->vm_ops && vma->vm_ops->may_split) {
		if (vma->vm_start != old_addr)
			err = vma->vm_ops->may_split(vma, old_addr);
		if (!err && vma->vm_end != old_addr + old_len)
			err = vma->vm_ops->may_split(vma, old_addr + old_len);
		if (err)
			return err;
	}

	new_pgoff = vma->vm_pgoff + ((old_addr - vma->vm_start) >> PAGE_SHIFT);
	vma_start_write(vma);
	new_vma = copy_vma(vma, new_addr, new_len, new_pgoff);

	move_page_tables(vma, old_addr, new_vma, new_addr, old_len);
	if (vma->vm_ops && vma->vm_ops->mremap)
		err = vma->vm_ops->mremap(new_vma);  /* the arena (2026) refuses */

	if (err) {
		/*
		 * On error, move entries back from new area to old,
		 * which will succeed since page tables still there,
		 * and then proceed to unmap new area instead of old.
		 */
		move_page_tables(new_vma, new_addr, vma, old_addr, old_len);
		vma = new_vma;
		old_len = new_len;
		old_addr = new_addr;
		new_addr = (ulong)(long)err;
	} else if (flags & MREMAP_DONTUNMAP) {
		return new_addr;  /* anonymous only: DONTUNMAP is refused for VM_DONTEXPAND */
	}

	if (do_munmap(mm, old_addr, old_len) < 0) {
		/* OOM: unable to split vma, just get accounts right */
	}
	return new_addr;
}

// mm/mremap.c: vma_to_resize
static vm_area_struct *vma_to_resize(ulong addr, ulong old_len, ulong new_len, ulong flags)
{
	mm_struct *mm = current->mm;
	vm_area_struct *vma;
	ulong pgoff;

	vma = vma_lookup(mm, addr);
	if (!vma)
		return ERR_PTR<vm_area_struct>(-EFAULT);

	/*
	 * !old_len is a special case where an attempt is made to 'duplicate'
	 * a mapping.  This makes no sense for private mappings as it will
	 * instead create a fresh/new mapping unrelated to the original.
	 */
	if (!old_len && !(vma->vm_flags & (VM_SHARED | VM_MAYSHARE)))
		return ERR_PTR<vm_area_struct>(-EINVAL);

	if ((flags & MREMAP_DONTUNMAP) &&
	    (vma->vm_flags & (VM_DONTEXPAND | VM_PFNMAP)))
		return ERR_PTR<vm_area_struct>(-EINVAL);

	/* We can't remap across vm area boundaries */
	if (old_len > vma->vm_end - addr)
		return ERR_PTR<vm_area_struct>(-EFAULT);

	if (new_len == old_len)
		return vma;

	/* Need to be careful about a growing mapping */
	pgoff = (addr - vma->vm_start) >> PAGE_SHIFT;
	pgoff += vma->vm_pgoff;
	if (pgoff + (new_len >> PAGE_SHIFT) < pgoff)
		return ERR_PTR<vm_area_struct>(-EINVAL);

	if (vma->vm_flags & (VM_DONTEXPAND | VM_PFNMAP))
		return ERR_PTR<vm_area_struct>(-EFAULT);

	/* mlock_future_ok / may_expand_vm: no limits in the machine */
	return vma;
}

// mm/mremap.c: vma_expandable
static int vma_expandable(vm_area_struct *vma, ulong delta)
{
	ulong end = vma->vm_end + delta;

	if (end < vma->vm_end) /* overflow */
		return 0;
	if (find_vma_intersection(vma->vm_mm, vma->vm_end, end))
		return 0;
	if (get_unmapped_area(nullptr, vma->vm_start, end - vma->vm_start, 0, MAP_FIXED) & ~PAGE_MASK)
		return 0;
	return 1;
}

// mm/mremap.c: mremap_to
static ulong mremap_to(ulong addr, ulong old_len, ulong new_addr, ulong new_len, ulong flags)
{
	mm_struct *mm = current->mm;
	vm_area_struct *vma;
	ulong ret = -EINVAL;
	ulong map_flags = 0;

	/*
	 * The address checks are all in check_mremap_params(); the VMA checks
	 * (check_prep_vma since v6.17) run before anything is unmapped: a
	 * failing move leaves the target alone. Found by the host oracle on
	 * 6.18, where the older order unmapped the target and then said
	 * -EFAULT.
	 */
	/* A shrinking move is checked as a move of the part that stays (the
	 * shrink runs first in 6.1 and 6.18 alike; found by the host oracle:
	 * a fixed shrinking move of a VM_DONTEXPAND VMA is not -EFAULT). */
	vma = vma_to_resize(addr, old_len, new_len > old_len ? new_len : old_len, flags);
	if (IS_ERR(vma)) {
		ret = PTR_ERR(vma);
		goto out;
	}

	if (flags & MREMAP_FIXED) {
		ret = do_munmap(mm, new_addr, new_len);
		if (ret)
			goto out;
		/* If we remap a VMA this may cause it to be removed or split. */
		vma = vma_lookup(mm, addr);
		if (!vma)
			return -EFAULT;
	}

	if (old_len > new_len) {
		ret = do_munmap(mm, addr + new_len, old_len - new_len);
		if (ret)
			goto out;
		old_len = new_len;
		vma = vma_lookup(mm, addr);
	}

	if (flags & MREMAP_FIXED)
		map_flags |= MAP_FIXED;

	if (vma->vm_flags & VM_MAYSHARE)
		map_flags |= MAP_SHARED;

	ret = get_unmapped_area(vma->vm_file, new_addr, new_len, vma->vm_pgoff +
				((addr - vma->vm_start) >> PAGE_SHIFT),
				map_flags);
	if (IS_ERR_VALUE(ret))
		goto out;

	/* We got a new mapping */
	if (!(flags & MREMAP_FIXED))
		new_addr = ret;

	ret = move_vma(vma, addr, old_len, new_len, new_addr, flags);

out:
	return ret;
}

/*
 * mm/mremap.c: check_mremap_params (v6.17 refactoring, "mm/mremap: permit
 * mremap() move of multiple VMAs" series): every check on the arguments
 * alone runs before the VMA is looked up. Found by the host oracle on
 * 6.18: an overlapping MREMAP_FIXED move of an unmapped range is -EINVAL
 * there, where the older order said -EFAULT.
 */
static ulong check_mremap_params(ulong addr, ulong old_len, ulong new_len, ulong flags, ulong new_addr)
{
	mm_struct *mm = current->mm;

	/* Ensure no unexpected flag values. */
	if (flags & ~(MREMAP_FIXED | MREMAP_MAYMOVE | MREMAP_DONTUNMAP))
		return -EINVAL;

	/* Start address must be page-aligned. */
	if (offset_in_page(addr))
		return -EINVAL;

	/*
	 * We allow a zero old-len as a special case
	 * for DOS-emu "duplicate shm area" thing. But
	 * a zero new-len is nonsensical.
	 */
	if (!new_len)
		return -EINVAL;

	/* Is the new length silly? */
	if (new_len > mm->task_size)
		return -EINVAL;

	/* Remainder of checks are for cases with specific new_addr. */
	if (!(flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)))
		return 0;

	/* Is the new address silly? */
	if (new_addr > mm->task_size - new_len)
		return -EINVAL;

	/* The new address must be page-aligned. */
	if (offset_in_page(new_addr))
		return -EINVAL;

	/* A fixed address implies a move. */
	if (!(flags & MREMAP_MAYMOVE))
		return -EINVAL;

	/* MREMAP_DONTUNMAP does not allow resizing in the process. */
	if (flags & MREMAP_DONTUNMAP && old_len != new_len)
		return -EINVAL;

	/* Target VMA must not overlap source VMA. */
	if (addr + old_len > new_addr && new_addr + new_len > addr)
		return -EINVAL;

	/*
	 * move_vma() need us to stay 4 maps below the threshold, otherwise
	 * it will bail out at the end after failing to split.
	 */
	if ((mm->map_count + 2) >= sysctl_max_map_count - 3)
		return -ENOMEM;

	return 0;
}

/*
 * mm/mremap.c: SYSCALL_DEFINE5(mremap, ...) - expand (or shrink) an existing
 * mapping, potentially moving it at the same time.
 */
ulong sys_mremap(ulong addr, ulong old_len, ulong new_len, ulong flags, ulong new_addr)
{
	mm_struct *mm = current->mm;
	vm_area_struct *vma;
	ulong ret;

	old_len = PAGE_ALIGN(old_len);
	new_len = PAGE_ALIGN(new_len);

	ret = check_mremap_params(addr, old_len, new_len, flags, new_addr);
	if (ret)
		return ret;

	mmap_write_lock(current->mm);
	vma = vma_lookup(mm, addr);
	if (!vma) {
		ret = -EFAULT;
		goto out;
	}

	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		ret = mremap_to(addr, old_len, new_addr, new_len, flags);
		goto out;
	}

	/*
	 * Always allow a shrinking remap: that just unmaps
	 * the unnecessary pages..
	 * do_vmi_munmap does all the needed commit accounting, and
	 * unlocks the mmap_lock if so directed.
	 */
	if (old_len >= new_len) {
		if (old_len == new_len) {
			ret = addr;
			goto out;
		}

		ret = do_vmi_munmap(mm, addr + new_len, old_len - new_len);
		if (ret)
			goto out;

		ret = addr;
		goto out;
	}

	/*
	 * Ok, we need to grow..
	 */
	vma = vma_to_resize(addr, old_len, new_len, flags);
	if (IS_ERR(vma)) {
		ret = PTR_ERR(vma);
		goto out;
	}
	/* from here on only anonymous reservations: BPF mappings are VM_DONTEXPAND */

	/* old_len exactly to the end of the area.. */
	if (old_len == vma->vm_end - addr) {
		/* can we just expand the current mapping? (vma_merge_extend;
		 * merging with a neighbour is not modelled) */
		if (vma_expandable(vma, new_len - old_len)) {
			vma_start_write(vma);  /* vma_expand -> vma_prepare */
			FL_SHARED_ACCESS(&vma->vm_start, kVmExtent, write, "vm_end");
			vma->vm_end = addr + new_len;
			ret = addr;
			goto out;
		}
	}

	/*
	 * We weren't able to just expand or shrink the area,
	 * we need to create a new one and move it..
	 */
	ret = -ENOMEM;
	if (flags & MREMAP_MAYMOVE) {
		ulong map_flags = 0;
		if (vma->vm_flags & VM_MAYSHARE)
			map_flags |= MAP_SHARED;

		new_addr = get_unmapped_area(vma->vm_file, 0, new_len,
					     vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT),
					     map_flags);
		if (IS_ERR_VALUE(new_addr)) {
			ret = new_addr;
			goto out;
		}
		ret = move_vma(vma, addr, old_len, new_len, new_addr, flags);
	}
out:
	mmap_write_unlock(current->mm);
	return ret;
}

}  // namespace fl::FL_ARCH_NS
