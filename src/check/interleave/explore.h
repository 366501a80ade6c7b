// SPDX-License-Identifier: GPL-2.0-only
// The interleaving explorer: many schedules of one Program on one
// configuration, until a finding or the budget. A finding is re-run from its
// label-anchored records alone and must give the same verdict and the same
// point trace (else the explorer fails loudly: replay_error).
//
// Strategies: default (the one schedule without preemption), bounded (every
// schedule that departs from the default at most `max_deviations` times, in
// order of the number of departures: exhaustive for small Programs), pct
// (seeded, depth d), random (seeded walk), and portfolio = default, then
// bounded while it fits the budget, then pct and random alternating.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/unchecked_runs.h"
#include "check/interleave/schedule_run.h"

namespace fl::interleave {

enum class StrategyKind : uint8_t { portfolio, default_, bounded, pct, random };
const char *to_string(StrategyKind);
std::optional<StrategyKind> parse_strategy(const std::string &);

struct ExploreOptions {
	StrategyKind kind = StrategyKind::portfolio;
	uint64_t seed = 1;
	int pct_depth = 3;
	int max_deviations = 2;
	// Bounded search: the fail/NMI questions after the last event
	// departure it branches on (a small budget: each adds a subtree).
	uint64_t max_events = 2;
	double seconds = 10;          // wall-clock budget
	uint64_t max_schedules = 0;   // 0: no limit
	bool stop_at_first = true;
	// portfolio: stop once the bounded search is exhausted (the swarm:
	// the Program's schedules within the bound all ran; move on).
	bool stop_when_exhausted = false;
	ScheduleChecks checks;        // every schedule and the finding's replay
};

struct Finding {
	std::string strategy;     // e.g. "pct(seed=7,d=3)"
	uint64_t schedule = 0;    // 1-based index of the schedule that found it
	double seconds = 0;
	Program program;          // with the schedule, header pinned, expect line
	ScheduleOutcome outcome;
	std::string replay_error; // empty: the records replay exactly
};

struct ExploreReport {
	uint64_t schedules = 0;                     // runs
	uint64_t bounded = 0, pct = 0, random = 0;  // runs per strategy
	bool bounded_exhausted = false;             // every schedule within the bound ran
	// Distinct schedules by trace hash (ScheduleSet): over every run, and
	// the runs of each strategy that no earlier run had taken. distinct +
	// repeats + unclassified == schedules.
	uint64_t distinct = 0, repeats = 0, unclassified = 0;
	uint64_t bounded_new = 0, pct_new = 0, random_new = 0;
	uint64_t max_steps = 0;
	uint64_t decisions = 0, switches = 0;       // summed over every schedule
	UncheckedRuns linearize_unchecked;          // schedules linearize.h could not check, and why
	double seconds = 0;
	std::optional<Finding> finding;
};

ExploreReport explore(const Program &, const Config &, const ExploreOptions &);

// The program pinned to `cfg` with its schedule and `expect` line: what a
// finding is written as.
Program finding_program(const Program &, const Config &, const ScheduleOutcome &);

}  // namespace fl::interleave
