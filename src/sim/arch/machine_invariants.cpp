// SPDX-License-Identifier: GPL-2.0-only
// The invariants checked after every operation (names in sim/invariants.h).
// They are computed from the machine's state independently of the port's
// own counters: VMAs are counted, PTEs are walked, pages are compared with
// the page the eager path would have chosen in exact arithmetic.
#include <unordered_map>

#include "machine_impl.h"

namespace fl::FL_ARCH_NS {

bool MachineImpl::is_visible_data_page(const page *pg) const
{
	return array_ && pg->owner == page_owner::vmalloc && pg->area_id == map_area_id_ &&
	       pg->index >= hdr_pages_ && pg->index - hdr_pages_ < visible_pages_;
}

// The page remap_vmalloc_range() would insert for addr, or NULL when the
// exact file offset lies outside the visible data.
const page *MachineImpl::expected_page(const vm_area_struct *vma, ulong addr) const
{
	u64 idx;
	/* exact: an index that overflows u64 is past any map */
	if (!array_ || __builtin_add_overflow((u64)vma->vm_pgoff, (u64)((addr - vma->vm_start) >> PAGE_SHIFT), &idx) ||
	    idx >= visible_pages_)
		return nullptr;
	for (auto &a : kg_.vmap_areas)
		if (a->id == map_area_id_) {
			auto it = a->pages.find((ulong)(hdr_pages_ + (u64)idx));
			return it == a->pages.end() ? nullptr : it->second.get();
		}
	return nullptr;
}

static std::string hex(u64 v)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
	return buf;
}

Violation MachineImpl::check_invariants()
{
	Enter e(this);
	std::unordered_map<const page *, int> pte_refs;
	s64 maywrite_vmas = 0;

	for (size_t pid = 0; pid < procs_.size(); pid++) {
		mm_struct &mm = procs_[pid]->mm;
		for (vm_area_struct *vma : mm.mmap)
			if (is_map_vma(vma) && (vma->vm_flags & VM_MAYWRITE))
				maywrite_vmas++;
		for (auto &[addr, pte] : mm.ptes) {
			pte_refs[pte.pg]++;
			vm_area_struct *vma = vma_lookup(&mm, addr);
			if (!vma)
				return {Invariant::pte_outside_vma,
					"pid " + std::to_string(pid) + " PTE at " + hex(addr) + " outside every VMA"};
			if (!is_map_vma(vma))
				continue;
			if (!is_visible_data_page(pte.pg))
				return {Invariant::foreign_page,
					"pid " + std::to_string(pid) + " maps " +
						(pte.pg->owner == page_owner::direct_map
							 ? std::string("a lowmem page")
						 : pte.pg->area_id == map_area_id_
							 ? (pte.pg->index < hdr_pages_ ? std::string("the bpf_array header page")
										       : std::string("an invisible tail page of the map"))
							 : std::string("a neighbouring vmalloc area's page")) +
						" at " + hex(addr) + " (vm_pgoff " + hex(vma->vm_pgoff) + ")"};
			if (pte.pg != expected_page(vma, addr))
				return {Invariant::page_identity,
					"pid " + std::to_string(pid) + " PTE at " + hex(addr) + " maps data page " +
						std::to_string(pte.pg->index - hdr_pages_) +
						", not the page eager remap would choose"};
		}
	}

	if (array_ && array_->map.writecnt != maywrite_vmas)
		return {Invariant::write_active, "writecnt " + std::to_string(array_->map.writecnt) + " but " +
							 std::to_string(maywrite_vmas) + " VM_MAYWRITE VMAs live"};

	auto check_page = [&](const page &pg, int baseline) -> Violation {
		auto it = pte_refs.find(&pg);
		int maps = it == pte_refs.end() ? 0 : it->second;
		if (pg._refcount != baseline + maps || pg._mapcount != maps)
			return {Invariant::page_refcount, "page refcount " + std::to_string(pg._refcount) +
								  " mapcount " + std::to_string(pg._mapcount) + " with " +
								  std::to_string(maps) + " PTEs"};
		return {};
	};
	for (auto &a : kg_.vmap_areas)
		for (auto &[idx, pg] : a->pages)
			if (Violation v = check_page(*pg, 1))
				return v;
	for (auto &[idx, pg] : kg_.direct_map)
		if (Violation v = check_page(*pg, 1))
			return v;
	return {};
}

}  // namespace fl::FL_ARCH_NS
