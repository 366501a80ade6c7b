// SPDX-License-Identifier: GPL-2.0-only
// Port of mm/mmap.c (+ mm/util.c vm_mmap_pgoff): ksys_mmap_pgoff holding the
// fd's file, do_mmap with its checks in order (including file_mmap_ok),
// mmap_region with the undo of a failed f_op->mmap, get_unmapped_area
// (top-down), munmap and exit_mmap.
#include "mm.h"

namespace fl::FL_ARCH_NS {

#define mmap_min_addr ((ulong)65536)
#define sysctl_max_map_count 65530
#define LEGACY_MAP_MASK (MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS | MAP_DENYWRITE | \
			 MAP_EXECUTABLE | MAP_UNINITIALIZED | MAP_GROWSDOWN | MAP_LOCKED | \
			 MAP_NORESERVE | MAP_POPULATE | MAP_NONBLOCK | MAP_STACK | MAP_HUGETLB)


// mm/mmap.c: find_vma - the first VMA with vm_end > addr
vm_area_struct *find_vma(mm_struct *mm, ulong addr)
{
	FL_SHARED_ACCESS(&mm->mmap, kVmaTree, read, "mm_mt");
	for (vm_area_struct *vma : mm->mmap)
		if (vma->vm_end > addr)
			return vma;
	return nullptr;
}

// include/linux/mm.h: vma_lookup - the VMA containing addr
vm_area_struct *vma_lookup(mm_struct *mm, ulong addr)
{
	vm_area_struct *vma = find_vma(mm, addr);
	return vma && vma->vm_start <= addr ? vma : nullptr;
}

// include/linux/mm.h: find_vma_intersection - first VMA overlapping [start, end)
vm_area_struct *find_vma_intersection(mm_struct *mm, ulong start, ulong end)
{
	vm_area_struct *vma = find_vma(mm, start);
	return vma && vma->vm_start < end ? vma : nullptr;
}

// fs/file_table.c: fput (the last reference releases the file). The file
// and its inode go to KASAN's quarantine, not back to the allocator.
void fput(file *f)
{
	if (!kasan_check_file(f, "fput"))
		return;
	if (--f->f_count)
		return;
	if (f->f_op->release)
		f->f_op->release(f);
	f->kasan_freed = true;
	kg->kasan_objects.emplace_back(std::shared_ptr<inode>(f->f_inode));
	kg->kasan_objects.emplace_back(std::shared_ptr<file>(f));
}

/*
 * mm/mmap.c: vm_unmapped_area (top-down): the highest gap of `len` bytes
 * below mm->mmap_base and above mmap_min_addr.
 */
static ulong unmapped_area_topdown(mm_struct *mm, ulong len)
{
	ulong gap_end = mm->mmap_base;

	for (auto it = mm->mmap.rbegin(); it != mm->mmap.rend(); ++it) {
		vm_area_struct *vma = *it;
		if (vma->vm_start >= gap_end)
			continue;
		if (vma->vm_end <= gap_end && gap_end - vma->vm_end >= len)
			return gap_end - len;
		gap_end = min(gap_end, vma->vm_start);
	}
	if (gap_end >= mmap_min_addr && gap_end - mmap_min_addr >= len)
		return gap_end - len;
	return (ulong)-ENOMEM;
}

// arch/x86/kernel/sys_x86_64.c: arch_get_unmapped_area_topdown (generic part)
ulong mm_get_unmapped_area(mm_struct *mm, file *f, ulong addr, ulong len, ulong pgoff, ulong flags)
{
	(void)f, (void)pgoff;
	/* requested length too big for entire address space */
	if (len > mm->task_size - mmap_min_addr)
		return -ENOMEM;

	if (flags & MAP_FIXED)
		return addr;

	/* requesting a specific address */
	if (addr) {
		addr = PAGE_ALIGN(addr);
		if (mm->task_size - len >= addr && addr >= mmap_min_addr &&
		    !find_vma_intersection(mm, addr, addr + len))
			return addr;
	}

	return unmapped_area_topdown(mm, len);
}

// mm/mmap.c: __get_unmapped_area
ulong get_unmapped_area(file *f, ulong addr, ulong len, ulong pgoff, ulong flags)
{
	mm_struct *mm = current->mm;

	/* Careful about overflows.. */
	if (len > mm->task_size)
		return -ENOMEM;

	if (f && f->f_op->get_unmapped_area)
		addr = f->f_op->get_unmapped_area(f, addr, len, pgoff, flags);
	else
		addr = mm_get_unmapped_area(mm, f, addr, len, pgoff, flags);
	if (IS_ERR_VALUE(addr))
		return addr;

	if (addr > mm->task_size - len)
		return -ENOMEM;
	if (offset_in_page(addr))
		return -EINVAL;

	return addr;
}

// include/linux/mman.h: calc_vm_flag_bits
static vm_flags_t calc_vm_flag_bits(ulong flags)
{
	return ((flags & MAP_LOCKED) ? VM_LOCKED : 0);
}

// include/linux/fs.h: file_mmap_size_max
static u64 file_mmap_size_max(file *f, inode *ino)
{
	(void)f;
	if (S_ISREG(ino->i_mode))
		return MAX_LFS_FILESIZE;

	/* Yes, random drivers might want more. But I'm tired of buggy drivers */
	return ULONG_MAX;
}

// include/linux/fs.h: file_mmap_ok
static bool file_mmap_ok(file *f, inode *ino, ulong pgoff, ulong len)
{
	u64 maxsize = file_mmap_size_max(f, ino);

	if (maxsize && len > maxsize)
		return false;
	maxsize -= len;
	if (pgoff > maxsize >> PAGE_SHIFT)
		return false;
	return true;
}

// The `direct` front door hands any VMA to f_op->mmap: it skips do_mmap's
// two offset checks, and nothing else.
static bool direct_door(void)
{
	return kcfg->door == Door::direct;
}

/*
 * mm/mmap.c: mmap_region. The VMA is built, f_op->mmap called; on failure
 * the VMA is unmapped (partial PTEs zapped) without ->close.
 */
static ulong mmap_region(file *f, ulong addr, ulong len, vm_flags_t vm_flags, ulong pgoff)
{
	mm_struct *mm = current->mm;
	vm_area_struct *vma;
	int error;

	/* Unmap any existing mapping in the area */
	if (do_vmi_munmap(mm, addr, len))
		return -ENOMEM;

	vma = vm_area_alloc(mm);
	vma->vm_start = addr;
	vma->vm_end = addr + len;
	vma->vm_flags = vm_flags;
	vma->vm_pgoff = pgoff;

	if (f) {
		vma->vm_file = get_file(f);
		error = f->f_op->mmap(f, vma);  /* call_mmap */
		if (error)
			goto unmap_and_free_vma;
	}
	/* anonymous: vma_set_anonymous(vma), vm_ops stays NULL */

	vma_link(mm, vma);
	return addr;

unmap_and_free_vma:
	fput(vma->vm_file);
	vma->vm_file = nullptr;
	/* Undo any partial mapping done by a device driver. */
	unmap_vmas(vma, vma->vm_start, vma->vm_end);
	vm_area_free(vma);
	return error;
}

/*
 * mm/mmap.c: do_mmap. The caller must write-lock current->mm->mmap_lock.
 */
ulong do_mmap(file *f, ulong addr, ulong len, ulong prot, ulong flags, vm_flags_t vm_flags,
	      ulong pgoff, ulong *populate)
{
	mm_struct *mm = current->mm;

	*populate = 0;

	if (!len)
		return -EINVAL;

	/* force arch specific MAP_FIXED handling in get_unmapped_area */
	if (flags & MAP_FIXED_NOREPLACE)
		flags |= MAP_FIXED;

	/* Careful about overflows.. */
	len = PAGE_ALIGN(len);
	if (!len)
		return -ENOMEM;

	/* offset overflow? */
	if (!direct_door() && (pgoff + (len >> PAGE_SHIFT)) < pgoff)
		return -EOVERFLOW;

	/* Too many mappings? */
	if (mm->map_count > sysctl_max_map_count)
		return -ENOMEM;

	/* Obtain the address to map to. we verify (or select) it and ensure
	 * that it represents a valid section of the address space.
	 */
	addr = get_unmapped_area(f, addr, len, pgoff, flags);
	if (IS_ERR_VALUE(addr))
		return addr;

	if (flags & MAP_FIXED_NOREPLACE) {
		if (find_vma_intersection(mm, addr, addr + len))
			return -EEXIST;
	}

	/* Do simple checking here so the lower-level routines won't have
	 * to. we assume access permissions have been handled by the open
	 * of the memory object, so we don't do any here.
	 */
	vm_flags |= calc_vm_prot_bits(prot) | calc_vm_flag_bits(flags) |
		    VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC;

	if (f) {
		inode *ino = file_inode(f);
		ulong flags_mask;

		if (!direct_door() && !file_mmap_ok(f, ino, pgoff, len))
			return -EOVERFLOW;

		flags_mask = LEGACY_MAP_MASK;

		switch (flags & MAP_TYPE) {
		case MAP_SHARED:
			/*
			 * Force use of MAP_SHARED_VALIDATE with non-legacy
			 * flags. E.g. MAP_SYNC is dangerous to use with
			 * MAP_SHARED as you don't know which consistency model
			 * you will get. We silently ignore unsupported flags
			 * with MAP_SHARED to preserve backward compatibility.
			 */
			flags &= LEGACY_MAP_MASK;
			[[fallthrough]];
		case MAP_SHARED_VALIDATE:
			if (flags & ~flags_mask)
				return -EOPNOTSUPP;
			if (prot & PROT_WRITE) {
				if (!(f->f_mode & FMODE_WRITE))
					return -EACCES;
			}

			vm_flags |= VM_SHARED | VM_MAYSHARE;
			if (!(f->f_mode & FMODE_WRITE))
				vm_flags &= ~(VM_MAYWRITE | VM_SHARED);
			[[fallthrough]];
		case MAP_PRIVATE:
			if (!(f->f_mode & FMODE_READ))
				return -EACCES;
			if (path_noexec(f)) {
				if (vm_flags & VM_EXEC)
					return -EPERM;
				vm_flags &= ~VM_MAYEXEC;
			}

			if (!f->f_op->mmap)
				return -ENODEV;
			if (vm_flags & VM_GROWSDOWN)
				return -EINVAL;
			break;

		default:
			return -EINVAL;
		}
	} else {
		switch (flags & MAP_TYPE) {
		case MAP_PRIVATE:
			/*
			 * Set pgoff according to addr for anon_vma.
			 */
			pgoff = addr >> PAGE_SHIFT;
			break;
		default:
			return -EINVAL;  /* shared anonymous memory is not modelled */
		}
	}

	addr = mmap_region(f, addr, len, vm_flags, pgoff);
	if (!IS_ERR_VALUE(addr) &&
	    ((vm_flags & VM_LOCKED) ||
	     (flags & (MAP_POPULATE | MAP_NONBLOCK)) == MAP_POPULATE))
		*populate = len;
	return addr;
}

// mm/util.c: vm_mmap_pgoff (mmap_write_lock, do_mmap, unlock, mm_populate)
ulong vm_mmap_pgoff(file *f, ulong addr, ulong len, ulong prot, ulong flag, ulong pgoff)
{
	ulong ret, populate;

	mmap_write_lock(current->mm);
	ret = do_mmap(f, addr, len, prot, flag, 0, pgoff, &populate);
	mmap_write_unlock(current->mm);
	if (populate && !IS_ERR_VALUE(ret)) {
		sched_point("mm_populate");  /* the MAP_POPULATE window: the VMA is visible, not yet populated */
		__mm_populate(ret, populate, 1);  /* mm_populate: errors ignored */
	}
	return ret;
}

/*
 * mm/mmap.c: ksys_mmap_pgoff. The file is held from fget to fput, across
 * vm_mmap_pgoff and its sleeps, so a concurrent close(2) cannot free it under
 * do_mmap. No hugetlbfs in the port: is_file_hugepages() is false, and the
 * MAP_HUGETLB branches are left out (the port ignores the flag, as before).
 */
ulong ksys_mmap_pgoff(ulong addr, ulong len, ulong prot, ulong flags, ulong fd, ulong pgoff)
{
	file *f = nullptr;
	ulong retval;

	if (!(flags & MAP_ANONYMOUS)) {
		f = fget((unsigned int)fd);
		if (!f)
			return -EBADF;
	}

	retval = vm_mmap_pgoff(f, addr, len, prot, flags, pgoff);
	if (f)
		fput(f);
	return retval;
}

// mm/mmap.c: do_munmap
int do_munmap(mm_struct *mm, ulong start, size_t len)
{
	return do_vmi_munmap(mm, start, len);
}

// mm/mmap.c: __vm_munmap (munmap(2): do_vmi_munmap under mmap_write_lock)
int __vm_munmap(ulong start, size_t len)
{
	int ret;
	mm_struct *mm = current->mm;

	mmap_write_lock(mm);
	ret = do_munmap(mm, start, len);
	mmap_write_unlock(mm);
	return ret;
}

// mm/mmap.c: exit_mmap - zap everything, then close and free every VMA
void exit_mmap(mm_struct *mm)
{
	mmap_write_lock(mm);  /* exit_mmap takes it for read, then for write */
	FL_SHARED_ACCESS(&mm->mmap, kVmaTree, read, "mm_mt");
	std::vector<vm_area_struct *> vmas = mm->mmap;

	for (vm_area_struct *vma : vmas)
		unmap_vmas(vma, vma->vm_start, vma->vm_end);
	for (vm_area_struct *vma : vmas) {
		vma_unlink(mm, vma);
		remove_vma(vma);
	}
	mmap_write_unlock(mm);
}

}  // namespace fl::FL_ARCH_NS
