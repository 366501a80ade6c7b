// SPDX-License-Identifier: GPL-2.0-only
// faultline-bench: `faultline bench`. One run prints the seed's lines
// (run_bench_arraymap_mmap.sh subtitle, then summarize_ops' line); --matrix
// runs the whole matrix. Exit 0 ok (a skipped backend is ok), 1 a backend
// failed while running, 2 bad options.
#include <cstdio>

#include "real/bench/matrix.h"
#include "real/bench/model.h"
#include "real/bench/options.h"
#include "real/bench/runner.h"
#include "real/bench/uffd_backend.h"

using namespace fl::bench;

namespace {

std::string level_name(const PortLevel &l)
{
	return std::string(fl::to_string(l.patch)) + "/arch" + fl::to_string(l.arch);
}

int run_one(const Options &o)
{
	const Geometry &g = o.geometry;
	const Pattern pat = o.pattern();
	const bool ported = o.backend == "uffd" || o.backend == "model";
	printf("backend: %s%s, pattern: %s (%llu pages touched), array map: %u entries, mmap size %llu bytes "
	       "(%llu pages)\n",
	       o.backend.c_str(), ported ? (" " + level_name(o.level)).c_str() : "", pat.name().c_str(),
	       (unsigned long long)pat.touch_pages,
	       g.max_entries(), (unsigned long long)g.mmap_bytes(), (unsigned long long)g.pages());
	printf("  nr_threads: %d, map_size: %llu\n", o.timing.producers, (unsigned long long)g.map_bytes);
	if (o.backend == "model") {
		std::string err;
		ModelCounts c = model_iteration(g, pat, o.level, &err);
		if (!err.empty()) {
			printf("skipped: %s\n", err.c_str());
			return 0;
		}
		printf("%s\n", model_line(c, o.level).c_str());
		return 0;
	}
	std::string skip;
	auto b = make_backend(o.backend, g, o.level, &skip);
	if (!b) {
		printf("skipped: %s\n", skip.c_str());
		return 0;
	}
	RunResult r = run_bench(*b, g, pat, o.timing);
	if (!r.ok) {
		fprintf(stderr, "faultline-bench: %s: %s\n", o.backend.c_str(), r.error.c_str());
		return 1;
	}
	printf("%s\n", seed_line(r).c_str());
	if (auto *u = dynamic_cast<UffdBackend *>(b.get())) {
		UffdCounts c = u->counts();
		printf("uffd: %llu faults asked the port (%s): %llu installed, %llu refused\n",
		       (unsigned long long)c.faults, level_name(o.level).c_str(), (unsigned long long)c.continued,
		       (unsigned long long)c.refused);
	}
	return 0;
}

}  // namespace

int main(int argc, char **argv)
{
	std::string err;
	auto o = parse_options(argc, argv, &err);
	if (!o) {
		fprintf(stderr, "faultline-bench: %s\n", err.c_str());
		return 2;
	}
	if (o->help) {
		fputs(usage().c_str(), stdout);
		return 0;
	}
	setvbuf(stdout, nullptr, _IOLBF, 0);
	return o->matrix ? run_matrix(*o) : run_one(*o);
}
