// SPDX-License-Identifier: GPL-2.0-only
#include "check/interleave/explore.h"

#include <chrono>

#include "base/schedule_set.h"
#include "base/sched/bounded.h"
#include "base/sched/strategy.h"

namespace fl::interleave {

const char *to_string(StrategyKind k)
{
	switch (k) {
	case StrategyKind::portfolio: return "portfolio";
	case StrategyKind::default_: return "default";
	case StrategyKind::bounded: return "bounded";
	case StrategyKind::pct: return "pct";
	case StrategyKind::random: return "random";
	}
	return "?";
}

std::optional<StrategyKind> parse_strategy(const std::string &s)
{
	for (StrategyKind k : {StrategyKind::portfolio, StrategyKind::default_, StrategyKind::bounded,
			       StrategyKind::pct, StrategyKind::random})
		if (s == to_string(k))
			return k;
	return std::nullopt;
}

Program finding_program(const Program &p, const Config &cfg, const ScheduleOutcome &o)
{
	Program q = with_schedule(p, o.sched.records);
	q.header.arch = cfg.arch;
	q.header.patch = cfg.patch;
	q.header.page_shift = cfg.page_shift;
	q.header.door = cfg.door;
	q.header.bypass_spec_v1 = cfg.bypass_spec_v1;
	if (cfg.historic != Historic::none)
		q.header.historic = cfg.historic;
	q.expects.clear();
	Expectation e;
	e.violation = o.violation.what;
	q.expects.push_back(e);
	return q;
}

namespace {

using Clock = std::chrono::steady_clock;

class Explorer {
public:
	Explorer(const Program &p, const Config &cfg, const ExploreOptions &o)
		: p_(p), cfg_(cfg), o_(o), start_(Clock::now())
	{
	}

	ExploreReport run()
	{
		switch (o_.kind) {
		case StrategyKind::default_: {
			sched::DefaultStrategy d;
			uint64_t runs = 0, fresh = 0;
			one(d, "default", &runs, &fresh);
			break;
		}
		case StrategyKind::bounded: bounded(); break;
		case StrategyKind::pct: randomised(true, false); break;
		case StrategyKind::random: randomised(false, true); break;
		case StrategyKind::portfolio:
			// An exhausted bound has run every schedule it names: with
			// stop_when_exhausted the rest would mostly re-walk them.
			bounded();
			if (!(r_.bounded_exhausted && o_.stop_when_exhausted))
				randomised(true, true);
			break;
		}
		report_counts(r_, seen_);
		r_.seconds = elapsed();
		return std::move(r_);
	}

private:
	double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
	bool out_of_budget() const
	{
		return (o_.max_schedules && r_.schedules >= o_.max_schedules) || elapsed() >= o_.seconds;
	}
	bool stop() const { return (r_.finding && o_.stop_at_first) || out_of_budget(); }

	// Runs one schedule and counts it in `*runs` (and in `*fresh` if no
	// earlier run took it); true if it was a finding.
	bool one(sched::Strategy &s, const std::string &name, uint64_t *runs, uint64_t *fresh)
	{
		ScheduleOutcome o = run_schedule(p_, cfg_, s, o_.checks);
		r_.schedules++;
		++*runs;
		if (seen_.add(o.sched.trace_hash) == ScheduleSet::Seen::fresh)
			++*fresh;
		r_.max_steps = std::max(r_.max_steps, o.sched.steps);
		r_.decisions += o.decisions;
		r_.switches += o.sched.switches;
		r_.linearize_unchecked.add(o.linearize_note);
		last_steps_ = o.sched.steps;
		if (!o.finding() || r_.finding)
			return o.finding();
		Finding f;
		f.strategy = name;
		f.schedule = r_.schedules;
		f.seconds = elapsed();
		f.program = finding_program(p_, cfg_, o);
		f.program.access_points = p_.access_points || o_.checks.access_points;
		// The records alone must reproduce it.
		sched::Replay rep(o.sched.records);
		ScheduleOutcome again = run_schedule(f.program, cfg_, rep, o_.checks);
		if (again.verdict() != o.verdict() || again.sched.trace_hash != o.sched.trace_hash)
			f.replay_error = "the finding's schedule did not replay: first run '" + o.verdict() +
					 "', replay '" + again.verdict() + "'";
		f.outcome = std::move(o);
		r_.finding = std::move(f);
		return true;
	}

	// Every schedule departing from the default at most max_deviations
	// times (sched::BoundedSearch). True if finished (exhausted, or a finding).
	bool bounded()
	{
		sched::BoundedSearch search(o_.max_deviations, o_.max_events);
		while (!stop()) {
			std::optional<sched::BoundedSearch::Node> n = search.next();
			if (!n) {
				r_.bounded_exhausted = true;
				return true;
			}
			sched::Forced f(n->picks, n->events);
			const std::string name = "bounded(" + std::to_string(n->departures()) + " departures)";
			if (one(f, name, &r_.bounded, &r_.bounded_new) && o_.stop_at_first)
				return true;
			search.expand(*n, f);
		}
		return r_.finding.has_value();
	}

	void randomised(bool pct, bool random)
	{
		sched::SplitMix64 seeds(o_.seed);  // not o_.seed + i: then seed S+2 re-ran seed S's schedules from the third on
		uint64_t i = 0;
		uint64_t k = std::max<uint64_t>(r_.max_steps, 8);
		while (!stop()) {
			const uint64_t seed = seeds();
			bool use_pct = pct && (!random || i % 2 == 0);
			if (use_pct) {
				sched::Pct s(seed, o_.pct_depth, k);
				one(s, "pct(seed=" + std::to_string(seed) + ",d=" + std::to_string(o_.pct_depth) + ",k=" +
					       std::to_string(k) + ")",
				    &r_.pct, &r_.pct_new);
			} else {
				sched::RandomWalk s(seed);
				one(s, "random(seed=" + std::to_string(seed) + ")", &r_.random, &r_.random_new);
			}
			k = std::max(k, last_steps_);  // PCT's k: the longest run so far
			i++;
		}
	}

	const Program &p_;
	Config cfg_;
	ExploreOptions o_;
	Clock::time_point start_;
	ExploreReport r_;
	ScheduleSet seen_;
	uint64_t last_steps_ = 0;
};

}  // namespace

ExploreReport explore(const Program &p, const Config &cfg, const ExploreOptions &o)
{
	return Explorer(p, cfg, o).run();
}

}  // namespace fl::interleave
