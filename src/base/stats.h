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
// C is the number type: uint64_t, or in the symbolic build (smt/port/) a
// sink that takes any value, since counting is not what it proves.
template <class C> struct BasicFaultAroundWindow {
	C pte_off = 0;             // the faulting address's PTE index
	C vma_off = 0;             // its page index in the VMA
	C from_pte = 0, to_pte = 0; // the window ->map_pages got (inclusive)
	C nr_pages = 0;            // fault_around_pages
	C vma_from = 0;            // the VMA's first PTE here (0: it began in an earlier table)
	C vma_to = 0;              // one past the VMA's last PTE (past ptrs_per_pte: it goes on)
	C ptrs_per_pte = 0;
	C present = 0;             // PTEs of the window ->map_pages found already set
};
using FaultAroundWindow = BasicFaultAroundWindow<uint64_t>;

// Deterministic cost counters (the model backend of the benchmark).
template <class C> struct BasicStats {
	C faults = 0;           // handle_mm_fault calls (user and GUP)
	C fault_handlers = 0;   // vm_ops->fault calls
	C map_pages_calls = 0;  // vm_ops->map_pages calls
	C vma_lock_retries = 0; // VM_FAULT_RETRY from vmf_can_call_fault
	C ptes_installed = 0;
	C ptes_zapped = 0;
	C ptl_locks = 0;        // page-table lock acquisitions
	C lost_races = 0;       // finish_fault found the PTE already set
	BasicFaultAroundWindow<C> last_fault_around;  // not a counter: the last window, as it ran
};
using Stats = BasicStats<uint64_t>;

}  // namespace fl
