// SPDX-License-Identifier: GPL-2.0-only
// --matrix: the seed script's matrix (threads x sizes) times the review
// discussion's four access patterns, for every backend; progress on stderr,
// then DIR/matrix.csv, DIR/matrix.json and one latency-vs-size SVG per
// pattern.
#pragma once

#include <string>
#include <vector>

#include "real/bench/model.h"
#include "real/bench/options.h"

namespace fl::bench {

struct Point {
	std::string backend, level;  // level: the port's patch/width (uffd, model), else ""
	uint64_t map_bytes = 0, pages = 0;
	int threads = 1;
	std::string pattern;
	std::string status = "ok";  // ok | skipped: ... | error: ...
	RunResult run;              // real backends
	ModelCounts model;          // model
	bool is_model = false;
};

// The four patterns of the discussion (touch = every page).
std::vector<Pattern> matrix_patterns(const Geometry &);

std::string to_csv(const std::vector<Point> &);
std::string to_json(const std::vector<Point> &, const Options &);
// One plot per pattern: latency against map size at `threads` producers.
std::string plot_pattern(const std::vector<Point> &, const std::string &pattern, int threads);

// Runs everything and writes the files; returns the exit code.
int run_matrix(const Options &);

}  // namespace fl::bench
