// SPDX-License-Identifier: GPL-2.0-only
// faultline-bench-libarena: `faultline bench --libarena`. Seed 002's two
// latency tables on the libarena port's native build (src/libarena/native),
// `before` and `series` side by side in every run, beside the seed's
// numbers, then the simulated build's counts per op. Exit 0 ok, 1 a run
// failed (an op, or an invariant at its end), 2 bad options.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "libarena/native/native_bench.h"
#include "real/bench/libarena/tables.h"

using namespace fl::arena_bench;

namespace {

std::string loadavg()
{
	std::ifstream f("/proc/loadavg");
	std::string a, b, c;
	f >> a >> b >> c;
	return a + " " + b + " " + c;
}

std::string join(const std::vector<int> &v)
{
	std::ostringstream s;
	for (size_t i = 0; i < v.size(); i++)
		s << (i ? "," : "") << v[i];
	return s.str();
}

}  // namespace

int main(int argc, char **argv)
{
	std::string err;
	auto o = parse_options(argc, argv, &err);
	if (!o) {
		std::fprintf(stderr, "faultline-bench-libarena: %s\n", err.c_str());
		return 2;
	}
	if (o->help) {
		std::fputs(usage().c_str(), stdout);
		return 0;
	}
	setvbuf(stdout, nullptr, _IOLBF, 0);
	const std::vector<int> cpus = allowed_cpus();
	const int ncpus = int(cpus.size());
	const int max_prod = *std::max_element(o->producers.begin(), o->producers.end());
	std::printf("libarena bench: the port's native build (buddy.cpp on real atomics), one thread per producer "
		    "pinned round-robin to CPUs %s; 64-byte allocations; per cell the mean of %d runs of %.2f s "
		    "(after %.2f s warmup), before (level `before`) and after (level `series`) back to back\n",
		    join(cpus).c_str(), o->runs, o->duration_s, o->warmup_s);
	std::printf("timer: a TSC read pair around every op, %.1f ns, is inside every figure (as the seed's "
		    "bpf_ktime_get_ns pair is)\n", timer_pair_ns());
	if (max_prod > ncpus)
		std::printf("oversubscribed (*): more producers than this machine's %d CPUs; compare speedups (ratios), "
			    "not ns, in those columns; the seed ran a 16-vCPU VM\n", ncpus);
	std::printf("load at start: %s\n", loadavg().c_str());

	// sums over runs, per variant and cell
	std::map<int, std::map<CellKey, Cell>> sums;
	int failed = 0;
	for (int run = 0; run < o->runs; run++) {
		for (Variant v : o->variants)
			for (int n : o->allocs)
				for (int p : o->producers) {
					Cell &c = sums[int(v)][{n, p}];
					for (int k = 0; k < 2; k++) {
						RunSpec s;
						s.series = (k + run) % 2 == 1;  // alternate which level goes first
						s.variant = v;
						s.nallocs = n;
						s.producers = p;
						s.warmup_s = o->warmup_s;
						s.duration_s = o->duration_s;
						s.cpus = cpus;
						const RunResult r = run_native(s);
						if (!r.ok) {
							std::fprintf(stderr, "faultline-bench-libarena: %s %s %d allocs %d prod: %s\n",
								     s.series ? "series" : "before", to_string(v), n, p, r.error.c_str());
							failed++;
							continue;
						}
						(s.series ? c.after_alloc : c.before_alloc) += r.alloc_ns / o->runs;
						(s.series ? c.after_free : c.before_free) += r.free_ns / o->runs;
					}
				}
		std::fprintf(stderr, "faultline-bench-libarena: run %d of %d done (load %s)\n", run + 1, o->runs,
			     loadavg().c_str());
	}
	std::printf("load at end: %s\n", loadavg().c_str());
	for (Variant v : o->variants)
		print_latency_tables(stdout, *o, v, sums[int(v)], ncpus);

	std::printf("\nshape (series faster at every cell where producers <= %d CPUs):\n", ncpus);
	bool shape = true;
	for (Variant v : o->variants)
		shape &= print_shape(stdout, *o, v, sums[int(v)], ncpus);
	std::printf("  %s\n", shape ? "holds at every such cell" : "does not hold at the cells above");

	if (o->model) {
		std::printf("\nmodel: the same invocations on the simulated build, producers in turn, each on its own CPU "
			    "(deterministic; the protocol, not contention)\n");
		for (Variant v : o->variants)
			print_model_counts(stdout, *o, v);
	}
	return failed ? 1 : 0;
}
