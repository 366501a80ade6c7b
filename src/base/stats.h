// SPDX-License-Identifier: GPL-2.0-only
// The port's cost counters. Ground floor: the port (src/kernel) bumps them
// and includes this header, not the machine's.
#pragma once

#include <cstdint>

namespace fl {

// What the last do_fault_around (v3's ->map_pages) ran over, in PTE indexes
// of the faulting address's PTE table: the reach report's fault-around
// buckets (partly populated, VMA and PTE-table edges) are read from here, so
// they say what the port executed, not what a Program's text suggests.
struct FaultAroundWindow {
	uint64_t pte_off = 0;             // the faulting address's PTE index
	uint64_t vma_off = 0;             // its page index in the VMA
	uint64_t from_pte = 0, to_pte = 0; // the window ->map_pages got (inclusive)
	uint64_t nr_pages = 0;            // fault_around_pages
	uint64_t vma_from = 0;            // the VMA's first PTE here (0: it began in an earlier table)
	uint64_t vma_to = 0;              // one past the VMA's last PTE (past ptrs_per_pte: it goes on)
	uint64_t ptrs_per_pte = 0;
	uint64_t present = 0;             // PTEs of the window ->map_pages found already set
};

// Deterministic cost counters (the model backend of the benchmark).
struct Stats {
	uint64_t faults = 0;           // handle_mm_fault calls (user and GUP)
	uint64_t fault_handlers = 0;   // vm_ops->fault calls
	uint64_t map_pages_calls = 0;  // vm_ops->map_pages calls
	uint64_t vma_lock_retries = 0; // VM_FAULT_RETRY from vmf_can_call_fault
	uint64_t ptes_installed = 0;
	uint64_t ptes_zapped = 0;
	uint64_t ptl_locks = 0;        // page-table lock acquisitions
	uint64_t lost_races = 0;       // finish_fault found the PTE already set
	FaultAroundWindow last_fault_around;  // not a counter: the last window, as it ran
};

}  // namespace fl
