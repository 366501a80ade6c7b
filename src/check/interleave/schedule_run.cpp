// SPDX-License-Identifier: GPL-2.0-only
#include "check/interleave/schedule_run.h"

#include "check/execution.h"
#include "base/order_search.h"
#include "check/interleave/linearize.h"
#include "base/sched/strategy.h"

namespace fl::interleave {

namespace {

// The ghost invariants of freezing, at every scheduling point:
// - "frozen => no writer": once BPF_MAP_FREEZE succeeded, no array map VMA
//   that may become writable is mapped anywhere (freeze refuses while one
//   holds write-active, bpf_map_mmap clears VM_MAYWRITE on a frozen map
//   before the VMA is inserted). writecnt itself may be non-zero for a
//   moment after a freeze: map_update_elem counts itself before its
//   permission check fails.
// - "once a reader saw frozen && !write_active, the map's bytes never
//   change": bpf_map_is_rdonly() as the verifier reads it.
class FrozenBytes {
public:
	explicit FrozenBytes(Machine &m) : m_(m) {}
	std::string check()
	{
		if (m_.map_frozen() && m_.map_maywrite_mapped())
			return "freeze_iff: the map is frozen and a VM_MAYWRITE mapping of it is live";
		if (seen_) {
			uint64_t h = m_.map_data_hash();
			if (h && h != hash_)
				return "the map's bytes changed after a reader saw frozen && !write_active";
			return {};
		}
		if (m_.map_frozen() && m_.map_writecnt() == 0) {
			hash_ = m_.map_data_hash();
			seen_ = hash_ != 0;
		}
		return {};
	}

private:
	Machine &m_;
	bool seen_ = false;
	uint64_t hash_ = 0;
};

// "syscall:<op>", where a thread enters an op (interned once per kind).
const sched::Label &syscall_label(OpKind k)
{
	static std::vector<const sched::Label *> cache;
	const size_t i = size_t(k);
	if (cache.size() <= i)
		cache.resize(i + 1);
	if (!cache[i])
		cache[i] = &sched::label_named(std::string("syscall:") + to_string(k));
	return *cache[i];
}

Invariant invariant_of(sched::Outcome o, const std::string &report)
{
	switch (o) {
	case sched::Outcome::deadlock: return Invariant::deadlock;
	case sched::Outcome::livelock: return Invariant::livelock;
	case sched::Outcome::violation:
		if (report.find("lockdep:") != std::string::npos)
			return Invariant::lockdep;
		if (report.find("lockset:") != std::string::npos)
			return Invariant::data_race;
		if (report.find("freeze_iff:") != std::string::npos)
			return Invariant::freeze_iff;
		return Invariant::frozen_stable;
	default: return Invariant::none;
	}
}

class Runner {
public:
	Runner(const Program &p, const Config &cfg, const Group &g, const ScheduleChecks &checks)
		: p_(p), cfg_(cfg), g_(g), checks_(checks), e_(p, cfg), ghost_(e_.machine())
	{
	}

	ScheduleOutcome run(sched::Strategy &group_strategy)
	{
		sched::DefaultStrategy seq;
		sched::Scheduler s(seq);
		s.on_point = [this] { return ghost_.check(); };
		s.lockset = checks_.lockset;
		s.access_points = checks_.access_points;
		ScheduleOutcome out;
		// Ops before the group: one task.
		sequential(s, 0, g_.begin, out);
		if (!g_.empty() && !out.violation) {
			s.set_strategy(group_strategy);
			concurrent(s, out);
			s.set_strategy(seq);
		}
		if (!out.violation)
			sequential(s, g_.empty() ? g_.begin : g_.end, p_.ops.size(), out);
		// Whatever did not run (a violation stops the program) is left
		// out of the trace, as Execution leaves out what follows a stop.
		out.trace = e_.trace();
		out.stats = e_.machine().stats();
		if (!out.violation && e_.violation()) {
			out.violation = e_.violation();
			out.violation_op = e_.violation_op();
		}
		if (!out.violation && !g_.empty() && out.sched.outcome == sched::Outcome::done && linearize_enabled()) {
			LinearizeResult l = check_linearizable(p_, cfg_, g_, out.trace, completion_);
			note(out, std::move(l.violation), l.op);
			out.linearize_note = std::move(l.note);
			out.linearize_replays = l.replays;
		}
		return out;
	}

private:
	void note(ScheduleOutcome &out, Violation v, size_t op)
	{
		if (!out.violation && v) {
			out.violation = std::move(v);
			out.violation_op = op;
		}
	}

	void from_sched(ScheduleOutcome &out, const sched::RunResult &r, size_t op)
	{
		out.decisions += r.decisions;
		// A divergence is not a finding: verdict() reports it from out.sched.
		if (r.outcome == sched::Outcome::done || r.outcome == sched::Outcome::diverged)
			return;
		note(out, Violation{invariant_of(r.outcome, r.report), r.report}, op);
	}

	void sequential(sched::Scheduler &s, size_t from, size_t to, ScheduleOutcome &out)
	{
		if (from >= to)
			return;
		size_t failed_at = from;
		s.spawn([&] {
			for (size_t i = from; i < to; i++) {
				failed_at = i;
				e_.step();
				s.user_return(to_string(p_.ops[i].kind));
				if (e_.violation() || s.outcome_so_far() != sched::Outcome::done)
					return;
			}
		});
		sched::RunResult r = s.run();
		if (e_.violation())
			note(out, e_.violation(), e_.violation_op());
		from_sched(out, r, failed_at);
		if (g_.empty())
			out.sched = r;
	}

	void concurrent(sched::Scheduler &s, ScheduleOutcome &out)
	{
		const size_t n = g_.end - g_.begin;
		std::vector<Event> events(n);
		std::vector<Violation> viol(n);
		std::vector<bool> ran(n), busy(size_t(g_.threads));
		size_t first_bad = n;
		for (int t = 0; t < g_.threads; t++) {
			s.spawn([&, t] {
				for (size_t i = g_.begin; i < g_.end; i++) {
					const Op &op = p_.ops[i];
					if (op.thread != t)
						continue;
					s.point(syscall_label(op.kind));
					busy[size_t(t)] = true;
					events[i - g_.begin] = e_.run_op(i);
					s.user_return(to_string(op.kind));
					ran[i - g_.begin] = true;
					completion_.push_back(i);
					busy[size_t(t)] = false;
					Violation v = e_.machine().take_op_violation();
					bool quiet = true;
					for (bool b : busy)
						quiet &= !b;
					if (!v && quiet)
						v = e_.machine().check_invariants();
					if (!v && s.outcome_so_far() == sched::Outcome::violation && !s.report_so_far().empty())
						v = Violation{invariant_of(sched::Outcome::violation, s.report_so_far()),
							      s.report_so_far()};
					if (v && first_bad == n) {
						viol[i - g_.begin] = v;
						first_bad = i - g_.begin;
						if (s.outcome_so_far() == sched::Outcome::done)
							s.violation(to_string(v.what) + std::string(": ") + v.detail);
					}
				}
			});
		}
		out.sched = s.run();
		for (size_t k = 0; k < n; k++)
			if (ran[k])
				e_.record(events[k], viol[k]);
		if (first_bad < n)
			note(out, viol[first_bad], g_.begin + first_bad);
		from_sched(out, out.sched, g_.begin);
		if (!out.violation && out.sched.outcome == sched::Outcome::done) {
			Violation v = e_.machine().check_invariants();
			note(out, v, g_.end - 1);
		}
	}

	const Program &p_;
	Config cfg_;
	Group g_;
	ScheduleChecks checks_;
	Execution e_;
	std::vector<size_t> completion_;  // the group's ops in the order they returned
	FrozenBytes ghost_;
};

}  // namespace

Group find_group(const Program &p, std::string *error)
{
	Group g;
	size_t first = p.ops.size(), last = 0;
	for (size_t i = 0; i < p.ops.size(); i++) {
		if (p.ops[i].thread < 0)
			continue;
		first = std::min(first, i);
		last = i;
		g.threads = std::max(g.threads, p.ops[i].thread + 1);
	}
	if (first == p.ops.size())
		return Group{p.ops.size(), p.ops.size(), 0};
	for (size_t i = first; i <= last; i++)
		if (p.ops[i].thread < 0) {
			*error = "op " + std::to_string(i + 1) + " has no thread= but lies inside the concurrent group";
			return Group{p.ops.size(), p.ops.size(), 0};
		}
	std::vector<int> proc(size_t(g.threads), -1);
	for (size_t i = first; i <= last; i++) {
		int &pr = proc[size_t(p.ops[i].thread)];
		if (pr >= 0 && pr != p.ops[i].proc) {
			*error = "thread " + std::to_string(p.ops[i].thread) + " runs in two processes";
			return Group{p.ops.size(), p.ops.size(), 0};
		}
		pr = p.ops[i].proc;
	}
	g.begin = first;
	g.end = last + 1;
	return g;
}

std::string ScheduleOutcome::verdict() const
{
	if (!violation) {
		if (sched.outcome == sched::Outcome::diverged)
			return "diverged: " + sched.report;
		return "ok";
	}
	return std::string("violation ") + to_string(violation.what) + " at op " + std::to_string(violation_op + 1) +
	       ": " + violation.detail;
}

ScheduleOutcome run_schedule(const Program &p, const Config &cfg, sched::Strategy &group_strategy,
			     const ScheduleChecks &checks)
{
	std::string err;
	Group g = find_group(p, &err);
	Runner r(p, cfg, g, checks);
	return r.run(group_strategy);
}

Program with_schedule(const Program &p, const std::vector<sched::Record> &records)
{
	Program q = p;
	q.schedule = records;
	return q;
}

}  // namespace fl::interleave
