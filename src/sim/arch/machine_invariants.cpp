// SPDX-License-Identifier: GPL-2.0-only
// The invariants checked after every operation (names in base/invariants.h).
// They are computed from the machine's state independently of the port's
// own counters: VMAs are counted, PTEs are walked, pages are compared with
// the page the eager path would have chosen in exact arithmetic. The walk is
// incremental (only the PTEs whose slot, VMA or map changed since the last
// passing check, and only the pages whose counts changed since), and the
// PTEs mapping each page are counted by the page tables as they change
// (pte_ghost), not by the port.
#include "machine_impl.h"

#include <algorithm>
#include <cstdlib>

namespace fl::FL_ARCH_NS {

bool MachineImpl::MapSeen::is_visible_data_page(const page *pg) const
{
	return array && pg->owner == page_owner::vmalloc && pg->area_id == area_id && pg->index >= hdr &&
	       pg->index - hdr < visible;
}

// Does pg (a visible data page of the map) sit where remap_vmalloc_range()
// would have put it for addr? Eager remap inserts the area's page at the
// exact file offset; an area holds one struct page per index, so comparing
// indexes (in exact arithmetic: an index that overflows u64 is past any map)
// compares the pages, without a lookup in the area per PTE.
bool MachineImpl::MapSeen::is_expected_page(const vm_area_struct *vma, ulong addr, const page *pg) const
{
	u64 idx;
	return !__builtin_add_overflow((u64)vma->vm_pgoff, (u64)((addr - vma->vm_start) >> PAGE_SHIFT), &idx) &&
	       idx < visible && (u64)pg->index - hdr == idx;
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
	::fl::sched::IgnoreAccesses checker;  /* the checker's lookups are not the port's */
	s64 maywrite_vmas = 0;
	Violation bad;  /* the first violation, in pid and then address order */

	/* Only what changed since the last passing check can fail now (an arena
	 * map's pages change under unchanged PTEs: always whole). */
	const MapSeen map = map_seen();
	const bool whole = whole_checks() || !checked_valid_ || arena_ || !(map == checked_map_);
	const size_t seen_pids = whole ? 0 : checked_vmas_.size();
	checked_vmas_.resize(procs_.size());
	for (size_t pid = 0; pid < procs_.size(); pid++) {
		mm_struct &mm = procs_[pid]->mm;
		for (vm_area_struct *vma : mm.mmap)
			if (map.is_map_vma(vma) && (vma->vm_flags & VM_MAYWRITE))
				maywrite_vmas++;
		changed_ranges(mm, pid < seen_pids ? &checked_vmas_[pid] : nullptr);
		vm_area_struct *last = nullptr;  /* the walk is in address order: mostly the same VMA */
		auto check_pte = [&](ulong addr, pte_t &pte) {
			if (bad)
				return;
			vm_area_struct *vma = last && addr >= last->vm_start && addr < last->vm_end ? last
												     : vma_lookup(&mm, addr);
			last = vma;
			if (!vma) {
				bad = {Invariant::pte_outside_vma,
				       "pid " + std::to_string(pid) + " PTE at " + hex(addr) + " outside every VMA"};
			} else if (!map.is_map_vma(vma)) {
				return;
			} else if (map.arena) {
				check_arena_pte(pid, vma, addr, pte.pg, &bad);
			} else if (!map.is_visible_data_page(pte.pg)) {
				bad = {Invariant::foreign_page,
				       "pid " + std::to_string(pid) + " maps " + describe_foreign(pte.pg) + " at " +
					       hex(addr) + " (vm_pgoff " + hex(vma->vm_pgoff) + ")"};
			} else if (!map.is_expected_page(vma, addr, pte.pg)) {
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

	if (!bad)
		bad = check_pages(whole);
	kg_.inv_dirty_pages.clear();
	checked_valid_ = !bad;
	checked_map_ = map;
	return bad;
}

// page_refcount: every page's counts are its baseline plus the PTEs the page
// tables count (inv_ptes). Whole: every page of every area and the direct
// map; otherwise only the pages whose counts changed since the last passing
// check (kg_.inv_dirty_pages; every other page passed then and is as it was).
// The first bad page in one order for both (areas in list order, then the
// direct map; by index within each), so both report the same page.
Violation MachineImpl::check_pages(bool whole) const
{
	auto ok = [](const page_counts &pc) { return pc._refcount == 1 + pc.inv_ptes && pc._mapcount == pc.inv_ptes; };
	struct Place {
		size_t area;  // position in vmap_areas, or its size for the direct map
		ulong index;
		auto operator<=>(const Place &) const = default;
	};
	const page *worst = nullptr;
	Place worst_at{};
	auto consider = [&](const page *pg, Place at) {
		if (!worst || at < worst_at) {
			worst = pg;
			worst_at = at;
		}
	};
	const size_t areas = kg_.vmap_areas.size();
	if (whole) {
		for (size_t i = 0; i < areas; i++)
			for (auto &[idx, pg] : kg_.vmap_areas[i]->pages)
				if (!ok(*pg))
					consider(pg.get(), {i, idx});
		for (auto &[idx, pg] : kg_.direct_map)
			if (!ok(*pg))
				consider(pg.get(), {areas, idx});
	} else {
		kg_.inv_dirty_pages.for_each([&](page_inv_link *l) {
			page_counts *pc = page_counts::of(l);
			if (ok(*pc))
				return;
			/* a bad page counts where the whole check would see it */
			const page *pg = static_cast<const page *>(pc);
			if (!in_its_place(pg))
				return;
			if (pg->owner == page_owner::direct_map) {
				consider(pg, {areas, pg->index});
				return;
			}
			for (size_t i = 0; i < areas; i++)
				if (kg_.vmap_areas[i]->id == pg->area_id)
					consider(pg, {i, pg->index});
		});
	}
	if (!worst)
		return {};
	return {Invariant::page_refcount, "page refcount " + std::to_string(worst->_refcount) + " mapcount " +
						  std::to_string(worst->_mapcount) + " with " +
						  std::to_string(worst->inv_ptes) + " PTEs (baseline 1)"};
}

bool MachineImpl::in_its_place(const page *pg) const
{
	auto holds = [&](const page_index_map &m) {
		auto it = m.find(pg->index);
		return it != m.end() && it->second.get() == pg;
	};
	if (pg->owner == page_owner::direct_map)
		return holds(kg_.direct_map);
	for (auto &a : kg_.vmap_areas)
		if (a->id == pg->area_id)
			return holds(a->pages);
	return false;
}

// The page-index slot of the kernel page an arena user address maps to:
// kern_vm_start + (u32)addr (computed here without the port's helpers), or
// NULL when no chunk of the index holds it.
FL_NO_COVERAGE const std::unique_ptr<page> *MachineImpl::arena_index_slot(uint64_t addr) const
{
	vm_struct *area = arena_kern_vm(arena_);
	u64 kaddr = bpf_arena_get_kern_vm_start(arena_) + (u32)addr;
	return area->pages.slot((ulong)((kaddr - area->addr) >> PAGE_SHIFT));
}

// That page, or NULL when none is present.
FL_NO_COVERAGE page *MachineImpl::arena_page_at(uint64_t addr) const
{
	const std::unique_ptr<page> *slot = arena_index_slot(addr);
	return slot ? slot->get() : nullptr;
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
