// SPDX-License-Identifier: GPL-2.0-only
// Port of kernel/bpf/syscall.c: map create/update/lookup/freeze, the map
// file's mmap (bpf_map_mmap), the VMA open/close write-active accounting and
// bpf_map_default_vmops with the lazy series' .fault (v1+) and .map_pages (v3).
#include <vector>

#include "bpf.h"

namespace fl::FL_ARCH_NS {

// kernel/bpf/syscall.c: bpf_map_write_active_inc/_dec/bpf_map_write_active
void bpf_map_write_active_inc(bpf_map *map)
{
	kasan_check_map(map, __func__);
	atomic64_inc(&map->writecnt);
}

void bpf_map_write_active_dec(bpf_map *map)
{
	kasan_check_map(map, __func__);
#if defined(FL_PLANT_WRITECNT_DEC_SPLIT)
	/* planted slip (test-only build, FL_SCHED_PLANTS_MEASURED): the
	 * decrement as a read and a set (an update split in two) */
	WRITE_ONCE(map->writecnt, atomic64_read(&map->writecnt) - 1);
#else
	atomic64_dec(&map->writecnt);
#endif
}

bool bpf_map_write_active(bpf_map *map)
{
	return atomic64_read(&map->writecnt) != 0;
}

// kernel/bpf/syscall.c: map_get_sys_perms
static fmode_t map_get_sys_perms(bpf_map *map, struct fd f)
{
	fmode_t mode = f.file->f_mode;

	/* Our file permissions may have been overridden by global
	 * map permissions facing syscall side.
	 */
	if (READ_ONCE(map->frozen))
		mode &= ~FMODE_CAN_WRITE;
	return mode;
}

// kernel/bpf/syscall.c: bpf_map_put -> bpf_map_free_deferred -> ops->map_free
void bpf_map_put(bpf_map *map)
{
	kasan_check_map(map, __func__);
	if (--map->refcnt == 0)
		map->ops->map_free(map);
}

// kernel/bpf/syscall.c: bpf_map_release (the map file's last fput)
static void bpf_map_release(file *f)
{
	bpf_map_put(static_cast<bpf_map *>(f->private_data));
}

// kernel/bpf/syscall.c: bpf_map_mmap_open. Called for VMAs made by split,
// fork and mremap; not for the VMA of the initial mmap.
static void bpf_map_mmap_open(vm_area_struct *vma)
{
	bpf_map *map = static_cast<bpf_map *>(vma->vm_file->private_data);

	kasan_check_map_vma(vma, map, __func__);
#if defined(FL_PLANT_MMAP_CLOSE_PUT)
	/* planted slip (test-only build, FL_SCHED_PLANTS): each VMA pins the
	 * map, but ->open is not called for the initial mmap's VMA, so the
	 * last ->close drops a reference nobody took */
	map->refcnt++;  /* bpf_map_inc */
#endif
	if (vma->vm_flags & VM_MAYWRITE)
		bpf_map_write_active_inc(map);
}

// kernel/bpf/syscall.c: bpf_map_mmap_close. Called for every VMA torn down.
static void bpf_map_mmap_close(vm_area_struct *vma)
{
	bpf_map *map = static_cast<bpf_map *>(vma->vm_file->private_data);

	kasan_check_map_vma(vma, map, __func__);
	if (vma->vm_flags & VM_MAYWRITE)
		bpf_map_write_active_dec(map);
#if defined(FL_PLANT_MMAP_CLOSE_PUT)
	bpf_map_put(map);
#endif
}

/*
 * kernel/bpf/syscall.c (lazy series): bpf_map_mmap_fault.
 * Called for maps that populate their memory-mapped region lazily, i.e. that
 * return without wiring up any PTEs from their ->map_mmap callback. Maps that
 * populate the whole VMA eagerly (e.g. via remap_vmalloc_range()) never reach
 * here.
 */
static vm_fault_t bpf_map_mmap_fault(vm_fault *vmf)
{
	bpf_map *map = static_cast<bpf_map *>(vmf->vma->vm_private_data);

	kasan_check_map_vma(vmf->vma, map, __func__);
	if (!map->ops->map_mmap_fault)
		return VM_FAULT_SIGBUS;

	return map->ops->map_mmap_fault(map, vmf);
}

// kernel/bpf/syscall.c (v3, UNCONFIRMED): bpf_map_mmap_pages, the
// ->map_pages batch handler, dispatched like .fault.
static vm_fault_t bpf_map_mmap_pages(vm_fault *vmf, pgoff_t start_pgoff, pgoff_t end_pgoff)
{
	bpf_map *map = static_cast<bpf_map *>(vmf->vma->vm_private_data);

	kasan_check_map_vma(vmf->vma, map, __func__);
	if (!map->ops->map_mmap_pages)
		return 0;

	return map->ops->map_mmap_pages(map, vmf, start_pgoff, end_pgoff);
}

// kernel/bpf/syscall.c: bpf_map_default_vmops, one table per patch level.
static const vm_operations_struct bpf_map_default_vmops_pre = {
	.open = bpf_map_mmap_open,
	.close = bpf_map_mmap_close,
};
static const vm_operations_struct bpf_map_default_vmops_lazy = {
	.open = bpf_map_mmap_open,
	.close = bpf_map_mmap_close,
	.fault = bpf_map_mmap_fault,
};
static const vm_operations_struct bpf_map_default_vmops_v3 = {
	.open = bpf_map_mmap_open,
	.close = bpf_map_mmap_close,
	.fault = bpf_map_mmap_fault,
	.map_pages = bpf_map_mmap_pages,
};
#define bpf_map_default_vmops \
	(kcfg->patch == Patch::pre ? bpf_map_default_vmops_pre : \
	 kcfg->patch == Patch::v3 ? bpf_map_default_vmops_v3 : bpf_map_default_vmops_lazy)

/*
 * kernel/bpf/syscall.c: bpf_map_mmap before bc27c52eea18 ("bpf: avoid holding
 * freeze_mutex during mmap operation", Jan 2025): freeze_mutex is held across
 * vm_flags_clear (the VMA write lock, under mmap_lock) and ->map_mmap, and
 * write-active is bumped only after ->map_mmap succeeded. The historical
 * level freeze_mutex_2025 (syzbot+4dc041c686b7c816a71e); the checks above
 * the mutex are shared with the fixed function.
 */
static int bpf_map_mmap_freeze_mutex_2025(bpf_map *map, vm_area_struct *vma)
{
	int err = 0;

	mutex_lock(&map->freeze_mutex);

	if (vma->vm_flags & VM_WRITE) {
		if (map->frozen) {
			err = -EPERM;
			goto out;
		}
		/* map is meant to be read-only, so do not allow mapping as
		 * writable, because it's possible to leak a writable page
		 * reference and allows user-space to still modify it after
		 * freezing, while verifier will assume contents do not change
		 */
		if (map->map_flags & BPF_F_RDONLY_PROG) {
			err = -EACCES;
			goto out;
		}
	}

	/* set default open/close callbacks */
	vma->vm_ops = &bpf_map_default_vmops;
	vma->vm_private_data = map;
	vm_flags_clear(vma, VM_MAYEXEC);
	if (!(vma->vm_flags & VM_WRITE))
		/* disallow re-mapping with PROT_WRITE */
		vm_flags_clear(vma, VM_MAYWRITE);

	err = map->ops->map_mmap(map, vma);
	if (err)
		goto out;

	if (vma->vm_flags & VM_MAYWRITE)
		bpf_map_write_active_inc(map);
out:
	mutex_unlock(&map->freeze_mutex);
	return err;
}

// kernel/bpf/syscall.c: bpf_map_mmap, every check in order.
static int bpf_map_mmap(file *filp, vm_area_struct *vma)
{
	bpf_map *map = static_cast<bpf_map *>(filp->private_data);
	int err = 0;

	if (!map->ops->map_mmap || map->record)
		return -ENOTSUPP;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	if (kcfg->historic == Historic::freeze_mutex_2025)
		return bpf_map_mmap_freeze_mutex_2025(map, vma);

	mutex_lock(&map->freeze_mutex);

	if (vma->vm_flags & VM_WRITE) {
		if (map->frozen) {
			err = -EPERM;
			goto out;
		}
		/* map is meant to be read-only, so do not allow mapping as
		 * writable, because it's possible to leak a writable page
		 * reference and allows user-space to still modify it after
		 * freezing, while verifier will assume contents do not change
		 */
		if (map->map_flags & BPF_F_RDONLY_PROG) {
			err = -EACCES;
			goto out;
		}
#if !defined(FL_PLANT_MMAP_INC_AFTER_UNLOCK)
		bpf_map_write_active_inc(map);
#endif
	}
out:
	mutex_unlock(&map->freeze_mutex);
	if (err)
		return err;
#if defined(FL_PLANT_MMAP_INC_AFTER_UNLOCK)
	/* planted slip (test-only build, FL_SCHED_PLANTS): the count taken
	 * after freeze_mutex is dropped, so a freeze can pass between the
	 * frozen check and it */
	if (vma->vm_flags & VM_WRITE)
		bpf_map_write_active_inc(map);
#endif

	/* set default open/close callbacks */
	vma->vm_ops = &bpf_map_default_vmops;
	vma->vm_private_data = map;
	vm_flags_clear(vma, VM_MAYEXEC);
	/* If mapping is read-only, then disallow potentially re-mapping with
	 * PROT_WRITE by dropping VM_MAYWRITE flag. This VM_MAYWRITE clearing
	 * means that as far as BPF map's memory-mapped VMAs are concerned,
	 * VM_WRITE and VM_MAYWRITE and equivalent, if one of them is set,
	 * both should be set, so we can forget about VM_MAYWRITE and always
	 * check just VM_WRITE
	 */
	if (!(vma->vm_flags & VM_WRITE))
		vm_flags_clear(vma, VM_MAYWRITE);

	err = map->ops->map_mmap(map, vma);
	if (err) {
		if (vma->vm_flags & VM_WRITE)
			bpf_map_write_active_dec(map);
	}

	return err;
}

// kernel/bpf/syscall.c: bpf_get_unmapped_area (the arena has its own)
static ulong bpf_get_unmapped_area(file *filp, ulong addr, ulong len, ulong pgoff, ulong flags)
{
	bpf_map *map = static_cast<bpf_map *>(filp->private_data);

	if (map->ops->map_get_unmapped_area)
		return map->ops->map_get_unmapped_area(filp, addr, len, pgoff, flags);
	return mm_get_unmapped_area(current->mm, filp, addr, len, pgoff, flags);
}

const file_operations bpf_map_fops = {
	.mmap = bpf_map_mmap,
	.get_unmapped_area = bpf_get_unmapped_area,
	.release = bpf_map_release,
};

// kernel/bpf/syscall.c: bpf_get_file_flag
static int bpf_get_file_flag(u32 flags)
{
	if ((flags & BPF_F_RDONLY) && (flags & BPF_F_WRONLY))
		return -EINVAL;
	if (flags & BPF_F_RDONLY)
		return FMODE_READ;
	if (flags & BPF_F_WRONLY)
		return FMODE_WRITE;
	return FMODE_READ | FMODE_WRITE;
}

// kernel/bpf/syscall.c: map_create -> find_and_alloc_map -> bpf_map_new_fd
// (anon_inode_getfd("bpf-map", &bpf_map_fops, map, flags)). The front door
// decides the inode: today's typeless anon inode, or S_IFREG (`regular`).
long map_create(bpf_attr_map_create *attr, file **filep)
{
	const bpf_map_ops *ops;
	bpf_map *map;
	int f_flags, err;

	f_flags = bpf_get_file_flag(attr->map_flags);
	if (f_flags < 0)
		return f_flags;

	/* find_and_alloc_map: the arena exists only on 64-bit kernels */
	if (attr->map_type == BPF_MAP_TYPE_ARENA && BITS_PER_LONG == 64)
		ops = &arena_map_ops;
	else if (attr->map_type == BPF_MAP_TYPE_ARRAY)
		ops = array_map_ops_for(kcfg->patch);
	else
		return -EINVAL;

	if (ops->map_alloc_check) {
		err = ops->map_alloc_check(attr);
		if (err)
			return err;
	}
	map = ops->map_alloc(attr);
	if (IS_ERR(map))
		return PTR_ERR(map);
	map->ops = ops;

	file *f = new file;
	f->f_inode = new inode;
	/* "Historically anonymous inodes don't have a type at all" */
	f->f_inode->i_mode = S_IRUSR | S_IWUSR |
			     (kcfg->door == Door::regular ? S_IFREG : 0);
	/* fs/anon_inodes.c: anon_inodefs_init_fs_context raises SB_I_NODEV |
	 * SB_I_NOEXEC ("anon_inode: raise SB_I_NODEV and SB_I_NOEXEC", v6.15).
	 * Confirmed by the host oracle on 6.18: mmap(PROT_EXEC) -> -EPERM. */
	f->f_inode->i_sb_iflags = SB_I_NODEV | SB_I_NOEXEC;
	f->f_op = &bpf_map_fops;
	f->private_data = map;
	/* do_dentry_open: FMODE_CAN_* since bpf_map_fops has (dummy) read/write */
	f->f_mode = (fmode_t)f_flags;
	if (f->f_mode & FMODE_READ)
		f->f_mode |= FMODE_CAN_READ;
	if (f->f_mode & FMODE_WRITE)
		f->f_mode |= FMODE_CAN_WRITE;
	*filep = f;
	return 0;
}

/*
 * kernel/bpf/syscall.c: __bpf_map_get. "if error is returned, fd is
 * released. On success caller should complete fd access with matching
 * fdput()".
 */
static bpf_map *__bpf_map_get(struct fd f)
{
	if (!f.file)
		return ERR_PTR<bpf_map>(-EBADF);
	if (f.file->f_op != &bpf_map_fops) {
		fdput(f);
		return ERR_PTR<bpf_map>(-EINVAL);
	}

	kasan_check_file(f.file, __func__);
	kasan_check_map(static_cast<bpf_map *>(f.file->private_data), __func__);
	return static_cast<bpf_map *>(f.file->private_data);
}

// kernel/bpf/syscall.c: map_update_elem. Upstream's CLASS(fd, f)(ufd) is
// the fdget here and an fdput at every return (6.1's explicit fdget/fdput);
// the same in map_lookup_elem and map_freeze.
long map_update_elem(int ufd, u32 key, const void *value, u64 flags)
{
	bpf_map *map;
	struct fd f;
	long err;

	f = fdget(ufd);
	map = __bpf_map_get(f);
	if (IS_ERR(map))
		return PTR_ERR(map);
	/* historic toctou_2021: before "bpf: Fix toctou on read-only map's
	 * constant scalar tracking" syscall writers were not write-active */
	if (kcfg->historic != Historic::toctou_2021)
		bpf_map_write_active_inc(map);
	if (!(map_get_sys_perms(map, f) & FMODE_CAN_WRITE)) {
		err = -EPERM;
		goto err_put;
	}

	if ((flags & BPF_F_LOCK) && !map->record) {
		err = -EINVAL;
		goto err_put;
	}

	might_fault();  /* ___bpf_copy_key / kvmemdup_bpfptr: copy_from_user */
	err = map->ops->map_update_elem(map, &key, value, flags);
err_put:
	if (kcfg->historic != Historic::toctou_2021)
		bpf_map_write_active_dec(map);
	fdput(f);
	return err;
}

// kernel/bpf/syscall.c: map_lookup_elem -> bpf_map_copy_value
long map_lookup_elem(int ufd, u32 key, void *value)
{
	bpf_map *map;
	struct fd f;
	ulong ptr;
	long err;

	f = fdget(ufd);
	map = __bpf_map_get(f);
	if (IS_ERR(map))
		return PTR_ERR(map);
	if (!(map_get_sys_perms(map, f) & FMODE_CAN_READ)) {
		err = -EPERM;
		goto err_put;
	}

	ptr = map->ops->map_lookup_elem(map, &key);
	if (!ptr) {
		err = -ENOENT;
		goto err_put;
	}
	kernel_memcpy_from(value, ptr, map->value_size);
	err = 0;
err_put:
	fdput(f);
	return err;
}

// kernel/bpf/syscall.c: map_freeze
long map_freeze(int ufd)
{
	bpf_map *map;
	struct fd f;
	long err = 0;

	f = fdget(ufd);
	map = __bpf_map_get(f);
	if (IS_ERR(map))
		return PTR_ERR(map);

	if (map->record) {
		fdput(f);
		return -ENOTSUPP;
	}

	if (!(map_get_sys_perms(map, f) & FMODE_CAN_WRITE)) {
		fdput(f);
		return -EPERM;
	}

#if defined(FL_PLANT_FREEZE_RECHECK)
	/* planted slip (test-only build, -DFL_PLANT=freeze_recheck): an
	 * unlocked fast-path check of write-active, and the re-check under
	 * freeze_mutex leaves with err still 0. A writer that became active
	 * in between is told nothing: the freeze returns 0 and did not freeze
	 * (no state is wrong, only the return value). */
	if (bpf_map_write_active(map)) {
		fdput(f);
		return -EBUSY;
	}
	mutex_lock(&map->freeze_mutex);
	if (bpf_map_write_active(map))
		goto err_put;
#else
	mutex_lock(&map->freeze_mutex);
	if (bpf_map_write_active(map)) {
		err = -EBUSY;
		goto err_put;
	}
#endif
	if (READ_ONCE(map->frozen)) {
		err = -EBUSY;
		goto err_put;
	}

	WRITE_ONCE(map->frozen, true);
err_put:
	mutex_unlock(&map->freeze_mutex);
	fdput(f);
	return err;
}

}  // namespace fl::FL_ARCH_NS
