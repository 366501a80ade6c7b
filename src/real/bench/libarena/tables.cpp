// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/libarena/tables.h"

#include <algorithm>
#include <string>

#include "real/bench/libarena/seed_002.h"

namespace fl::arena_bench {

namespace {

constexpr int kColumn = 20;

std::string cell_text(double before, double after)
{
	char buf[64];
	if (before <= 0 || after <= 0)
		return "-";
	std::snprintf(buf, sizeof buf, "%.0f/%.0f %.1fx", before, after, before / after);
	return buf;
}

int index_of(const int *list, int n, int v)
{
	const int *it = std::find(list, list + n, v);
	return it == list + n ? -1 : int(it - list);
}

void print_table(FILE *out, const Options &o, Variant v, bool alloc, const std::map<CellKey, Cell> &cells, int ncpus)
{
	std::fprintf(out, "%s latency (before/after ns, speedup):\n", alloc ? "Allocation" : "Free");
	std::fprintf(out, "%-13s", "allocs");
	for (int p : o.producers) {
		const std::string h = std::to_string(p) + " prod" + (p > ncpus ? "*" : "");
		std::fprintf(out, "%-*s", kColumn, h.c_str());
	}
	std::fprintf(out, "\n");
	const int vi = v == Variant::malloc_free ? 0 : 1;
	for (int n : o.allocs) {
		std::fprintf(out, "%-6d %-6s", n, "port");
		for (int p : o.producers) {
			auto it = cells.find({n, p});
			std::string t = "-";
			if (it != cells.end())
				t = alloc ? cell_text(it->second.before_alloc, it->second.after_alloc)
					  : cell_text(it->second.before_free, it->second.after_free);
			std::fprintf(out, "%-*s", kColumn, t.c_str());
		}
		std::fprintf(out, "\n%-6s %-6s", "", "seed");
		const int row = index_of(kSeedAllocs, 5, n);
		for (int p : o.producers) {
			const int col = index_of(kSeedProducers, 4, p);
			std::string t = "-";
			if (row >= 0 && col >= 0) {
				const SeedCell &s = kSeed002[vi][alloc ? 0 : 1][row][col];
				t = cell_text(s.before, s.after);
			}
			std::fprintf(out, "%-*s", kColumn, t.c_str());
		}
		std::fprintf(out, "\n");
	}
}

double per_k(uint64_t n, uint64_t ops) { return ops ? 1000.0 * double(n) / double(ops) : 0; }
double per_op(uint64_t n, uint64_t ops) { return ops ? double(n) / double(ops) : 0; }

}  // namespace

void print_latency_tables(FILE *out, const Options &o, Variant v, const std::map<CellKey, Cell> &cells, int ncpus)
{
	std::fprintf(out, "\nlibarena-%s, %s:\n", to_string(v),
		     v == Variant::malloc_free ? "where each worker frees its own objects"
					       : "where each worker frees the objects allocated by the previous invocation");
	print_table(out, o, v, true, cells, ncpus);
	print_table(out, o, v, false, cells, ncpus);
}

bool print_shape(FILE *out, const Options &o, Variant v, const std::map<CellKey, Cell> &cells, int ncpus)
{
	bool all = true;
	for (int n : o.allocs)
		for (int p : o.producers) {
			auto it = cells.find({n, p});
			if (p > ncpus || it == cells.end())
				continue;
			const Cell &c = it->second;
			for (bool alloc : {true, false}) {
				const double before = alloc ? c.before_alloc : c.before_free, after = alloc ? c.after_alloc : c.after_free;
				if (after < before)
					continue;
				all = false;
				std::fprintf(out, "  not faster: libarena-%s %s, %d allocs, %d prod: %.0f/%.0f ns\n", to_string(v),
					     alloc ? "alloc" : "free", n, p, before, after);
			}
		}
	return all;
}

void print_model_counts(FILE *out, const Options &o, Variant v)
{
	std::fprintf(out, "\nlibarena-%s, counts per op of the simulated build:\n", to_string(v));
	std::fprintf(out, "%-6s %-4s | %-19s | %-19s %-8s %-8s %-17s %-17s %s\n", "allocs", "prod", "before: locks/alloc",
		     "series: locks/alloc", "hit%", "hit%", "refills per 1k", "spills per 1k", "xfer locks");
	std::fprintf(out, "%-6s %-4s | %-19s | %-19s %-8s %-8s %-17s %-17s %s\n", "", "", "        locks/free",
		     "        locks/free", "(alloc)", "(free)", "xfer/bulk (alloc)", "xfer/bulk (free)", "per op");
	for (int n : o.allocs)
		for (int p : o.producers) {
			if (p > kModelCpus) {
				std::fprintf(out, "%-6d %-4d | n/a: the simulated build has %d CPUs\n", n, p, kModelCpus);
				continue;
			}
			const int rounds = std::max(4, 2048 / (n * p));
			const ModelCounts b = model_counts(false, v, n, p, rounds), s = model_counts(true, v, n, p, rounds);
			if (!b.ok || !s.ok) {
				std::fprintf(out, "%-6d %-4d | failed: %s\n", n, p, (b.ok ? s : b).error.c_str());
				continue;
			}
			char lb[32], ls[32], rf[32], sp[32];
			std::snprintf(lb, sizeof lb, "%.2f / %.2f", per_op(b.alloc_locks, b.allocs), per_op(b.free_locks, b.frees));
			std::snprintf(ls, sizeof ls, "%.2f / %.2f", per_op(s.alloc_locks, s.allocs), per_op(s.free_locks, s.frees));
			std::snprintf(rf, sizeof rf, "%.0f / %.0f", per_k(s.refill_xfer, s.allocs), per_k(s.refill_bulk, s.allocs));
			std::snprintf(sp, sizeof sp, "%.0f / %.0f", per_k(s.spill_xfer, s.frees), per_k(s.spill_bulk, s.frees));
			std::fprintf(out, "%-6d %-4d | %-19s | %-19s %-8.1f %-8.1f %-17s %-17s %.3f\n", n, p, lb, ls,
				     100.0 * per_op(s.alloc_hits, s.allocs), 100.0 * per_op(s.free_hits, s.frees), rf, sp,
				     per_op(s.xfer_locks, s.allocs + s.frees));
		}
}

}  // namespace fl::arena_bench
