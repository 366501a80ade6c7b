// SPDX-License-Identifier: GPL-2.0-only
// The model backend: one bench iteration (mmap, touch, munmap) run through
// the port in the simulated machine, reporting the machine's deterministic
// cost counters instead of times.
#pragma once

#include <cstdint>
#include <string>

#include "real/bench/backend.h"
#include "sim/machine.h"

namespace fl::bench {

struct ModelCounts {
	uint64_t ptes_at_mmap = 0;  // PTEs installed by the mmap call itself (incl. MAP_POPULATE)
	uint64_t addr = 0;          // where the simulated mmap put the mapping
	Stats op;                   // counters for the whole iteration
};

// Runs one iteration at the level's patch and width. *err (and a zero
// result) when the port cannot hold the map or refuses the mmap.
ModelCounts model_iteration(const Geometry &, const Pattern &, const PortLevel &, std::string *err);

// "arraymap-mmap: model v2/arch64: faults F, fault handlers H, ..." (one line).
std::string model_line(const ModelCounts &, const PortLevel &);

}  // namespace fl::bench
