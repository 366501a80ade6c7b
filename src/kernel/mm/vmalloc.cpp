// SPDX-License-Identifier: GPL-2.0-only
// Port of mm/vmalloc.c: a vmalloc space with guard pages and neighbouring
// areas, vmalloc_to_page() (which trusts the address it is given: an address
// in a neighbour yields the neighbour's page, a guard page yields NULL) and
// remap_vmalloc_range{,_partial}() with all their checks.
#include <algorithm>
#include <cstring>

#include "mm.h"

namespace fl::FL_ARCH_NS {

constinit thread_local kernel_globals *kg = nullptr;
constinit thread_local const kernel_config *kcfg = nullptr;
constinit thread_local task_struct *current = nullptr;

// mm/page_alloc.c: __free_pages on the last reference.
void put_page(page *p)
{
	BUG_ON(p->_refcount <= 0);
	p->_refcount--;
	/* The page struct itself stays with its area until vfree(); a zero
	 * count with PTEs still mapping it is what the page_refcount invariant
	 * catches. */
}

u8 *page_address_rw(page *p)
{
	if (!p->data) {
		p->data = std::make_unique_for_overwrite<u8[]>(PAGE_SIZE);  /* filled next: one pass, not two */
		std::memset(p->data.get(), p->fill, PAGE_SIZE);
	}
	return p->data.get();
}

// mm/vmalloc.c: __vmalloc_node_range. Pages are zeroed (__GFP_ZERO) and
// order-0; they are materialised lazily so a 64 MiB map costs nothing until
// touched. Fails (NULL) when the vmalloc space or RAM is exhausted.
ulong __vmalloc_node_range(u64 size, ulong align, ulong flags, u8 fill)
{
	ulong addr, nr_pages;
	u64 real_size = PAGE_ALIGN(size);

	if (!size || real_size == 0 || real_size > kg->vmalloc_end - kg->vmalloc_start)
		return 0;
	nr_pages = real_size >> PAGE_SHIFT;
	if (kg->vmalloc_pages_used + nr_pages > kg->totalram_pages)
		return 0;  /* __GFP_RETRY_MAYFAIL: fail rather than OOM */

	/* alloc_vmap_area: first fit above the last area, guard page included */
	addr = kg->vmalloc_start;
	for (auto &a : kg->vmap_areas)
		addr = max(addr, (ulong)(a->addr + a->size));
	addr = ALIGN(addr, align);
	if ((u64)addr + real_size + PAGE_SIZE > kg->vmalloc_end)
		return 0;

	auto area = std::make_unique<vm_struct>();
	area->id = kg->next_area_id++;
	area->addr = addr;
	area->size = real_size + PAGE_SIZE;  /* guard page */
	area->flags = flags | VM_ALLOC;
	area->nr_pages = nr_pages;
	area->fill = fill;  /* not kernel: lets the machine tell other subsystems' pages apart */
	kg->vmalloc_pages_used += nr_pages;
	kg->vmap_areas.push_back(std::move(area));
	return addr;
}

// mm/vmalloc.c: get_vm_area (__get_vm_area_node): reserve address space
// only; pages are mapped into it later (VM_SPARSE: by the arena, one by one).
vm_struct *get_vm_area(ulong size, ulong flags)
{
	ulong addr;
	u64 real_size = PAGE_ALIGN(size);

	if (!size || real_size > kg->vmalloc_end - kg->vmalloc_start)
		return nullptr;
	addr = kg->vmalloc_start;
	for (auto &a : kg->vmap_areas)
		addr = max(addr, (ulong)(a->addr + a->size));
	if ((u64)addr + real_size + PAGE_SIZE > kg->vmalloc_end)
		return nullptr;

	auto area = std::make_unique<vm_struct>();
	area->id = kg->next_area_id++;
	area->addr = addr;
	area->size = real_size + PAGE_SIZE;  /* guard page */
	area->flags = flags;
	vm_struct *ret = area.get();
	kg->vmap_areas.push_back(std::move(area));
	return ret;
}

// mm/vmalloc.c: free_vm_area (remove_vm_area + kfree): the caller has freed the pages.
void free_vm_area(vm_struct *area)
{
	auto it = std::find_if(kg->vmap_areas.begin(), kg->vmap_areas.end(),
			       [&](auto &a) { return a.get() == area; });
	BUG_ON(it == kg->vmap_areas.end());
	kg->vmap_areas.erase(it);
}

// mm/vmalloc.c: find_vm_area (kaddr must be the start of an area)
vm_struct *find_vm_area(ulong addr)
{
	for (auto &a : kg->vmap_areas)
		if (a->addr == addr)
			return a.get();
	return nullptr;
}

// mm/vmalloc.c: vfree
void vfree(ulong addr)
{
	auto it = std::find_if(kg->vmap_areas.begin(), kg->vmap_areas.end(),
			       [&](auto &a) { return a->addr == addr; });
	BUG_ON(it == kg->vmap_areas.end());
	for (auto &[idx, pg] : (*it)->pages) {
		(void)idx;
		put_page(pg.get());  /* the allocator's reference */
		/* struct page outlives the area, as the memmap does: a PTE a
		 * missed close left on it (a map freed under a mapping) still
		 * points at a page, and its zap puts that, not freed memory.
		 * An unreferenced page's bytes go (nothing may read them). */
		if (!pg->_refcount)
			pg->data.reset();
		kg->freed_pages.push_back(std::move(pg));
	}
	kg->vmalloc_pages_used -= (*it)->nr_pages;
	kg->vmap_areas.erase(it);
}

// Not kernel: the live vmalloc area whose pages (not its guard page) hold
// addr, or NULL; what vmalloc_to_page's walk of init_mm's page tables meets
// first. Outside the fuzzers' coverage (base/coverage.h): it runs for every
// page the eager remap_vmalloc_range() inserts, and vmalloc_to_page's own
// branches still tell which kind of page it found.
FL_NO_COVERAGE static vm_struct *vmap_area_of(ulong addr)
{
	for (auto &a : kg->vmap_areas) {
		if (addr < a->addr || addr - a->addr >= get_vm_area_size(a.get()))
			continue;
		return a.get();
	}
	return nullptr;
}

// mm/vmalloc.c: vmalloc_to_page. Walks init_mm's page tables: an address in
// any live vmalloc area (not its guard page) gives that area's page; the
// lowmem direct map is mapped with large pages, so an address there gives a
// lowmem page (foreign to every map); anything else is unmapped: NULL.
page *vmalloc_to_page(ulong vmalloc_addr)
{
	if (vm_struct *a = vmap_area_of(vmalloc_addr)) {
		ulong index = (vmalloc_addr - a->addr) >> PAGE_SHIFT;
		if (a->flags & VM_SPARSE) {
			/* only what was mapped there (apply_to_page_range) */
			auto it = a->pages.find(index);
			return it == a->pages.end() ? nullptr : it->second.get();
		}
		auto &slot = a->pages[index];
		if (!slot) {
			slot = std::make_unique<page>();
			slot->fill = a->fill;
			slot->area_id = a->id;
			slot->index = index;
		}
		return slot.get();
	}
	if (vmalloc_addr >= kg->page_offset && vmalloc_addr < kg->direct_map_end) {
		ulong index = (vmalloc_addr - kg->page_offset) >> PAGE_SHIFT;
		auto &slot = kg->direct_map[index];
		if (!slot) {
			slot = std::make_unique<page>();
			slot->owner = page_owner::direct_map;
			slot->index = index;
			slot->fill = 0xdd;  /* lowmem holds other kernel data: make a leak visible */
		}
		return slot.get();
	}
	return nullptr;
}

// mm/kasan (CONFIG_KASAN_VMALLOC): an access to vmalloc space no live area
// backs (a guard page, or an area vfree()d under a stale pointer: a map
// freed under its fd, reached through the quarantined bpf_map) is reported
// as KASAN reports it, not a trap: its shadow is KASAN_VMALLOC_INVALID.
// The access is dropped (a load reads zeros); the run is already a finding.
static page *kasan_vmalloc_page(ulong kaddr, const char *where)
{
	page *pg = vmalloc_to_page(kaddr);
	if (!pg)
		kasan_report("vmalloc-out-of-bounds", where);
	return pg;
}

// Kernel-side memcpy through the vmalloc mapping (what a BPF program or
// copy_map_value does with array->value).
void kernel_memcpy_from(void *dst, ulong kaddr, ulong n)
{
	u8 *out = static_cast<u8 *>(dst);
	while (n) {
		ulong off = offset_in_page(kaddr), chunk = min(n, PAGE_SIZE - off);
		page *pg = kasan_vmalloc_page(kaddr, "kernel_memcpy_from");
		if (!pg)
			std::memset(out, 0, chunk);
		else if (pg->data)
			std::memcpy(out, pg->data.get() + off, chunk);
		else
			std::memset(out, pg->fill, chunk);
		out += chunk, kaddr += chunk, n -= chunk;
	}
}

// Zeros written where a zero-filled page has no bytes of its own yet leave
// it as it is (it reads the same): a big value of zeros costs no memory.
// One memcmp, not a loop: a fuzzer traces every comparison of a loop.
static bool zeros_on_blank(const page *pg, const u8 *in, ulong n)
{
	static const u8 zeros[65536] = {};  /* the largest PAGE_SIZE */
	return !pg->data && pg->fill == 0 && n <= sizeof(zeros) && std::memcmp(in, zeros, n) == 0;
}

void kernel_memcpy_to(ulong kaddr, const void *src, ulong n)
{
	const u8 *in = static_cast<const u8 *>(src);
	while (n) {
		ulong off = offset_in_page(kaddr), chunk = min(n, PAGE_SIZE - off);
		page *pg = kasan_vmalloc_page(kaddr, "kernel_memcpy_to");
		if (pg && !zeros_on_blank(pg, in, chunk))
			std::memcpy(page_address_rw(pg) + off, in, chunk);
		in += chunk, kaddr += chunk, n -= chunk;
	}
}

/**
 * mm/vmalloc.c: remap_vmalloc_range_partial - map vmalloc pages to userspace
 * (>= 6.3, with the overflow checks of bdebd6a2831b).
 */
int remap_vmalloc_range_partial(vm_area_struct *vma, ulong uaddr, ulong kaddr, ulong pgoff, ulong size)
{
	vm_struct *area;
	ulong off;
	ulong end_index;

	if (check_shl_overflow(pgoff, PAGE_SHIFT, &off))
		return -EINVAL;

	size = PAGE_ALIGN(size);

	if (!PAGE_ALIGNED(uaddr) || !PAGE_ALIGNED(kaddr))
		return -EINVAL;

	area = find_vm_area(kaddr);
	if (!area)
		return -EINVAL;

	if (!(area->flags & (VM_USERMAP | VM_DMA_COHERENT)))
		return -EINVAL;

	if (check_add_overflow(size, off, &end_index) ||
	    end_index > get_vm_area_size(area))
		return -EINVAL;
	kaddr += off;

	do {
		page *pg = vmalloc_to_page(kaddr);
		int ret;

		ret = vm_insert_page(vma, uaddr, pg);
		if (ret)
			return ret;

		uaddr += PAGE_SIZE;
		kaddr += PAGE_SIZE;
		size -= PAGE_SIZE;
	} while (size > 0);

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);

	return 0;
}

// mm/vmalloc.c: remap_vmalloc_range - map the whole VMA from pgoff
int remap_vmalloc_range(vm_area_struct *vma, ulong addr, ulong pgoff)
{
	return remap_vmalloc_range_partial(vma, vma->vm_start, addr, pgoff,
					   vma->vm_end - vma->vm_start);
}

}  // namespace fl::FL_ARCH_NS
