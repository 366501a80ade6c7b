// SPDX-License-Identifier: GPL-2.0-only
// The invariants checked after every operation (names in base/invariants.h).
// They are computed from the machine's state independently of the port's
// own counters: VMAs are counted, PTEs are walked, pages are compared with
// the page the eager path would have chosen in exact arithmetic. The walk is
// incremental (only the PTEs whose slot, VMA or map changed since the last
// passing check), and the PTEs mapping each page are counted by the page
// tables as they change (pte_ghost), not by the port.
#include "machine_impl.h"

#include <algorithm>
#include <cstdlib>

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

MachineImpl::MapSeen MachineImpl::map_seen() const
{
	return {array_, arena_, map_vm_file_, map_area_id_, visible_pages_, hdr_pages_};
}

// Into changed_: the address ranges of mm whose PTEs the check must look at,
// sorted and merged. The page table slots changed since the last check, and
// the ranges of the VMAs added, removed or changed since (seen: the VMAs the
// last passing check saw; NULL: look at everything).
void MachineImpl::changed_ranges(mm_struct &mm, const std::vector<VmaSeen> *seen)
{
	changed_.clear();
	mm.ptes.take_dirty([&](ulong lo, ulong hi) { changed_.push_back({lo, hi}); });
	if (!seen) {
		changed_.assign(1, {0, (ulong)~(ulong)0});
		return;
	}
	bool same = seen->size() == mm.mmap.size();
	for (size_t i = 0; same && i < mm.mmap.size(); i++)
		same = (*seen)[i] == VmaSeen::of(mm.mmap[i]);
	if (!same) {  /* a few VMAs: the quadratic differences are cheap */
		for (const VmaSeen &old : *seen)
			if (std::none_of(mm.mmap.begin(), mm.mmap.end(),
					 [&](const vm_area_struct *v) { return old == VmaSeen::of(v); }))
				changed_.push_back({old.start, old.end});
		for (const vm_area_struct *v : mm.mmap)
			if (std::find(seen->begin(), seen->end(), VmaSeen::of(v)) == seen->end())
				changed_.push_back({v->vm_start, v->vm_end});
	}
	std::sort(changed_.begin(), changed_.end());
	size_t out = 0;
	for (const auto &r : changed_) {
		if (out && r.first <= changed_[out - 1].second)
			changed_[out - 1].second = std::max(changed_[out - 1].second, r.second);
		else
			changed_[out++] = r;
	}
	changed_.resize(out);
}

// FL_INVARIANTS_WHOLE=1: every check walks everything, as before the walk
// was incremental (the cross-check of ctest invariants.incremental).
static bool whole_checks()
{
	static const bool whole = [] {
		const char *e = std::getenv("FL_INVARIANTS_WHOLE");
		return e && e[0] == '1';
	}();
	return whole;
}

Violation MachineImpl::check_invariants()
{
	Enter e(this);
	s64 maywrite_vmas = 0;
	Violation bad;  /* the first violation, in pid and then address order */

	/* Only what changed since the last passing check can fail now (an arena
	 * map's pages change under unchanged PTEs: always whole). */
	const bool whole = whole_checks() || !checked_valid_ || arena_ || !(map_seen() == checked_map_);
	const size_t seen_pids = whole ? 0 : checked_vmas_.size();
	checked_vmas_.resize(procs_.size());
	for (size_t pid = 0; pid < procs_.size(); pid++) {
		mm_struct &mm = procs_[pid]->mm;
		for (vm_area_struct *vma : mm.mmap)
			if (is_map_vma(vma) && (vma->vm_flags & VM_MAYWRITE))
				maywrite_vmas++;
		changed_ranges(mm, pid < seen_pids ? &checked_vmas_[pid] : nullptr);
		auto check_pte = [&](ulong addr, pte_t &pte) {
			if (bad)
				return;
			vm_area_struct *vma = vma_lookup(&mm, addr);
			if (!vma) {
				bad = {Invariant::pte_outside_vma,
				       "pid " + std::to_string(pid) + " PTE at " + hex(addr) + " outside every VMA"};
			} else if (!is_map_vma(vma)) {
				return;
			} else if (arena_) {
				check_arena_pte(pid, vma, addr, pte.pg, &bad);
			} else if (!is_visible_data_page(pte.pg)) {
				bad = {Invariant::foreign_page,
				       "pid " + std::to_string(pid) + " maps " + describe_foreign(pte.pg) + " at " +
					       hex(addr) + " (vm_pgoff " + hex(vma->vm_pgoff) + ")"};
			} else if (pte.pg != expected_page(vma, addr)) {
				bad = {Invariant::page_identity,
				       "pid " + std::to_string(pid) + " PTE at " + hex(addr) + " maps data page " +
					       std::to_string(pte.pg->index - hdr_pages_) +
					       ", not the page eager remap would choose"};
			}
		};
		for (const auto &[lo, hi] : changed_)
			mm.ptes.for_range(lo, hi, check_pte);
		std::vector<VmaSeen> &seen = checked_vmas_[pid];
		seen.clear();
		for (const vm_area_struct *v : mm.mmap)
			seen.push_back(VmaSeen::of(v));
	}

	if (!bad && array_ && array_->map.writecnt != maywrite_vmas)
		bad = {Invariant::write_active, "writecnt " + std::to_string(array_->map.writecnt) + " but " +
							std::to_string(maywrite_vmas) + " VM_MAYWRITE VMAs live"};

	/* inv_ptes: the page tables' own count of the PTEs mapping the page */
	auto check_page = [&](const page &pg) {
		int maps = pg.inv_ptes;
		if (!bad && (pg._refcount != 1 + maps || pg._mapcount != maps))
			bad = {Invariant::page_refcount, "page refcount " + std::to_string(pg._refcount) + " mapcount " +
								 std::to_string(pg._mapcount) + " with " + std::to_string(maps) +
								 " PTEs (baseline 1)"};
	};
	for (auto &a : kg_.vmap_areas)
		for (auto &[idx, pg] : a->pages)
			check_page(*pg);
	for (auto &[idx, pg] : kg_.direct_map)
		check_page(*pg);
	checked_valid_ = !bad;
	checked_map_ = map_seen();
	return bad;
}

// The kernel page an arena user address maps to: kern_vm_start + (u32)addr
// (computed here without the port's helpers), or NULL when none is present.
page *MachineImpl::arena_page_at(uint64_t addr) const
{
	vm_struct *area = arena_kern_vm(arena_);
	u64 kaddr = bpf_arena_get_kern_vm_start(arena_) + (u32)addr;
	auto it = area->pages.find((ulong)((kaddr - area->addr) >> PAGE_SHIFT));
	return it == area->pages.end() ? nullptr : it->second.get();
}

// An arena VMA's PTE maps the page the arena's kernel view holds at the
// same low 32 bits; a PTE left on a freed page (a missed zap) is foreign.
void MachineImpl::check_arena_pte(size_t pid, const vm_area_struct *vma, ulong addr, const page *pg,
				  Violation *bad) const
{
	(void)vma;
	const page *want = arena_page_at(addr);
	if (want == pg)
		return;
	for (auto &freed : kg_.freed_pages)
		if (freed.get() == pg) {
			*bad = {Invariant::foreign_page,
				"pid " + std::to_string(pid) + " maps a freed arena page at " + hex(addr)};
			return;
		}
	*bad = {Invariant::page_identity, "pid " + std::to_string(pid) + " PTE at " + hex(addr) +
						  " is not the arena's page at that offset"};
}

std::string MachineImpl::describe_foreign(const page *pg) const
{
	if (pg->owner == page_owner::direct_map)
		return "a lowmem page";
	if (pg->area_id != map_area_id_)
		return "a neighbouring vmalloc area's page";
	return pg->index < hdr_pages_ ? "the bpf_array header page" : "an invisible tail page of the map";
}

}  // namespace fl::FL_ARCH_NS
