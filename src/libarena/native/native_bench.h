// SPDX-License-Identifier: GPL-2.0-only
// The native build's producers: one real thread per producer, pinned, each
// running invocations (workload.h) on its own CPU id with every alloc and
// free timed on its own (a timer read on each side of the call, as the
// seed's bpf_ktime_get_ns pair: the timer's cost is inside the figure; here
// the TSC, converted to ns). Every run ends with the invariant check of
// NativeBuddy::drain_and_check. Plain types only: callers need not be built
// against the native primitives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libarena/native/workload.h"

namespace fl::arena_bench {

inline constexpr int kMaxProducers = 8;  // the native build's BUDDY_NR_CPUS

struct RunSpec {
	bool series = false;  // level `series`, else `before`
	Variant variant = Variant::malloc_free;
	int nallocs = 1;
	int producers = 1;
	uint64_t size = 64;
	double warmup_s = 0.1;    // run, then collect for duration_s
	double duration_s = 0.5;
	uint64_t invocations = 0;  // > 0: each producer runs exactly this many, all collected
	std::vector<int> cpus;     // producer i runs on cpus[i % size]; empty: unpinned
};

struct RunResult {
	bool ok = false;
	std::string error;  // why not ok: setup, a failed op, or a broken invariant
	uint64_t allocs = 0, frees = 0;  // collected
	double alloc_ns = 0, free_ns = 0;  // mean per op
};

RunResult run_native(const RunSpec &);

// The CPUs this process may run on (sched_getaffinity).
std::vector<int> allowed_cpus();

// The cost of the timer pair around every op (ns), for the output.
double timer_pair_ns();

}  // namespace fl::arena_bench
