// SPDX-License-Identifier: GPL-2.0-only
// write_active and page_refcount at a scheduling point, with the ops in
// flight accounted (check/interleave/point_invariants.h has the windows).
// Computed like check_invariants: VMAs counted, PTEs as the page tables count
// them (inv_ptes), never the port's own bookkeeping of what is in flight.
#include "machine_impl.h"

namespace fl::FL_ARCH_NS {

Violation MachineImpl::check_point_invariants(const InFlight &f)
{
	Enter e(this);
	if (!array_ || !map_live())
		return {};  // the array map's counts only; no map, nothing to count

	/* write-active: writecnt - live VM_MAYWRITE VMAs of the map is 0 at
	 * rest; each writer in flight may hold one count its VMA does not show
	 * yet; a close path may hold counts of VMAs already detached (or of a
	 * split VMA ->open'ed before it is linked); under fork the child's
	 * VMAs are counted only once the machine has the child process, and
	 * each is linked before ->open counts it: either way */
	s64 maywrite = 0;
	for (auto &p : procs_)
		for (vm_area_struct *vma : p->mm.mmap)
			if (is_map_vma(vma) && (vma->vm_flags & VM_MAYWRITE))
				maywrite++;
	const s64 d = array_->map.writecnt - maywrite;
	if (!f.forking && (d < 0 || (d > f.writers && !f.closing)))
		return {Invariant::write_active,
			"write_active: writecnt " + std::to_string(array_->map.writecnt) + " but " +
				std::to_string(maywrite) + " VM_MAYWRITE VMAs live and " + std::to_string(f.writers) +
				" writers in flight"};

	/* page counts: the rmap counts a PTE before it is set and after it is
	 * cleared (mapcount >= PTEs), every mapping holds a reference besides
	 * the allocator's (refcount >= 1 + mapcount); the excess is what the
	 * ops in flight hold: one handler reference or one cleared PTE not yet
	 * unmapped each, any number while mremap moves PTEs. Only pages whose
	 * counts changed since the last passing check (or all of them) */
	const page *bad = nullptr;
	auto check = [&](const page *pg) {
		if (bad)
			return;
		const int ref = pg->_refcount, map = pg->_mapcount, ptes = pg->inv_ptes;
		if ((map < ptes || ref < 1 + map || ref - 1 - map > f.ops || (map - ptes > f.ops && !f.moving)) &&
		    in_its_place(pg))
			bad = pg;
	};
	if (checked_valid_) {
		kg_.inv_dirty_pages.for_each([&](page_inv_link *l) {
			check(static_cast<const page *>(page_counts::of(l)));
		});
	} else {
		for (auto &a : kg_.vmap_areas)
			for (auto &[idx, pg] : a->pages)
				check(pg.get());
		for (auto &[idx, pg] : kg_.direct_map)
			check(pg.get());
	}
	if (!bad)
		return {};
	return {Invariant::page_refcount, "page_refcount: page refcount " + std::to_string(bad->_refcount) +
						  " mapcount " + std::to_string(bad->_mapcount) + " with " +
						  std::to_string(bad->inv_ptes) + " PTEs (baseline 1) and " +
						  std::to_string(f.ops) + " ops in flight"};
}

}  // namespace fl::FL_ARCH_NS
