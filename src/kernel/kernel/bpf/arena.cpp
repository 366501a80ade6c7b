// SPDX-License-Identifier: GPL-2.0-only
// Port of kernel/bpf/arena.c (BPF_MAP_TYPE_ARENA): map creation, the user
// mmap rules (arena_get_unmapped_area, arena_map_mmap), the VMA list with
// its refcount, the lazy fault path (arena_vm_fault: a user touch of an
// unallocated page allocates it), and the kfuncs bpf_arena_alloc_pages /
// free_pages (which zaps every user VMA) / reserve_pages, as a sleepable
// BPF program calls them (the 6.18 host: no non-sleepable variants).
//
// The VMA lifetime handling exists at three historical levels (kcfg->arena):
//   fixed      - 4fddde2a732d "bpf: Fix use-after-free in arena_vm_close on
//                fork" (2026): VM_DONTCOPY, ->may_split and ->mremap refuse;
//   fork_uaf   - "bpf: Fix remap of arena." (2024): ->open and the
//                mmap_count refcount, but a forked, split or moved VMA shares
//                the vma_list entry that still points at the first VMA;
//   mremap_uaf - the original arena: no ->open, so the first ->close frees
//                the entry every copy of the VMA shares.
// The kernel VM area is the port's vm_struct with VM_SPARSE; its page map is
// init_mm's page table for the arena (apply_to_page_range).
#include <algorithm>
#include <map>

#include "bpf.h"

namespace fl::FL_ARCH_NS {

// The kernel's long: arena.c is built only for 64-bit kernels (map_create
// refuses the type at 32 bits), so in the port it is s64 at either width.
typedef s64 klong;

/* number of bytes addressable by LDX/STX insn with 16-bit 'off' field */
#define GUARD_SZ round_up((u64)1 << 16, (u64)PAGE_SIZE << 1)
#define KERN_VM_SZ (SZ_4G + GUARD_SZ)

// kernel/bpf/range_tree.c: the free page ranges of the arena (the kernel
// keeps them in two rbtrees, by start and by size; here one ordered map of
// disjoint, non-adjacent [start, end) runs).
struct range_tree {
	std::map<u64, u64> free;  /* start -> end */
};

// kernel/bpf/arena.c: struct vma_list. `kasan_freed` is not kernel: a freed
// entry stays allocated (KASAN quarantine) so a later access is reported.
struct vma_list {
	vm_area_struct *vma = nullptr;
	long mmap_count = 0;  /* refcount_t */
	bool kasan_freed = false;
};

// kernel/bpf/arena.c: struct bpf_arena (no spinlock/mutex: one thread).
struct bpf_arena {
	bpf_map map;
	u64 user_vm_start = 0;
	u64 user_vm_end = 0;
	vm_struct *kern_vm = nullptr;
	range_tree rt;
	std::vector<struct vma_list *> vma_list;  /* struct list_head, newest first */
	std::vector<std::unique_ptr<struct vma_list>> kasan_quarantine;  /* every entry ever allocated */
};

static bpf_arena *container_of_arena(bpf_map *map) { return reinterpret_cast<bpf_arena *>(map); }

// kernel/bpf/range_tree.c: range_tree_clear (mark [start, start+len) used)
static int range_tree_clear(range_tree *rt, u32 start, u32 len)
{
	u64 s = start, e = (u64)start + len;
	auto it = rt->free.upper_bound(s);
	if (it != rt->free.begin())
		--it;
	while (it != rt->free.end() && it->first < e) {
		u64 rs = it->first, re = it->second;
		if (re <= s) {
			++it;
			continue;
		}
		it = rt->free.erase(it);
		if (rs < s)
			rt->free[rs] = s;
		if (re > e)
			rt->free[e] = re;
	}
	return 0;
}

// kernel/bpf/range_tree.c: range_tree_set (mark [start, start+len) free, merging neighbours)
static int range_tree_set(range_tree *rt, u32 start, u32 len)
{
	u64 s = start, e = (u64)start + len;
	if (!len)
		return 0;
	range_tree_clear(rt, start, len);  /* then one run covers it */
	auto next = rt->free.find(e);
	if (next != rt->free.end()) {
		e = next->second;
		rt->free.erase(next);
	}
	auto it = rt->free.lower_bound(s);
	if (it != rt->free.begin() && std::prev(it)->second == s) {
		--it;
		s = it->first;
		rt->free.erase(it);
	}
	rt->free[s] = e;
	return 0;
}

// kernel/bpf/range_tree.c: is_range_tree_set: 0 iff every page is free
static int is_range_tree_set(range_tree *rt, u32 start, u32 len)
{
	auto it = rt->free.upper_bound(start);
	if (it == rt->free.begin())
		return -ESRCH;
	--it;
	return it->first <= start && it->second >= (u64)start + len ? 0 : -ESRCH;
}

// kernel/bpf/range_tree.c: range_tree_find: a free run of len pages, or
// -ENOENT. UNCONFIRMED which run the kernel's size tree picks; the lowest.
static s64 range_tree_find(range_tree *rt, u32 len)
{
	for (auto &[s, e] : rt->free)
		if (e - s >= len)
			return (s64)s;
	return -ENOENT;
}

// kernel/bpf/arena.c: bpf_arena_get_kern_vm_start
u64 bpf_arena_get_kern_vm_start(bpf_arena *arena)
{
	return arena ? (u64)arena->kern_vm->addr + GUARD_SZ / 2 : 0;
}

// kernel/bpf/arena.c: bpf_arena_get_user_vm_start
u64 bpf_arena_get_user_vm_start(bpf_arena *arena)
{
	return arena ? arena->user_vm_start : 0;
}

// Not kernel: accessors for the machine's invariants.
vm_struct *arena_kern_vm(bpf_arena *arena) { return arena->kern_vm; }
u64 arena_user_vm_end(bpf_arena *arena) { return arena->user_vm_end; }
std::vector<vm_area_struct *> arena_vma_list(bpf_arena *arena)
{
	std::vector<vm_area_struct *> out;
	for (vma_list *vml : arena->vma_list)
		out.push_back(vml->vma);
	return out;
}

// kernel/bpf/arena.c: compute_pgoff
static klong compute_pgoff(bpf_arena *arena, klong uaddr)
{
	return (u32)(uaddr - (u32)arena->user_vm_start) >> PAGE_SHIFT;
}

// kernel/bpf/arena.c: the kernel page at kaddr (the PTE apply_range_set_cb set), or NULL.
static page *arena_kernel_page(bpf_arena *arena, u64 kaddr)
{
	(void)arena;
	return vmalloc_to_page((ulong)kaddr);
}

// kernel/bpf/arena.c: apply_to_page_range(.., apply_range_set_cb, data) for
// one page: -EBUSY if a PTE is already there (the sanity check).
static int apply_range_set_cb(bpf_arena *arena, u64 kaddr, std::unique_ptr<page> pg)
{
	vm_struct *area = arena->kern_vm;
	ulong index = (ulong)((kaddr - area->addr) >> PAGE_SHIFT);

	if (area->pages.count(index))
		return -EBUSY;
	pg->area_id = area->id;
	pg->index = index;
	area->pages[index] = std::move(pg);
	return 0;
}

// kernel/bpf/arena.c: apply_range_clear_cb for one page: the PTE is cleared
// and the page handed back (to be freed after the user VMAs are zapped).
static page *apply_range_clear_cb(bpf_arena *arena, u64 kaddr)
{
	vm_struct *area = arena->kern_vm;
	auto it = area->pages.find((ulong)((kaddr - area->addr) >> PAGE_SHIFT));
	page *pg;

	if (it == area->pages.end())
		return nullptr; /* nothing to do */
	pg = it->second.get();
	kg->freed_pages.push_back(std::move(it->second));
	area->pages.erase(it);
	return pg;
}

// kernel/bpf/syscall.c: bpf_map_alloc_pages (order-0, zeroed, memcg-charged):
// one page, or -ENOMEM when the machine's RAM is used up.
static int bpf_map_alloc_pages(bpf_map *map, std::unique_ptr<page> *out)
{
	(void)map;
	if (kg->vmalloc_pages_used + 1 > kg->totalram_pages)
		return -ENOMEM;
	kg->vmalloc_pages_used++;
	*out = std::make_unique<page>();  /* __GFP_ZERO: fill 0 */
	return 0;
}

// mm/page_alloc.c: __free_page for an arena page
static void arena_free_page(page *pg)
{
	kg->vmalloc_pages_used--;
	put_page(pg);
}

// kernel/bpf/arena.c: arena_map_alloc
static bpf_map *arena_map_alloc(bpf_attr_map_create *attr)
{
	vm_struct *kern_vm;
	bpf_arena *arena;
	u64 vm_range;

	if (attr->key_size || attr->value_size || attr->max_entries == 0 ||
	    /* BPF_F_MMAPABLE must be set */
	    !(attr->map_flags & BPF_F_MMAPABLE) ||
	    /* No unsupported flags present */
	    (attr->map_flags & ~(BPF_F_SEGV_ON_FAULT | BPF_F_MMAPABLE | BPF_F_NO_USER_CONV)))
		return ERR_PTR<bpf_map>(-EINVAL);

	if (attr->map_extra & ~(u64)PAGE_MASK)
		/* If non-zero the map_extra is an expected user VMA start address */
		return ERR_PTR<bpf_map>(-EINVAL);

	vm_range = (u64)attr->max_entries * PAGE_SIZE;
	if (vm_range > SZ_4G)
		return ERR_PTR<bpf_map>(-E2BIG);

	if ((attr->map_extra >> 32) != ((attr->map_extra + vm_range - 1) >> 32))
		/* user vma must not cross 32-bit boundary */
		return ERR_PTR<bpf_map>(-ERANGE);

	kern_vm = get_vm_area((ulong)KERN_VM_SZ, VM_SPARSE | VM_USERMAP);
	if (!kern_vm)
		return ERR_PTR<bpf_map>(-ENOMEM);

	arena = new bpf_arena;
	arena->kern_vm = kern_vm;
	arena->user_vm_start = attr->map_extra;
	if (arena->user_vm_start)
		arena->user_vm_end = arena->user_vm_start + vm_range;

	/* bpf_map_init_from_attr */
	arena->map.map_type = attr->map_type;
	arena->map.key_size = attr->key_size;
	arena->map.value_size = attr->value_size;
	arena->map.max_entries = attr->max_entries;
	arena->map.map_flags = attr->map_flags & ~(BPF_F_RDONLY | BPF_F_WRONLY);
	arena->map.numa_node = attr->numa_node;
	arena->map.map_extra = attr->map_extra;
	range_tree_set(&arena->rt, 0, attr->max_entries);
	/* populate_pgtable_except_pte: nothing to model */
	return &arena->map;
}

// kernel/bpf/arena.c: arena_map_free
static void arena_map_free(bpf_map *map)
{
	bpf_arena *arena = container_of_arena(map);

	/*
	 * Check that user vma-s are not around when bpf map is freed.
	 * mmap() holds vm_file which holds bpf_map refcnt.
	 * munmap() must have happened on vma followed by arena_vm_close()
	 * which would clear arena->vma_list.
	 */
	if (WARN_ON_ONCE(!arena->vma_list.empty())) {
		/* The kernel returns here and leaks the arena; only reachable
		 * at the historical levels. Report it like KASAN would, and (not
		 * kernel) free the harness's memory anyway. */
		kasan_report("WARN_ON_ONCE(!list_empty(&arena->vma_list))", "arena_map_free");
		arena->vma_list.clear();
	}

	/* apply_to_existing_page_range(.., existing_page_cb): free every page */
	for (auto &[idx, pg] : arena->kern_vm->pages) {
		(void)idx;
		arena_free_page(pg.get());
		kg->freed_pages.push_back(std::move(pg));
	}
	arena->kern_vm->pages.clear();
	free_vm_area(arena->kern_vm);
	arena->map.kasan_freed = true;  /* bpf_map_area_free: into KASAN's quarantine */
	kg->kasan_objects.emplace_back(std::shared_ptr<bpf_arena>(arena));
}

// kernel/bpf/arena.c: remember_vma
static int remember_vma(bpf_arena *arena, vm_area_struct *vma)
{
	vma_list *vml;

	arena->kasan_quarantine.push_back(std::make_unique<struct vma_list>());
	vml = arena->kasan_quarantine.back().get();
	vml->mmap_count = 1;  /* refcount_set */
	vma->vm_private_data = vml;
	vml->vma = vma;
	arena->vma_list.insert(arena->vma_list.begin(), vml);  /* list_add */
	return 0;
}

// kernel/bpf/arena.c: kfree(vml), into the quarantine
static void arena_kfree_vml(vma_list *vml)
{
	if (vml->kasan_freed)
		kasan_report("double-free of a vma_list", "arena_vm_close");
	vml->kasan_freed = true;
}

// kernel/bpf/arena.c: list_del(&vml->head)
static void arena_list_del(bpf_arena *arena, vma_list *vml)
{
	if (vml->kasan_freed) {
		kasan_report("slab-use-after-free of a vma_list", "arena_vm_close");
		return;
	}
	auto it = std::find(arena->vma_list.begin(), arena->vma_list.end(), vml);
	if (it != arena->vma_list.end())
		arena->vma_list.erase(it);
}

// kernel/bpf/arena.c: arena_vm_open (fork_uaf and fixed)
static void arena_vm_open(vm_area_struct *vma)
{
	vma_list *vml = static_cast<vma_list *>(vma->vm_private_data);

	if (vml->kasan_freed)
		kasan_report("slab-use-after-free of a vma_list", "arena_vm_open");
	vml->mmap_count++;  /* refcount_inc */
}

// kernel/bpf/arena.c: arena_vm_may_split (fixed)
static int arena_vm_may_split(vm_area_struct *vma, ulong addr)
{
	(void)vma, (void)addr;
	return -EINVAL;
}

// kernel/bpf/arena.c: arena_vm_mremap (fixed)
static int arena_vm_mremap(vm_area_struct *vma)
{
	(void)vma;
	return -EINVAL;
}

// kernel/bpf/arena.c: arena_vm_close (fork_uaf and fixed: the refcount)
static void arena_vm_close(vm_area_struct *vma)
{
	bpf_map *map = static_cast<bpf_map *>(vma->vm_file->private_data);
	bpf_arena *arena = container_of_arena(map);
	vma_list *vml = static_cast<vma_list *>(vma->vm_private_data);

	kasan_check_map_vma(vma, map, __func__);
	if (vml->kasan_freed)
		kasan_report("slab-use-after-free of a vma_list", "arena_vm_close");
	if (--vml->mmap_count)  /* !refcount_dec_and_test */
		return;
	/* guard(mutex)(&arena->lock); update link list under lock */
	arena_list_del(arena, vml);
	vma->vm_private_data = nullptr;
	arena_kfree_vml(vml);
}

// kernel/bpf/arena.c: arena_vm_close (mremap_uaf: the original, no refcount)
static void arena_vm_close_mremap_uaf(vm_area_struct *vma)
{
	bpf_map *map = static_cast<bpf_map *>(vma->vm_file->private_data);
	bpf_arena *arena = container_of_arena(map);
	vma_list *vml;

	/* guard(mutex)(&arena->lock); */
	vml = static_cast<vma_list *>(vma->vm_private_data);
	arena_list_del(arena, vml);
	vma->vm_private_data = nullptr;
	arena_kfree_vml(vml);
}

// kernel/bpf/arena.c: arena_vm_fault
static vm_fault_t arena_vm_fault(vm_fault *vmf)
{
	bpf_map *map = static_cast<bpf_map *>(vmf->vma->vm_file->private_data);
	bpf_arena *arena = container_of_arena(map);
	std::unique_ptr<page> fresh;

	kasan_check_map_vma(vmf->vma, map, __func__);
	page *pg;
	klong kbase, kaddr;
	int ret;

	kbase = (klong)bpf_arena_get_kern_vm_start(arena);
	kaddr = kbase + (u32)(vmf->address);

	/* raw_res_spin_lock_irqsave(&arena->spinlock): never contended here */
	pg = arena_kernel_page(arena, (u64)kaddr);
	if (pg)
		/* already have a page vmap-ed */
		goto out;

	if (arena->map.map_flags & BPF_F_SEGV_ON_FAULT)
		/* User space requested to segfault when page is not allocated by bpf prog */
		return VM_FAULT_SIGSEGV;

	ret = range_tree_clear(&arena->rt, (u32)vmf->pgoff, 1);
	if (ret)
		return VM_FAULT_SIGSEGV;

	/* Account into memcg of the process that created bpf_arena */
	ret = bpf_map_alloc_pages(map, &fresh);
	if (ret) {
		range_tree_set(&arena->rt, (u32)vmf->pgoff, 1);
		return VM_FAULT_SIGSEGV;
	}
	pg = fresh.get();
	ret = apply_range_set_cb(arena, (u64)kaddr, std::move(fresh));
	if (ret) {
		range_tree_set(&arena->rt, (u32)vmf->pgoff, 1);
		return VM_FAULT_SIGSEGV;
	}
out:
	get_page(pg);  /* page_ref_add(page, 1) */
	vmf->pg = pg;
	return 0;
}

static const vm_operations_struct arena_vm_ops_fixed = {
	.open = arena_vm_open,
	.close = arena_vm_close,
	.may_split = arena_vm_may_split,
	.mremap = arena_vm_mremap,
	.fault = arena_vm_fault,
};
static const vm_operations_struct arena_vm_ops_fork_uaf = {
	.open = arena_vm_open,
	.close = arena_vm_close,
	.fault = arena_vm_fault,
};
static const vm_operations_struct arena_vm_ops_mremap_uaf = {
	.close = arena_vm_close_mremap_uaf,
	.fault = arena_vm_fault,
};

// kernel/bpf/arena.c: arena_vm_ops at the configured historical level
static const vm_operations_struct *arena_vm_ops(void)
{
	switch (kcfg->arena) {
	case ArenaFix::fork_uaf: return &arena_vm_ops_fork_uaf;
	case ArenaFix::mremap_uaf: return &arena_vm_ops_mremap_uaf;
	case ArenaFix::fixed: break;
	}
	return &arena_vm_ops_fixed;
}

// kernel/bpf/arena.c: arena_get_unmapped_area
static ulong arena_get_unmapped_area(file *filp, ulong addr, ulong len, ulong pgoff, ulong flags)
{
	bpf_map *map = static_cast<bpf_map *>(filp->private_data);
	bpf_arena *arena = container_of_arena(map);
	klong ret;

	if (pgoff)
		return -EINVAL;
	if (len > SZ_4G)
		return -E2BIG;

	/* if user_vm_start was specified at arena creation time */
	if (arena->user_vm_start) {
		if (len > arena->user_vm_end - arena->user_vm_start)
			return -E2BIG;
		if (len != arena->user_vm_end - arena->user_vm_start)
			return -EINVAL;
		if (addr != arena->user_vm_start)
			return -EINVAL;
	}

	ret = (klong)mm_get_unmapped_area(current->mm, filp, addr, len * 2, 0, flags);
	if (IS_ERR_VALUE((ulong)ret))
		return (ulong)ret;
	if (((u64)ret >> 32) == (((u64)ret + len - 1) >> 32))
		return (ulong)ret;
	if (WARN_ON_ONCE(arena->user_vm_start))
		/* checks at map creation time should prevent this */
		return -EFAULT;
	return (ulong)round_up((u64)ret, SZ_4G);
}

// kernel/bpf/arena.c: arena_map_mmap
static int arena_map_mmap(bpf_map *map, vm_area_struct *vma)
{
	bpf_arena *arena = container_of_arena(map);

	/* guard(mutex)(&arena->lock); */
	if (arena->user_vm_start && arena->user_vm_start != vma->vm_start)
		/*
		 * If map_extra was not specified at arena creation time then
		 * 1st user process can do mmap(NULL, ...) to pick user_vm_start
		 * 2nd user process must pass the same addr to mmap(addr, MAP_FIXED..);
		 *   or
		 * specify addr in map_extra and
		 * use the same addr later with mmap(addr, MAP_FIXED..);
		 */
		return -EBUSY;

	if (arena->user_vm_end && arena->user_vm_end != vma->vm_end)
		/* all user processes must have the same size of mmap-ed region */
		return -EBUSY;

	/* Earlier checks should prevent this */
	if (WARN_ON_ONCE(vma->vm_end - vma->vm_start > SZ_4G || vma->vm_pgoff))
		return -EFAULT;

	if (remember_vma(arena, vma))
		return -ENOMEM;

	arena->user_vm_start = vma->vm_start;
	arena->user_vm_end = vma->vm_end;
	/*
	 * bpf_map_mmap() checks that it's being mmaped as VM_SHARED and
	 * clears VM_MAYEXEC. Set VM_DONTEXPAND to avoid potential change
	 * of user_vm_start. Set VM_DONTCOPY to prevent arena VMA from
	 * being copied into the child process on fork (fixed level only).
	 */
	vm_flags_set(vma, VM_DONTEXPAND | (kcfg->arena == ArenaFix::fixed ? VM_DONTCOPY : 0));
	vma->vm_ops = arena_vm_ops();
	return 0;
}

// kernel/bpf/arena.c: arena_map_lookup_elem
static ulong arena_map_lookup_elem(bpf_map *map, const void *key)
{
	(void)map, (void)key;
	return 0;  /* ERR_PTR(-EINVAL): nothing to look up */
}

// kernel/bpf/arena.c: arena_map_update_elem
static long arena_map_update_elem(bpf_map *map, const void *key, const void *value, u64 flags)
{
	(void)map, (void)key, (void)value, (void)flags;
	return -EOPNOTSUPP;
}

const bpf_map_ops arena_map_ops = {
	.map_alloc = arena_map_alloc,
	.map_free = arena_map_free,
	.map_lookup_elem = arena_map_lookup_elem,
	.map_update_elem = arena_map_update_elem,
	.map_mmap = arena_map_mmap,
	.map_get_unmapped_area = arena_get_unmapped_area,
};

// kernel/bpf/arena.c: clear_lo32
static u64 clear_lo32(u64 val)
{
	return val & ~(u64)~0U;
}

static void arena_free_pages(bpf_arena *arena, klong uaddr, klong page_cnt);

/*
 * kernel/bpf/arena.c: arena_alloc_pages. Allocate pages and vmap them into
 * kernel vmalloc area. Later the pages will be mmaped into user space vma.
 */
static klong arena_alloc_pages(bpf_arena *arena, klong uaddr, klong page_cnt, int node_id)
{
	/* user_vm_end/start are fixed before bpf prog runs */
	klong page_cnt_max = (klong)((arena->user_vm_end - arena->user_vm_start) >> PAGE_SHIFT);
	u64 kern_vm_start = bpf_arena_get_kern_vm_start(arena);
	klong mapped = 0;
	klong pgoff = 0;
	u32 uaddr32;
	int ret;

	if (node_id != NUMA_NO_NODE)
		return 0;  /* one node: any other is not online */

	if (page_cnt > page_cnt_max)
		return 0;

	if (uaddr) {
		if (uaddr & ~(klong)PAGE_MASK)
			return 0;
		pgoff = compute_pgoff(arena, uaddr);
		if (pgoff > page_cnt_max - page_cnt)
			/* requested address will be outside of user VMA */
			return 0;
	}

	/* raw_res_spin_lock_irqsave(&arena->spinlock) */
	if (uaddr) {
		ret = is_range_tree_set(&arena->rt, (u32)pgoff, (u32)page_cnt);
		if (ret)
			return 0;
		ret = range_tree_clear(&arena->rt, (u32)pgoff, (u32)page_cnt);
	} else {
		ret = (int)(pgoff = range_tree_find(&arena->rt, (u32)page_cnt));
		if (pgoff >= 0)
			ret = range_tree_clear(&arena->rt, (u32)pgoff, (u32)page_cnt);
	}
	if (ret)
		return 0;

	uaddr32 = (u32)(arena->user_vm_start + (u64)pgoff * PAGE_SIZE);

	while (mapped < page_cnt) {
		std::unique_ptr<page> pg;

		ret = bpf_map_alloc_pages(&arena->map, &pg);
		if (ret)
			goto out;
		/*
		 * Earlier checks made sure that uaddr32 + page_cnt * PAGE_SIZE - 1
		 * will not overflow 32-bit. Lower 32-bit need to represent
		 * contiguous user address range.
		 */
		ret = apply_range_set_cb(arena, kern_vm_start + uaddr32 + ((u64)mapped << PAGE_SHIFT), std::move(pg));
		if (ret) {
			kg->vmalloc_pages_used--;  /* free_pages_nolock */
			goto out;
		}
		mapped++;
	}
	return (klong)(clear_lo32(arena->user_vm_start) + uaddr32);
out:
	range_tree_set(&arena->rt, (u32)(pgoff + mapped), (u32)(page_cnt - mapped));
	if (mapped)
		arena_free_pages(arena, uaddr32, mapped);
	return 0;
}

/*
 * kernel/bpf/arena.c: zap_pages. If page is present in vmalloc area, unmap
 * it from vmalloc area, unmap it from all user space vma-s, and free it.
 */
static void zap_pages(bpf_arena *arena, klong uaddr, klong page_cnt)
{
	/* guard(mutex)(&arena->lock); iterate link list under lock */
	for (struct vma_list *vml : std::vector<struct vma_list *>(arena->vma_list)) {
		/* zap_vma_range(vml->vma, uaddr, PAGE_SIZE * page_cnt): KASAN
		 * instruments the loads of the freed VMA's fields */
		if (!kasan_check_vma(vml->vma, "zap_vma_range"))
			continue;
		vm_area_struct *vma = vml->vma;
		ulong start = max((ulong)uaddr, vma->vm_start);
		ulong end = min((ulong)(uaddr + (klong)PAGE_SIZE * page_cnt), vma->vm_end);
		if (start < end)
			zap_page_range_single(vma, start, end - start);
	}
}

// kernel/bpf/arena.c: page_mapped (any user PTE maps it)
static bool page_mapped(const page *pg)
{
	return pg->_mapcount > 0;
}

// kernel/bpf/arena.c: arena_free_pages (sleepable: never deferred)
static void arena_free_pages(bpf_arena *arena, klong uaddr, klong page_cnt)
{
	u64 full_uaddr, uaddr_end;
	klong kaddr, pgoff;
	std::vector<page *> free_pages;

	/* only aligned lower 32-bit are relevant */
	uaddr = (u32)uaddr;
	uaddr &= (klong)PAGE_MASK;
	kaddr = (klong)bpf_arena_get_kern_vm_start(arena) + uaddr;
	full_uaddr = clear_lo32(arena->user_vm_start) + (u64)uaddr;
	uaddr_end = min(arena->user_vm_end, full_uaddr + ((u64)page_cnt << PAGE_SHIFT));
	if (full_uaddr >= uaddr_end)
		return;

	page_cnt = (klong)((uaddr_end - full_uaddr) >> PAGE_SHIFT);
	pgoff = compute_pgoff(arena, uaddr);

	range_tree_set(&arena->rt, (u32)pgoff, (u32)page_cnt);

	/* clear ptes and collect struct pages: apply_to_existing_page_range
	 * visits only populated PTEs, so a huge range (libarena unreserving
	 * 1 GiB) walks the pages that exist, not every address */
	if (arena->kern_vm->pages.fewer_than((size_t)page_cnt)) {
		std::vector<u64> present;
		for (auto &[idx, pg] : arena->kern_vm->pages) {
			u64 k = arena->kern_vm->addr + ((u64)idx << PAGE_SHIFT);
			if (k >= (u64)kaddr && k < (u64)kaddr + ((u64)page_cnt << PAGE_SHIFT))
				present.push_back(k);
		}
		std::sort(present.begin(), present.end());
		for (u64 k : present)
			free_pages.push_back(apply_range_clear_cb(arena, k));
	} else {
		for (klong i = 0; i < page_cnt; i++)
			if (page *pg = apply_range_clear_cb(arena, (u64)kaddr + ((u64)i << PAGE_SHIFT)))
				free_pages.push_back(pg);
	}

	if (page_cnt > 1)
		/* bulk zap if multiple pages being freed */
		zap_pages(arena, (klong)full_uaddr, page_cnt);

	for (page *pg : free_pages) {
		if (page_cnt == 1 && page_mapped(pg)) /* mapped by some user process */
			/* Optimization for the common case of page_cnt==1:
			 * If page wasn't mapped into some user vma there
			 * is no need to call zap_pages which is slow.
			 */
			zap_pages(arena, (klong)full_uaddr, 1);
		arena_free_page(pg);
	}
}

/*
 * kernel/bpf/arena.c: arena_reserve_pages. Reserve an arena virtual address
 * range without populating it. This call stops bpf_arena_alloc_pages from
 * adding pages to this range.
 */
static int arena_reserve_pages(bpf_arena *arena, klong uaddr, u32 page_cnt)
{
	klong page_cnt_max = (klong)((arena->user_vm_end - arena->user_vm_start) >> PAGE_SHIFT);
	klong pgoff;
	int ret;

	if (uaddr & ~(klong)PAGE_MASK)
		return 0;

	pgoff = compute_pgoff(arena, uaddr);
	if (pgoff + page_cnt > page_cnt_max)
		return -EINVAL;

	/* Cannot guard already allocated pages. */
	ret = is_range_tree_set(&arena->rt, (u32)pgoff, page_cnt);
	if (ret)
		return -EBUSY;

	/* "Allocate" the region to prevent it from being allocated. */
	return range_tree_clear(&arena->rt, (u32)pgoff, page_cnt);
}

// kernel/bpf/arena.c: bpf_arena_alloc_pages (kfunc). Pointers are u64 in
// the port: a -m32 harness runs this 64-bit kernel code with 32-bit void *.
u64 bpf_arena_alloc_pages(bpf_map *map, u64 addr__ign, u32 page_cnt, int node_id, u64 flags)
{
	bpf_arena *arena = container_of_arena(map);

	if (map->map_type != BPF_MAP_TYPE_ARENA || flags || !page_cnt)
		return 0;

	return (u64)arena_alloc_pages(arena, (klong)addr__ign, page_cnt, node_id);
}

// kernel/bpf/arena.c: bpf_arena_free_pages (kfunc)
void bpf_arena_free_pages(bpf_map *map, u64 ptr__ign, u32 page_cnt)
{
	bpf_arena *arena = container_of_arena(map);

	if (map->map_type != BPF_MAP_TYPE_ARENA || !page_cnt || !ptr__ign)
		return;
	arena_free_pages(arena, (klong)ptr__ign, page_cnt);
}

// kernel/bpf/arena.c: bpf_arena_reserve_pages (kfunc)
int bpf_arena_reserve_pages(bpf_map *map, u64 ptr__ign, u32 page_cnt)
{
	bpf_arena *arena = container_of_arena(map);

	if (map->map_type != BPF_MAP_TYPE_ARENA)
		return -EINVAL;

	if (!page_cnt)
		return 0;

	return arena_reserve_pages(arena, (klong)ptr__ign, page_cnt);
}

}  // namespace fl::FL_ARCH_NS
