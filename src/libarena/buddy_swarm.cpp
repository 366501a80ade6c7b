// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_swarm.h"

#include <chrono>

#include "base/schedule_set.h"
#include "base/sched/strategy.h"
#include "libarena/buddy_generate.h"

namespace fl::libarena {

BuddySwarmReport buddy_swarm(const BuddySwarmOptions &o)
{
	using Clock = std::chrono::steady_clock;
	const Clock::time_point start = Clock::now();
	auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
	BuddySwarmReport r;
	sched::SplitMix64 seeds(o.seed);  // not o.seed + i: then seed 2's Programs were seed 1's, one later
	while ((!o.max_programs || r.programs < o.max_programs) && (r.programs == 0 || elapsed() < o.seconds)) {
		const uint64_t seed = seeds();
		SeededChoices choices(seed);
		const BuddyCase c = generate_buddy_case(choices, o.level);
		BuddyExploreOptions e;
		e.seed = seed;
		e.seconds = o.program_seconds;
		e.max_schedules = o.program_schedules;
		e.stop_when_exhausted = true;
		BuddyExploreReport x = explore_buddy(c.program, e);
		add_program_counts(r, x);
		if (x.finding) {
			r.finding = std::move(x.finding);
			r.finding_program = r.programs;
			r.finding_seed = seed;
			break;
		}
	}
	r.seconds = elapsed();
	return r;
}

}  // namespace fl::libarena
