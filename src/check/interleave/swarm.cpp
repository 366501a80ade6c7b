// SPDX-License-Identifier: GPL-2.0-only
#include "check/interleave/swarm.h"

#include <chrono>
#include <random>

#include "base/schedule_set.h"
#include "base/sched/strategy.h"
#include "check/program_binary.h"

namespace fl::interleave {

SwarmReport swarm(const Config &cfg, const SwarmOptions &o)
{
	using Clock = std::chrono::steady_clock;
	const Clock::time_point start = Clock::now();
	auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
	std::mt19937_64 rng(o.seed);
	sched::SplitMix64 explore_seeds(o.seed);  // not o.seed + programs: seeds S and S+1 shared explore seeds
	SwarmReport r;
	while ((!o.max_programs || r.programs < o.max_programs) && elapsed() < o.seconds) {
		const std::vector<uint8_t> bytes = random_program_bytes(rng);
		const ConcurrentInput in = decode_concurrent(bytes.data(), bytes.size());
		if (in.program.ops.empty())
			continue;
		std::string err;
		if (find_groups(in.program, &err).empty())
			continue;  // nothing concurrent to explore
		ExploreOptions e;
		e.seed = explore_seeds();
		e.seconds = o.program_seconds;
		e.max_schedules = o.program_schedules;
		e.stop_at_first = true;
		e.stop_when_exhausted = true;
		e.checks = o.checks;
		ExploreReport x = explore(in.program, cfg, e);
		add_program_counts(r, x);
		if (x.finding && !r.finding) {
			r.finding = std::move(x.finding);
			r.finding_program = r.programs;
			if (o.stop_at_first)
				break;
		}
	}
	r.seconds = elapsed();
	return r;
}

}  // namespace fl::interleave
