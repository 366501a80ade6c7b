// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_explore.h"

#include <algorithm>
#include <chrono>

#include "base/schedule_set.h"
#include "base/sched/strategy.h"

namespace fl::libarena {

BuddyExploreReport explore_buddy(const BuddyProgram &p0, const BuddyExploreOptions &o)
{
	using Clock = std::chrono::steady_clock;
	const Clock::time_point start = Clock::now();
	auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
	BuddyProgram p = p0;
	p.concurrent = true;
	p.schedule.clear();
	BuddyExploreReport r;
	ScheduleSet seen;
	uint64_t k = 8;  // PCT's k: the longest run so far
	auto out_of_budget = [&] {
		return r.schedules && (elapsed() >= o.seconds || (o.max_schedules && r.schedules >= o.max_schedules));
	};
	// One schedule; true when it ends the search (a finding, or bad input).
	auto one = [&](sched::Strategy &s, const std::string &name) {
		const BuddyVerdict v = run_buddy_program(p, s);
		r.schedules++;
		seen.add(v.trace_hash);
		r.linearize_unchecked += !v.linearize_note.empty();
		k = std::max(k, v.steps);
		if (v.bad_input) {
			r.finding = BuddyFinding{name, r.schedules, elapsed(), p, v, ""};
			return true;
		}
		if (v.ok)
			return false;
		BuddyFinding f{name, r.schedules, elapsed(), p, v, ""};
		f.program.schedule = v.records;
		// The text form alone must reproduce it.
		std::string err;
		auto q = parse_buddy_program(format_buddy_program(f.program), &err);
		const BuddyVerdict again = q ? run_buddy_program(*q) : BuddyVerdict{};
		if (!q || again.ok || again.what != v.what || again.trace_hash != v.trace_hash)
			f.replay_error = "the finding did not replay from its text: first '" + v.what + "', replay '" +
					 (q ? again.what : err) + "'";
		r.finding = std::move(f);
		return true;
	};
	// The bounded search gets half the budget at most: a long Program's
	// space within two departures outlasts any budget, and PCT and the walk
	// reach deeper schedules.
	auto half_spent = [&] {
		return r.schedules && (elapsed() >= o.seconds / 2 || (o.max_schedules && r.schedules >= (o.max_schedules + 1) / 2));
	};
	const sched::BoundedEnd end = sched::bounded_search(o.bounded, half_spent, [&](sched::Forced &f, const std::string &name) {
		r.bounded++;
		return one(f, r.bounded == 1 ? "default" : name);  // no departure yet: the default schedule
	});
	r.bounded_exhausted = end == sched::BoundedEnd::exhausted;
	for (uint64_t i = 0; !r.finding && !out_of_budget(); i++) {
		const uint64_t seed = o.seed + i;
		if (i % 2 == 0) {
			sched::Pct s(seed, o.pct_depth, k, o.rates);
			one(s, "pct(seed=" + std::to_string(seed) + ",d=" + std::to_string(o.pct_depth) + ",k=" +
				       std::to_string(k) + ")");
		} else {
			sched::RandomWalk s(seed, o.rates);
			one(s, "random(seed=" + std::to_string(seed) + ")");
		}
	}
	r.distinct = seen.distinct();
	r.repeats = seen.repeats();
	r.unclassified = seen.unclassified();
	r.seconds = elapsed();
	return r;
}

}  // namespace fl::libarena
