// SPDX-License-Identifier: GPL-2.0-only
// The schedule explorer for allocator Programs: one Program, its CPUs as
// tasks of the deterministic scheduler (src/base/sched), many schedules
// (the default one, then PCT and the random walk alternating, seeded) until
// a finding or the budget. A finding is the Program with its schedule's
// records; it is replayed from them (as text) before it is reported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "libarena/buddy_runner.h"

namespace fl::libarena {

struct BuddyExploreOptions {
	double seconds = 10;
	uint64_t max_schedules = 0;  // 0: no limit
	uint64_t seed = 1;
	int pct_depth = 3;
};

struct BuddyFinding {
	std::string strategy;  // "pct(seed=7,d=3,k=40)"
	uint64_t schedule = 0;  // 1-based
	double seconds = 0;
	BuddyProgram program;   // concurrent, with its schedule
	BuddyVerdict verdict;
	std::string replay_error;  // empty: the text form replays to the same verdict
};

struct BuddyExploreReport {
	uint64_t schedules = 0;  // runs
	// Distinct schedules by trace hash (ScheduleSet; there is no bounded
	// search here, so nothing is ever exhausted): distinct + repeats +
	// unclassified == schedules.
	uint64_t distinct = 0, repeats = 0, unclassified = 0;
	uint64_t linearize_unchecked = 0;  // schedules with too many orders to check (buddy_linearize.h)
	double seconds = 0;
	std::optional<BuddyFinding> finding;
};

BuddyExploreReport explore_buddy(const BuddyProgram &, const BuddyExploreOptions &);

}  // namespace fl::libarena
