// SPDX-License-Identifier: GPL-2.0-only
// The bench's invocations on the simulated build of the allocator: no
// clock, but what each op does, counted at buddy.cpp's named points
// (buddy_faults::at_point) and from the transfer cache's count. The
// producers' invocations run one after another (producer 0, 1, ..., again),
// each on its own CPU, so the counts are deterministic and show the protocol
// (locks per op, cache hits, batches through the transfer cache), not
// contention. The simulated build has 4 CPUs: up to 4 producers.
#pragma once

#include <cstdint>
#include <string>

#include "libarena/native/workload.h"

namespace fl::arena_bench {

struct ModelCounts {
	bool ok = false;
	std::string error;
	uint64_t allocs = 0, frees = 0;
	uint64_t alloc_locks = 0, free_locks = 0;  // buddy->lock acquisitions during allocs / frees
	uint64_t xfer_locks = 0;                   // transfer-cache trylocks won (series)
	uint64_t alloc_hits = 0;                   // served by the CPU's LIFO without a refill (series)
	uint64_t refill_xfer = 0, refill_bulk = 0; // refills from the transfer cache / buddy_alloc_bulk
	uint64_t free_hits = 0;                    // pushed on the CPU's LIFO without a spill (series)
	uint64_t spill_xfer = 0, spill_bulk = 0;   // spills into the transfer cache / buddy_free_bulk
};

inline constexpr int kModelCpus = 4;

// `rounds` measured rounds (after two uncounted ones), each one invocation per producer.
ModelCounts model_counts(bool series, Variant v, int nallocs, int producers, int rounds, uint64_t size = 64);

}  // namespace fl::arena_bench
