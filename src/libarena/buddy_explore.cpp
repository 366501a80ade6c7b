// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_explore.h"

#include <algorithm>
#include <chrono>

#include "base/schedule_set.h"
#include "base/sched/bounded.h"
#include "base/sched/strategy.h"

namespace fl::libarena {

namespace {

using Clock = std::chrono::steady_clock;

class Explorer {
public:
	Explorer(const BuddyProgram &p0, const BuddyExploreOptions &o) : p_(p0), o_(o), start_(Clock::now())
	{
		p_.concurrent = true;
		p_.schedule.clear();
	}

	BuddyExploreReport run()
	{
		bounded();
		if (!r_.finding && !(r_.bounded_exhausted && o_.stop_when_exhausted))
			randomised();
		report_counts(r_, seen_);
		r_.seconds = elapsed();
		return std::move(r_);
	}

private:
	double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
	// Out of the budget's `share`; the first schedule always runs.
	bool out_of(double share) const
	{
		return r_.schedules && (elapsed() >= o_.seconds * share ||
					(o_.max_schedules && r_.schedules >= uint64_t(double(o_.max_schedules) * share)));
	}

	// Runs one schedule; true if it ended the exploration (a finding).
	bool one(sched::Strategy &s, const std::string &name)
	{
		BuddyVerdict v = run_buddy_program(p_, s);
		r_.schedules++;
		seen_.add(v.trace_hash);
		r_.linearize_unchecked.add(v.linearize_note);
		k_ = std::max(k_, v.steps);
		if (v.ok)
			return false;
		BuddyFinding f{name, r_.schedules, elapsed(), p_, v, ""};
		if (!v.bad_input) {
			f.program.schedule = v.records;
			// The text form alone must reproduce it.
			std::string err;
			auto q = parse_buddy_program(format_buddy_program(f.program), &err);
			const BuddyVerdict again = q ? run_buddy_program(*q) : BuddyVerdict{};
			if (!q || again.ok || again.what != v.what || again.trace_hash != v.trace_hash)
				f.replay_error = "the finding did not replay from its text: first '" + v.what +
						 "', replay '" + (q ? again.what : err) + "'";
		}
		r_.finding = std::move(f);
		return true;
	}

	void bounded()
	{
		sched::BoundedSearch search(o_.bounded.max_deviations, o_.bounded.max_events);
		while (!out_of(o_.bounded_share)) {
			std::optional<sched::BoundedSearch::Node> n = search.next();
			if (!n) {
				r_.bounded_exhausted = true;
				return;
			}
			sched::Forced f(n->picks, n->events);
			r_.bounded++;
			// no parentheses: tools/verifylib reads "(name)" from the report line
			const std::string name = n->departures() ? "bounded[" + picks_text(n->picks) + "]" : "default";
			if (one(f, name))
				return;
			search.expand(*n, f);
		}
	}

	static std::string picks_text(const std::map<uint64_t, int> &picks)
	{
		std::string s;
		for (const auto &[step, task] : picks)
			s += (s.empty() ? "" : ",") + std::string("step ") + std::to_string(step) + " T" + std::to_string(task);
		return s;
	}

	void randomised()
	{
		sched::SplitMix64 seeds(o_.seed);  // not o_.seed + i: then seed S+2 re-ran seed S's schedules from the third on
		for (uint64_t i = 0; !out_of(1); i++) {
			const uint64_t seed = seeds();
			if (i % 2 == 0) {
				sched::Pct s(seed, o_.pct_depth, k_, o_.rates);
				if (one(s, "pct(seed=" + std::to_string(seed) + ",d=" + std::to_string(o_.pct_depth) +
						   ",k=" + std::to_string(k_) + ")"))
					return;
			} else {
				sched::RandomWalk s(seed, o_.rates);
				if (one(s, "random(seed=" + std::to_string(seed) + ")"))
					return;
			}
		}
	}

	BuddyProgram p_;
	BuddyExploreOptions o_;
	Clock::time_point start_;
	BuddyExploreReport r_;
	ScheduleSet seen_;
	uint64_t k_ = 8;  // PCT's k: the longest run so far
};

}  // namespace

BuddyExploreReport explore_buddy(const BuddyProgram &p, const BuddyExploreOptions &o)
{
	return Explorer(p, o).run();
}

}  // namespace fl::libarena
