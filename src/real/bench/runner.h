// SPDX-License-Identifier: GPL-2.0-only
// The timing loop of the seed's bench framework (tools/testing/selftests/bpf/
// bench.c): N producer threads each repeat one iteration (mmap, touch,
// munmap) while the main thread samples the shared op counter; warm-up
// samples are dropped. The summary is the framework's ops_report_final:
// throughput mean +/- sample stddev in M ops/s, latency = producers * 1000 /
// mean ns per op, printed in run_bench_*.sh's summarize_ops line shape.
#pragma once

#include <cstdint>
#include <string>

#include "real/bench/backend.h"

namespace fl::bench {

struct Timing {
	double duration_s = 5.0;  // measured time (bench.c: -d 5)
	double warmup_s = 1.0;    // bench.c: -w 1
	int producers = 1;
};

struct RunResult {
	bool ok = false;
	std::string error;  // a backend failure during the run
	double mops_mean = 0, mops_stddev = 0, latency_ns = 0;
	uint64_t ops = 0;    // measured iterations
	double seconds = 0;  // measured wall time
};

// The sample period: 1 s as in bench.c, or duration/5 for short runs so that
// the stddev has samples. The measured phase ends at duration and once every
// producer completed an op that started in it (slow points: one op can
// outlast the whole duration). The mean is each producer's measured ops over
// the time they took, summed (equal to bench.c's hits/s when ops are short,
// unbiased when they are long); the stddev is over the sample periods.
RunResult run_bench(Backend &, const Geometry &, const Pattern &, const Timing &);

// "arraymap-mmap: throughput: X +/- Y M ops/s, latency: Z ns/op"
std::string seed_line(const RunResult &);

}  // namespace fl::bench
