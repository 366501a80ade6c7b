// SPDX-License-Identifier: GPL-2.0-only
// The schedule explorer for allocator Programs: one Program, its CPUs as
// tasks of the deterministic scheduler (src/base/sched), many schedules
// until a finding or the budget: the bounded search first (its first run is
// the default schedule; sched::BoundedSearch) for bounded_share of the
// budget, then PCT and the random walk alternating (seeded); with
// stop_when_exhausted, a Program whose bound ran out stops there. A finding is the Program with its schedule's
// records; it is replayed from them (as text) before it is reported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/sched/bounded.h"
#include "base/unchecked_runs.h"
#include "libarena/buddy_runner.h"

namespace fl::libarena {

struct BuddyExploreOptions {
	double seconds = 10;
	uint64_t max_schedules = 0;  // 0: no limit
	uint64_t seed = 1;
	int pct_depth = 3;
	// The bounded search first (base/sched/bounded.h), for bounded_share of
	// the seconds and of max_schedules: switches, lock failures and NMIs as
	// departures from the default schedule.
	sched::BoundedOptions bounded;
	double bounded_share = 0.5;
	bool stop_when_exhausted = false;
	// Then PCT and the random walk alternating, which fail a fallible
	// acquisition and run a pending NMI handler at these rates (per 256).
	sched::EventRates rates{8, 32};
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
	uint64_t bounded = 0;    // of which the bounded search's
	bool bounded_exhausted = false;  // every schedule within the bound ran
	// Distinct schedules by trace hash (ScheduleSet): distinct + repeats +
	// unclassified == schedules.
	uint64_t distinct = 0, repeats = 0, unclassified = 0;
	UncheckedRuns linearize_unchecked;  // schedules buddy_linearize.h could not check, and why
	double seconds = 0;
	std::optional<BuddyFinding> finding;
};

BuddyExploreReport explore_buddy(const BuddyProgram &, const BuddyExploreOptions &);

}  // namespace fl::libarena
