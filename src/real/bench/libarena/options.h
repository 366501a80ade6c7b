// SPDX-License-Identifier: GPL-2.0-only
// faultline-bench-libarena's command line (`faultline bench --libarena`):
// which cells of seed 002's tables to run and for how long. Every value is
// checked in full; a bad one is a one-line error (exit 2).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "libarena/native/workload.h"

namespace fl::arena_bench {

struct Options {
	std::vector<Variant> variants{Variant::malloc_free, Variant::malloc_xfree};
	std::vector<int> allocs{1, 4, 16, 64, 256};
	std::vector<int> producers{1, 2, 4, 8};
	int runs = 3;
	double warmup_s = 0.1;
	double duration_s = 0.5;
	bool model = true;  // the simulated build's counts per op
	bool help = false;
};

std::optional<Options> parse_options(int argc, char **argv, std::string *err);
std::string usage();

}  // namespace fl::arena_bench
