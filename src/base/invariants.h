// SPDX-License-Identifier: GPL-2.0-only
// The machine's invariants, each with a short stable name used in traces,
// verdicts, corpus expectations and reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fl {

enum class Invariant : uint8_t {
	none,
	write_active,     // map->writecnt == live VM_MAYWRITE VMAs of the map (+ in-flight writers)
	page_refcount,    // page refcount == baseline + PTEs that point at it
	page_identity,    // a PTE in a map VMA points at the page eager remap would choose
	foreign_page,     // no page outside the map's visible data area reaches user space
	coherent,         // a user load returns what the kernel's view holds at that offset
	pte_outside_vma,  // no PTE outside a VMA
	freeze_iff,       // BPF_MAP_FREEZE succeeds iff nothing writable is live
	// The interleaving explorer's checkers (src/check/interleave/):
	frozen_stable,    // once a reader saw frozen && !write_active, the map's bytes never change
	lockdep,          // lock order: a dependency cycle, recursion, sleeping under a spinlock/RCU, NMI-unsafe lock,
	                  // might_fault under mmap_lock, a lock held on return to user space
	data_race,        // lockset: two tasks touch one location, one writes, no common lock (src/base/sched/lockset.h)
	deadlock,         // every task blocked (the report has the wait-for graph)
	livelock,         // the step cap passed without the tasks finishing
	use_after_free,   // (KASAN) the port touched a freed VMA or arena vma_list entry
	contents,         // a lookup or user load returns the bytes last written there (check/contents.h)
	not_linearizable, // a concurrent group's results are those of no sequential order (interleave/linearize.h)
};

const char *to_string(Invariant);
std::optional<Invariant> parse_invariant(const std::string &);

struct Violation {
	Invariant what = Invariant::none;
	std::string detail;
	explicit operator bool() const { return what != Invariant::none; }
};

}  // namespace fl
