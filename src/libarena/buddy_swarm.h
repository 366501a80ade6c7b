// SPDX-License-Identifier: GPL-2.0-only
// The allocator explorer's swarm (`buddy-explore --swarm`): many small
// generated concurrent Programs per budget (generate_buddy_case, from a
// seeded source) instead of the corpus' hand-written ones, each explored by
// the bounded search and then PCT / random walks, and left as soon as its
// bounded search is exhausted (every schedule within the bound ran: more
// runs would mostly repeat them). A finding is the explorer's, replayed
// from its text.
#pragma once

#include <cstdint>
#include <optional>

#include "libarena/buddy_explore.h"

namespace fl::libarena {

struct BuddySwarmOptions {
	buddy_level level = buddy_level::series;
	uint64_t seed = 1;
	double seconds = 10;              // the whole swarm's wall-clock budget
	uint64_t max_programs = 0;        // 0: no limit (tests: deterministic)
	// Each Program's budget is a number of schedules, not seconds, so that
	// the same seed explores the same schedules whatever the load (the
	// wall clock decides only how many Programs fit; the last one may run
	// past it). program_seconds is a safety net for a pathological Program.
	double program_seconds = 30;
	uint64_t program_schedules = 40;
};

struct BuddySwarmReport {
	uint64_t programs = 0;   // explored
	uint64_t exhausted = 0;  // whose bounded search ran out (and were left there)
	// Over every Program: runs, distinct schedules (within their Program,
	// by trace hash), repeats, unclassified.
	uint64_t schedules = 0, distinct = 0, repeats = 0, unclassified = 0;
	UncheckedRuns linearize_unchecked;
	double seconds = 0;
	uint64_t finding_program = 0;  // 1-based, if a finding
	uint64_t finding_seed = 0;     // the generator's seed of that Program
	std::optional<BuddyFinding> finding;
};

// Program i (0-based) is generate_buddy_case(SeededChoices(s_i), level), s_i
// the i-th output of SplitMix64(seed): two seeds share no Program.
BuddySwarmReport buddy_swarm(const BuddySwarmOptions &);

}  // namespace fl::libarena
