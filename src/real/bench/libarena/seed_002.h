// SPDX-License-Identifier: GPL-2.0-only
// Seed 002's two latency tables (the cover letter of "bpf libarena
// allocator improvements" v2: a 16-vCPU VM, 64-byte allocations, mean of
// three runs): ns before the series / with it, per variant, op, row (allocs
// per invocation) and column (producers).
#pragma once

namespace fl::arena_bench {

inline constexpr int kSeedAllocs[5] = {1, 4, 16, 64, 256};
inline constexpr int kSeedProducers[4] = {1, 2, 4, 8};

struct SeedCell {
	int before, after;
};

// [variant: malloc-free, malloc-xfree][op: allocation, free][row][column]
extern const SeedCell kSeed002[2][2][5][4];

}  // namespace fl::arena_bench
