// SPDX-License-Identifier: GPL-2.0-only
// Port of kernel/bpf/arraymap.c: the BPF_MAP_TYPE_ARRAY pieces the mmap path
// touches, at four patch levels:
//   pre - upstream before the series: array_map_mmap() wires every page up
//         front with remap_vmalloc_range();
//   v1  - lazy: bound check only, pages come from array_map_mmap_fault();
//         offsets computed in unsigned long (wraps on 32-bit);
//   v2  - v1 with u64 arithmetic (seed 000);
//   v3  - v2 plus array_map_mmap_pages() as ->map_pages (UNCONFIRMED: written
//         from the v3 description, docs/arraymap.md#the-lazy-levels).
#include <cstring>

#include "bpf.h"

namespace fl::FL_ARCH_NS {

#define ARRAY_CREATE_FLAG_MASK \
	(BPF_F_NUMA_NODE | BPF_F_MMAPABLE | BPF_F_ACCESS_MASK | BPF_F_PRESERVE_ELEMS | BPF_F_INNER_MAP)

static bpf_array *container_of_array(bpf_map *map) { return reinterpret_cast<bpf_array *>(map); }

// include/linux/bpf.h: bpf_map_flags_access_ok
static bool bpf_map_flags_access_ok(u32 access_flags)
{
	return (access_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)) !=
	       (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG);
}

// include/linux/bpf.h: bpf_bypass_spec_v1 (roughly CAP_PERFMON or
// mitigations off). The machine's spec_v1 knob decides.
bool bpf_bypass_spec_v1(const void *)
{
	return kcfg->bypass_spec_v1;
}

// kernel/bpf/arraymap.c: array_map_alloc_check (all levels)
static int array_map_alloc_check(bpf_attr_map_create *attr)
{
	bool percpu = attr->map_type == BPF_MAP_TYPE_PERCPU_ARRAY;
	int numa_node = attr->numa_node;

	/* check sanity of attributes */
	if (attr->max_entries == 0 || attr->key_size != 4 ||
	    attr->value_size == 0 ||
	    attr->map_flags & ~ARRAY_CREATE_FLAG_MASK ||
	    !bpf_map_flags_access_ok(attr->map_flags) ||
	    (percpu && numa_node != NUMA_NO_NODE))
		return -EINVAL;

	if (attr->map_type != BPF_MAP_TYPE_ARRAY &&
	    attr->map_flags & (BPF_F_MMAPABLE | BPF_F_INNER_MAP))
		return -EINVAL;

	if (attr->map_flags & BPF_F_PRESERVE_ELEMS)
		return -EINVAL;  /* only PERF_EVENT_ARRAY may preserve elements */

	/* avoid overflow on round_up(map->value_size) */
	if (attr->value_size > INT_MAX_K)
		return -E2BIG;

	return 0;
}

// kernel/bpf/syscall.c: bpf_map_area_mmapable_alloc -> __bpf_map_area_alloc(size, node, true)
static ulong bpf_map_area_mmapable_alloc(u64 size)
{
	/* kmalloc()'ed memory can't be mmap()'ed */
	if (size >= SIZE_MAX_K)
		return 0;
	BUG_ON(!PAGE_ALIGNED(size));
	return __vmalloc_node_range(size, PAGE_SIZE /* SHMLBA */, VM_USERMAP);
}

// kernel/bpf/syscall.c: bpf_map_area_alloc (non-mmapable arrays: plain vmalloc here)
static ulong bpf_map_area_alloc(u64 size)
{
	if (size >= SIZE_MAX_K)
		return 0;
	return __vmalloc_node_range(PAGE_ALIGN(size), PAGE_SIZE, 0);
}

// kernel/bpf/syscall.c: bpf_map_init_from_attr
static void bpf_map_init_from_attr(bpf_map *map, bpf_attr_map_create *attr)
{
	map->map_type = attr->map_type;
	map->key_size = attr->key_size;
	map->value_size = attr->value_size;
	map->max_entries = attr->max_entries;
	map->map_flags = attr->map_flags & ~(BPF_F_RDONLY | BPF_F_WRONLY);
	map->numa_node = attr->numa_node;
}

// Not kernel code: struct bpf_array lives in the header page, just below
// array->value. Write a recognisable image of it there (fields, and kernel
// pointers such as map->ops) so that a leak of the header page is visible
// in user-space loads, as it would be on a real kernel.
static void array_map_write_struct_image(bpf_array *array)
{
	u64 image[BPF_ARRAY_VALUE_OFFSET / 8];

	for (ulong i = 0; i < BPF_ARRAY_VALUE_OFFSET / 8; i++)
		image[i] = 0xffffffff81000000ull + i * 8;  /* "kernel pointers" */
	image[0] = ((u64)array->map.key_size << 32) | array->map.map_type;
	image[1] = ((u64)array->map.max_entries << 32) | array->map.value_size;
	image[2] = ((u64)array->index_mask << 32) | array->elem_size;
	kernel_memcpy_to(array->kaddr, image, sizeof(image));
}

// kernel/bpf/arraymap.c: array_map_alloc (all levels)
static bpf_map *array_map_alloc(bpf_attr_map_create *attr)
{
	bool bypass_spec_v1 = bpf_bypass_spec_v1(nullptr);
	u32 elem_size, index_mask, max_entries;
	u64 array_size, mask64;
	bpf_array *array;
	ulong data;

	elem_size = round_up(attr->value_size, 8);

	max_entries = attr->max_entries;

	/* On 32 bit archs roundup_pow_of_two() with max_entries that has
	 * upper most bit set in u32 space is undefined behavior due to
	 * resulting 1U << 32, so do it manually here in u64 space.
	 */
	mask64 = fls_long(max_entries - 1);
	mask64 = 1ULL << mask64;
	mask64 -= 1;

	index_mask = mask64;
	if (!bypass_spec_v1) {
		/* round up array size to nearest power of 2,
		 * since cpu will speculate within index_mask limits
		 */
		max_entries = index_mask + 1;
		/* Check for overflows. */
		if (max_entries < attr->max_entries)
			return ERR_PTR<bpf_map>(-E2BIG);
	}

	array_size = sizeof_bpf_array;
	if (attr->map_flags & BPF_F_MMAPABLE) {
		/* rely on vmalloc() to return page-aligned memory and
		 * ensure array->value is exactly page-aligned
		 */
		array_size = PAGE_ALIGN(array_size);
		array_size += PAGE_ALIGN((u64)max_entries * elem_size);
	} else {
		array_size += (u64)max_entries * elem_size;
	}

	/* allocate all map elements and zero-initialize them */
	if (attr->map_flags & BPF_F_MMAPABLE) {
		/* kmalloc'ed memory can't be mmap'ed, use explicit vmalloc */
		data = bpf_map_area_mmapable_alloc(array_size);
		if (!data)
			return ERR_PTR<bpf_map>(-ENOMEM);
		array = new bpf_array;
		array->kaddr = data + PAGE_ALIGN((ulong)sizeof_bpf_array) - BPF_ARRAY_VALUE_OFFSET;
	} else {
		data = bpf_map_area_alloc(array_size);
		if (!data)
			return ERR_PTR<bpf_map>(-ENOMEM);
		array = new bpf_array;
		array->kaddr = data;
	}
	array->index_mask = index_mask;
	array->map.bypass_spec_v1 = bypass_spec_v1;

	/* copy mandatory map attributes */
	bpf_map_init_from_attr(&array->map, attr);
	array->elem_size = elem_size;
	array_map_write_struct_image(array);

	return &array->map;
}

// kernel/bpf/arraymap.c: array_map_vmalloc_addr
static ulong array_map_vmalloc_addr(bpf_array *array)
{
	return round_down(array->kaddr, PAGE_SIZE);
}

// kernel/bpf/arraymap.c: array_map_free (MMAPABLE maps have no special fields here)
static void array_map_free(bpf_map *map)
{
	bpf_array *array = container_of_array(map);

	if (array->map.map_flags & BPF_F_MMAPABLE)
		vfree(array_map_vmalloc_addr(array));
	else
		vfree(array->kaddr);
	array->map.kasan_freed = true;  /* kfree: into KASAN's quarantine */
	kg->kasan_objects.emplace_back(std::shared_ptr<bpf_array>(array));
}

// kernel/bpf/arraymap.c: array_map_lookup_elem
static ulong array_map_lookup_elem(bpf_map *map, const void *key)
{
	bpf_array *array = container_of_array(map);
	u32 index = *(const u32 *)key;

	if (index >= array->map.max_entries)
		return 0;

	return array_value(array) + (u64)array->elem_size * (index & array->index_mask);
}

// kernel/bpf/arraymap.c: array_map_update_elem (no BPF_F_LOCK: no spin lock fields)
static long array_map_update_elem(bpf_map *map, const void *key, const void *value, u64 map_flags)
{
	bpf_array *array = container_of_array(map);
	u32 index = *(const u32 *)key;
	ulong val;

	if ((map_flags & ~BPF_F_LOCK) > BPF_EXIST)
		/* unknown flags */
		return -EINVAL;

	if (index >= array->map.max_entries)
		/* all elements were pre-allocated, cannot insert a new one */
		return -E2BIG;

	if (map_flags & BPF_NOEXIST)
		/* all elements already exist */
		return -EEXIST;

	if (map_flags & BPF_F_LOCK)
		return -EINVAL;  /* no BPF_SPIN_LOCK field */

#if defined(FL_PLANT_UPDATE_STRIDE)
	/* planted slip (test-only build, -DFL_PLANT=update_stride): the value
	 * size for the rounded element size, so the update lands astride the
	 * element whenever value_size is not a multiple of 8 */
	val = array_value(array) + (u64)map->value_size * (index & array->index_mask);
#elif defined(FL_PLANT_UPDATE_U32)
	/* planted slip (test-only build, -DFL_PLANT=update_u32): the offset in
	 * u32, wrapping for an element whose byte offset crosses 2^32 */
	val = array_value(array) + (u32)(array->elem_size * (index & array->index_mask));
#else
	val = array_value(array) + (u64)array->elem_size * (index & array->index_mask);
#endif
	kernel_memcpy_to(val, value, map->value_size);  /* copy_map_value */
	return 0;
}

// kernel/bpf/arraymap.c: array_map_mmap (pre: eager remap_vmalloc_range)
static int array_map_mmap_pre(bpf_map *map, vm_area_struct *vma)
{
	bpf_array *array = container_of_array(map);
	pgoff_t pgoff = PAGE_ALIGN((ulong)sizeof_bpf_array) >> PAGE_SHIFT;

	if (!(map->map_flags & BPF_F_MMAPABLE))
		return -EINVAL;

	if (vma->vm_pgoff * PAGE_SIZE + (vma->vm_end - vma->vm_start) >
	    PAGE_ALIGN((u64)array->map.max_entries * array->elem_size))
		return -EINVAL;

	return remap_vmalloc_range(vma, array_map_vmalloc_addr(array),
				   vma->vm_pgoff + pgoff);
}

// kernel/bpf/arraymap.c: array_map_mmap (v1: lazy, unsigned long bound)
static int array_map_mmap_v1(bpf_map *map, vm_area_struct *vma)
{
	bpf_array *array = container_of_array(map);

	if (!(map->map_flags & BPF_F_MMAPABLE))
		return -EINVAL;

	if (vma->vm_pgoff * PAGE_SIZE + (vma->vm_end - vma->vm_start) >
	    PAGE_ALIGN((u64)array->map.max_entries * array->elem_size))
		return -EINVAL;

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);

	return 0;
}

// kernel/bpf/arraymap.c: array_map_mmap (v2/v3: lazy, u64 bound)
static int array_map_mmap_v2(bpf_map *map, vm_area_struct *vma)
{
	bpf_array *array = container_of_array(map);

	if (!(map->map_flags & BPF_F_MMAPABLE))
		return -EINVAL;

	/* use u64 math so the offset cannot overflow on 32-bit archs */
#if defined(FL_PLANT_BOUND_ULONG)
	/* planted slip (test-only build, -DFL_PLANT=bound_ulong): v1's
	 * unsigned long offset back in v2, wrapping on 32-bit archs */
	if (vma->vm_pgoff * PAGE_SIZE + (vma->vm_end - vma->vm_start) >
	    PAGE_ALIGN((u64)array->map.max_entries * array->elem_size))
		return -EINVAL;
#elif defined(FL_PLANT_BOUND_GE)
	/* planted slip (test-only build, -DFL_PLANT=bound_ge): >= for >, so a
	 * VMA ending exactly at the end of the visible data is refused */
	if ((u64)vma->vm_pgoff * PAGE_SIZE + (vma->vm_end - vma->vm_start) >=
	    PAGE_ALIGN((u64)array->map.max_entries * array->elem_size))
		return -EINVAL;
#else
	if ((u64)vma->vm_pgoff * PAGE_SIZE + (vma->vm_end - vma->vm_start) >
	    PAGE_ALIGN((u64)array->map.max_entries * array->elem_size))
		return -EINVAL;
#endif

#if defined(FL_PLANT_MMAP_LOCK_RECURSIVE)
	/* planted slip (test-only build, -DFL_PLANT=mmap_lock_recursive): a
	 * helper that takes mmap_lock for read, called with it held for write
	 * by do_mmap (lockdep reports it in one run; it deadlocks only when a
	 * writer queues between the two) */
	mmap_read_lock(vma->vm_mm);
	mmap_read_unlock(vma->vm_mm);
#endif
	/*
	 * The backing memory is vmalloc'ed up front, so instead of wiring up
	 * every PTE here we let array_map_mmap_fault() insert pages on demand.
	 * remap_vmalloc_range_partial() used to set these flags for us; keep
	 * them to preserve behavior (no VMA expansion, excluded from coredump).
	 */
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);

	return 0;
}

// kernel/bpf/arraymap.c: array_map_mmap_fault (v1: unsigned long offset)
static vm_fault_t array_map_mmap_fault_v1(bpf_map *map, vm_fault *vmf)
{
	bpf_array *array = container_of_array(map);
	pgoff_t pgoff = PAGE_ALIGN((ulong)sizeof_bpf_array) >> PAGE_SHIFT;
	page *pg;
	ulong kaddr;

	kaddr = array_map_vmalloc_addr(array) + ((vmf->pgoff + pgoff) << PAGE_SHIFT);

	pg = vmalloc_to_page(kaddr);
	if (!pg)
		return VM_FAULT_SIGBUS;

	get_page(pg);
	vmf->pg = pg;

	return 0;
}

// kernel/bpf/arraymap.c: array_map_mmap_fault (v2/v3: u64 offset; the
// pointer addition still wraps at pointer width, hence the ulong kaddr)
static vm_fault_t array_map_mmap_fault_v2(bpf_map *map, vm_fault *vmf)
{
	bpf_array *array = container_of_array(map);
	pgoff_t pgoff = PAGE_ALIGN((ulong)sizeof_bpf_array) >> PAGE_SHIFT;
	page *pg;
	ulong kaddr;

	/*
	 * vmf->pgoff is the page offset within the mapping (vma->vm_pgoff plus
	 * the offset of the faulting address). The data pages start after the
	 * bpf_array header, hence the extra pgoff. This mirrors the offset that
	 * remap_vmalloc_range(vma, ..., vma->vm_pgoff + pgoff) used to apply.
	 */
#if defined(FL_PLANT_FAULT_HDR)
	/* planted slip (test-only build, -DFL_PLANT=fault_hdr): the header
	 * pages forgotten, so a fault maps the page before the one remap put there */
	kaddr = array_map_vmalloc_addr(array) + ((u64)vmf->pgoff << PAGE_SHIFT);
	(void)pgoff;
#else
	kaddr = array_map_vmalloc_addr(array) +
		(((u64)vmf->pgoff + pgoff) << PAGE_SHIFT);
#endif

	pg = vmalloc_to_page(kaddr);
	if (!pg)
		return VM_FAULT_SIGBUS;

	get_page(pg);
	vmf->pg = pg;

	return 0;
}

// mm/memory.c: set_pte_range + the PTE-table walk, as a map_pages handler
// sees them (kernel: pte_offset_map_lock, pte_none, set_pte_range).
bool map_pages_install_pte(vm_fault *vmf, ulong addr, page *pg);

// kernel/bpf/arraymap.c: array_map_mmap_pages (v3, UNCONFIRMED). Modelled on
// filemap_map_pages(): one page-table lock for the window, skip PTEs that are
// already set, one reference per installed PTE, VM_FAULT_NOPAGE iff the
// faulting address got its PTE. Called under rcu_read_lock: must not sleep.
static vm_fault_t array_map_mmap_pages_v3(bpf_map *map, vm_fault *vmf,
					  pgoff_t start_pgoff, pgoff_t end_pgoff)
{
	bpf_array *array = container_of_array(map);
	pgoff_t hdr_pgoff = PAGE_ALIGN((ulong)sizeof_bpf_array) >> PAGE_SHIFT;
	ulong addr = vmf->address - ((vmf->pgoff - start_pgoff) << PAGE_SHIFT);
#if defined(FL_PLANT_WINDOW_END)
	/* planted slip (test-only build, -DFL_PLANT=window_end): one page past
	 * end_pgoff, which do_fault_around() clamped to the VMA and PTE table */
	pgoff_t nr_pages = end_pgoff - start_pgoff + 2;
#else
	pgoff_t nr_pages = end_pgoff - start_pgoff + 1;  /* <= fault_around_pages */
#endif
	vm_fault_t ret = 0;
	pgoff_t pgoff = start_pgoff;

	kg->stats->ptl_locks++;  /* pte_offset_map_lock() once for the window */
	spin_lock(pte_lockptr(vmf->vma->vm_mm));
	/* count, not pgoff <= end_pgoff: a window ending at ULONG_MAX must end */
	for (pgoff_t i = 0; i < nr_pages; i++, pgoff++, addr += PAGE_SIZE) {
		ulong kaddr = array_map_vmalloc_addr(array) +
			      (((u64)pgoff + hdr_pgoff) << PAGE_SHIFT);
		page *pg;

		if (ptep_get(vmf->vma->vm_mm, addr)) {
			kg->stats->last_fault_around.present++;
			continue;
		}
		pg = vmalloc_to_page(kaddr);
		if (!pg)
			continue;  /* leave it to ->fault, which will SIGBUS */
		get_page(pg);
		map_pages_install_pte(vmf, addr, pg);
		if (addr == vmf->address)
			ret = VM_FAULT_NOPAGE;
	}
	spin_unlock(pte_lockptr(vmf->vma->vm_mm));
	return ret;
}

#define ARRAY_MAP_OPS_COMMON                               \
	.map_alloc_check = array_map_alloc_check,          \
	.map_alloc = array_map_alloc,                      \
	.map_free = array_map_free,                        \
	.map_lookup_elem = array_map_lookup_elem,          \
	.map_update_elem = array_map_update_elem

const bpf_map_ops array_map_ops_pre = {
	ARRAY_MAP_OPS_COMMON,
	.map_mmap = array_map_mmap_pre,
};
const bpf_map_ops array_map_ops_v1 = {
	ARRAY_MAP_OPS_COMMON,
	.map_mmap = array_map_mmap_v1,
	.map_mmap_fault = array_map_mmap_fault_v1,
};
const bpf_map_ops array_map_ops_v2 = {
	ARRAY_MAP_OPS_COMMON,
	.map_mmap = array_map_mmap_v2,
	.map_mmap_fault = array_map_mmap_fault_v2,
};
const bpf_map_ops array_map_ops_v3 = {
	ARRAY_MAP_OPS_COMMON,
	.map_mmap = array_map_mmap_v2,
	.map_mmap_fault = array_map_mmap_fault_v2,
	.map_mmap_pages = array_map_mmap_pages_v3,
};

const bpf_map_ops *array_map_ops_for(Patch patch)
{
	switch (patch) {
	case Patch::pre: return &array_map_ops_pre;
	case Patch::v1: return &array_map_ops_v1;
	case Patch::v2: return &array_map_ops_v2;
	case Patch::v3: return &array_map_ops_v3;
	}
	return &array_map_ops_pre;
}

}  // namespace fl::FL_ARCH_NS
