// SPDX-License-Identifier: GPL-2.0-only
// The port's cost counters. Ground floor: the port (src/kernel) bumps them
// and includes this header, not the machine's.
#pragma once

#include <cstdint>

namespace fl {

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
};

}  // namespace fl
