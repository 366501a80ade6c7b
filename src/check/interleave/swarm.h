// SPDX-License-Identifier: GPL-2.0-only
// The explorer's swarm: many small generated Programs per budget instead of
// the corpus' hand-written ones. Each is decoded from seeded random bytes by
// the fuzzers' concurrent decoder (decode_concurrent: threads, groups, the
// whole op vocabulary) and explored with the portfolio (bounded search,
// then PCT and random walks) for a small share of the budget. A finding is
// the explorer's (its records alone replay it: Finding::replay_error).
#pragma once

#include <cstdint>
#include <optional>

#include "check/interleave/explore.h"

namespace fl::interleave {

struct SwarmOptions {
	uint64_t seed = 1;
	double seconds = 10;            // the whole swarm's wall-clock budget
	uint64_t max_programs = 0;      // 0: no limit (tests: deterministic)
	double program_seconds = 0.25;  // each Program's budget
	uint64_t program_schedules = 400;
	bool stop_at_first = true;
	ScheduleChecks checks;
};

struct SwarmReport {
	uint64_t programs = 0;   // explored
	uint64_t exhausted = 0;  // whose bounded search finished
	// Over every Program: runs, distinct schedules (within their
	// Program, by trace hash), repeats, unclassified.
	uint64_t schedules = 0, distinct = 0, repeats = 0, unclassified = 0;
	UncheckedRuns linearize_unchecked;
	double seconds = 0;
	uint64_t finding_program = 0;  // 1-based, if a finding
	std::optional<Finding> finding;
};

SwarmReport swarm(const Config &, const SwarmOptions &);

}  // namespace fl::interleave
