// SPDX-License-Identifier: GPL-2.0-only
// Seed 002's layout: per variant an allocation and a free table, rows =
// allocations per invocation, columns = producers, cells "before/after ns,
// speedup"; each row of ours with the seed's under it. Then the simulated
// build's counts per op.
#pragma once

#include <cstdio>
#include <map>
#include <utility>

#include "real/bench/libarena/model_counts.h"
#include "real/bench/libarena/options.h"

namespace fl::arena_bench {

// One cell: mean ns per op over the runs.
struct Cell {
	double before_alloc = 0, after_alloc = 0, before_free = 0, after_free = 0;
};
using CellKey = std::pair<int, int>;  // (allocs, producers)

// Both tables of one variant. Columns with more producers than `ncpus` are
// marked oversubscribed.
void print_latency_tables(FILE *out, const Options &o, Variant v, const std::map<CellKey, Cell> &cells, int ncpus);

// The acceptance shape: series faster (alloc and free) at every cell with
// producers <= ncpus. Prints one line per cell where it is not; true when none.
bool print_shape(FILE *out, const Options &o, Variant v, const std::map<CellKey, Cell> &cells, int ncpus);

// The counts of one variant, a row per (allocs, producers), both levels.
void print_model_counts(FILE *out, const Options &o, Variant v);

}  // namespace fl::arena_bench
