// SPDX-License-Identifier: GPL-2.0-only
// The machine's count invariants at every scheduling point, not only when no
// task is inside the kernel: write_active (map->writecnt against the live
// VM_MAYWRITE VMAs of the map) and page_refcount (each page's refcount and
// mapcount against the PTEs mapping it), with what the ops in flight may
// hold accounted (sim/machine.h InFlight, sim/arch/machine_point_invariants.cpp).
//
// The windows where write_active legitimately does not balance, and what
// the check allows there:
// - a writer in flight: map_update_elem is write-active for its whole call;
//   bpf_map_mmap counts its VMA before ->map_mmap and mmap_region links it
//   after (or drops the count when it fails): up to one count per writer;
// - close paths (munmap, mremap, mprotect and madvise splits, exit, a
//   MAP_FIXED mmap or reserve over a mapping): a VMA is detached before ->close drops
//   its count, a split VMA is ->open'ed before it is linked: any surplus.
//   Any op of a process the Program exits counts as one: the last mmput,
//   which runs exit_mmap, may be a sibling's at the end of its fault;
// - fork: dup_mmap links the child's VMA before ->open counts it, and the
//   machine counts the child's VMAs only once it has the child process:
//   not checked.
// Outside those windows a surplus or a deficit is a slip seen at once, even
// when the op puts the count back before it returns (the quiescent check
// never sees that).
//
// page_refcount: mapcount >= PTEs (the rmap counts a PTE before set_pte_at
// and after the PTE is cleared) and refcount >= 1 + mapcount always; the
// surplus is at most one per op in flight (a fault handler's reference, a
// zapped PTE not yet unmapped), any while mremap moves PTEs.
//
// Cannot see: a count that is wrong within what the ops in flight allow
// (an update that leaks its count while another writer runs, until both
// return), anything on an arena map (its pages come and go with
// alloc/free), page counts while a close path or mremap runs with many PTEs.
#pragma once

#include <string>
#include <vector>

#include "check/program.h"
#include "sim/machine.h"

namespace fl::interleave {

// The ops inside the kernel now, one entry per task, and the check.
class PointInvariants {
public:
	PointInvariants(Machine &m, const Program &p);
	void enter(const Op &op) { flight_.push_back(&op); }
	void leave(const Op &op);
	// "" or the violation text ("write_active: ...", "page_refcount: ...").
	std::string check() const;

private:
	Machine &m_;
	std::vector<const Op *> flight_;
	std::vector<bool> exits_;  // per process: the Program has an exit for it
};

}  // namespace fl::interleave
