// SPDX-License-Identifier: GPL-2.0-only
#include "check/interleave/schedule_run.h"

#include "check/execution.h"
#include "base/order_search.h"
#include "check/interleave/linearize.h"
#include "check/interleave/point_invariants.h"
#include "base/arena.h"
#include "base/sched/strategy.h"

#include <stdexcept>

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
	arena::Pause heap;  /* process state: never in an input's arena */
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
		if (report.find("write_active:") != std::string::npos)
			return Invariant::write_active;
		if (report.find("page_refcount:") != std::string::npos)
			return Invariant::page_refcount;
		return Invariant::frozen_stable;
	default: return Invariant::none;
	}
}

class Runner {
public:
	Runner(const Program &p, const Config &cfg, std::vector<Group> groups, const ScheduleChecks &checks)
		: p_(p), cfg_(cfg), groups_(std::move(groups)),
		  g_(groups_.empty() ? Group{p.ops.size(), p.ops.size(), 0} : groups_.front()), checks_(checks),
		  e_(p, cfg), ghost_(e_.machine()), points_(e_.machine(), p)
	{
	}

	ScheduleOutcome run(sched::Strategy &group_strategy)
	{
		sched::DefaultStrategy seq;
		sched::Scheduler s(seq);
		s.on_point = [this] {
			std::string v = ghost_.check();
			if (v.empty() && checks_.point_invariants)
				v = points_.check();
			return v;
		};
		s.lockset = checks_.lockset;
		s.access_points = checks_.access_points || p_.access_points;
		ScheduleOutcome out;
		// Ops before the group: one task.
		sequential(s, 0, g_.begin, out);
		if (!g_.empty() && !out.violation) {
			s.set_strategy(group_strategy);
			concurrent(s, out);
			s.set_strategy(seq);
		}
		if (!out.violation)
			sequential(s, g_.empty() ? g_.begin : groups_.back().end, p_.ops.size(), out);
		// Whatever did not run (a violation stops the program) is left
		// out of the trace, as Execution leaves out what follows a stop.
		out.trace = e_.trace();
		out.stats = e_.machine().stats();
		if (!out.violation && e_.violation()) {
			out.violation = e_.violation();
			out.violation_op = e_.violation_op();
		}
		if (!out.violation && !g_.empty() && out.sched.outcome == sched::Outcome::done && checks_.linearize) {
			LinearizeResult l =
				check_linearizable(p_, cfg_, groups_, out.trace, completion_, kLinearizeCap, e_.used_addresses());
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
				points_.enter(p_.ops[i]);
				e_.step();
				points_.leave(p_.ops[i]);
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

	// The groups as one run: each thread is one task over every group (so
	// a record's occurrence counts over the whole Program); with several
	// groups one more task, the last id, waits at each barrier until every
	// thread arrived, then runs the ops up to the next group while no group
	// task runs, then opens the next group.
	void concurrent(sched::Scheduler &s, ScheduleOutcome &out)
	{
		const size_t base = groups_.front().begin, n = groups_.back().end - base;
		int threads = 0;
		for (const Group &g : groups_)
			threads = std::max(threads, g.threads);
		std::vector<Event> events(n);
		std::vector<Violation> viol(n);
		std::vector<bool> ran(n), recorded(n), busy(static_cast<size_t>(threads));
		std::vector<int> arrived(groups_.size());
		size_t phase = 0, first_bad = n;
		const sched::Label &join = sched::label_named("interleave:join");
		auto record_ran = [&](const Group &g) {
			for (size_t i = g.begin; i < g.end; i++)
				if (ran[i - base] && !recorded[i - base]) {
					e_.record(events[i - base], viol[i - base]);
					recorded[i - base] = true;
				}
		};
		for (int t = 0; t < threads; t++) {
			s.spawn([&, t] {
				for (size_t gi = 0; gi < groups_.size(); gi++) {
					if (gi > 0)
						s.join_wait(&phase, [&, gi] { return phase == gi; }, join);
					for (size_t i = groups_[gi].begin; i < groups_[gi].end; i++) {
						const Op &op = p_.ops[i];
						if (op.thread != t)
							continue;
						s.point(syscall_label(op.kind));
						busy[size_t(t)] = true;
						points_.enter(op);
						events[i - base] = e_.run_op(i);
						points_.leave(op);
						s.user_return(to_string(op.kind));
						ran[i - base] = true;
						completion_.push_back(i);
						busy[size_t(t)] = false;
						Violation v = e_.machine().take_op_violation();
						bool quiet = true;
						for (bool b : busy)
							quiet &= !b;
						if (!v && quiet)
							v = e_.machine().check_invariants();
						if (!v && s.outcome_so_far() == sched::Outcome::violation &&
						    !s.report_so_far().empty())
							v = Violation{invariant_of(sched::Outcome::violation, s.report_so_far()),
								      s.report_so_far()};
						if (v && first_bad == n) {
							viol[i - base] = v;
							first_bad = i - base;
							if (s.outcome_so_far() == sched::Outcome::done)
								s.violation(to_string(v.what) + std::string(": ") + v.detail);
						}
					}
					arrived[gi]++;
					s.join_wake(&phase);
				}
			});
		}
		if (groups_.size() > 1)
			s.spawn([&] {
				for (size_t gi = 0; gi + 1 < groups_.size(); gi++) {
					s.join_wait(&phase, [&, gi] { return arrived[gi] == threads; }, join);
					s.join_all();  // the barrier: the group happened before what follows
					record_ran(groups_[gi]);
					for (size_t i = groups_[gi].end; i < groups_[gi + 1].begin; i++) {
						points_.enter(p_.ops[i]);
						e_.step();
						points_.leave(p_.ops[i]);
						s.user_return(to_string(p_.ops[i].kind));
						if (e_.violation()) {
							s.violation(to_string(e_.violation().what) + std::string(": ") +
								    e_.violation().detail);
							return;
						}
					}
					s.join_all();
					phase = gi + 1;
					s.join_wake(&phase);
				}
			});
		out.sched = s.run();
		for (const Group &g : groups_)
			record_ran(g);
		if (first_bad < n)
			note(out, viol[first_bad], base + first_bad);
		if (e_.violation())
			note(out, e_.violation(), e_.violation_op());
		from_sched(out, out.sched, base);
		if (!out.violation && out.sched.outcome == sched::Outcome::done) {
			Violation v = e_.machine().check_invariants();
			note(out, v, base + n - 1);
		}
	}

	const Program &p_;
	Config cfg_;
	std::vector<Group> groups_;
	Group g_;  // the first group (empty: none)
	ScheduleChecks checks_;
	Execution e_;
	std::vector<size_t> completion_;  // the groups' ops in the order they returned
	FrozenBytes ghost_;
	PointInvariants points_;
};

}  // namespace

std::vector<Group> find_groups(const Program &p, std::string *error)
{
	std::vector<Group> groups;
	std::vector<int> proc;
	size_t next_join = 0;
	for (size_t i = 0; i < p.ops.size(); i++) {
		const Op &op = p.ops[i];
		bool join = false;
		while (next_join < p.joins.size() && p.joins[next_join] <= i)
			join |= p.joins[next_join++] == i;
		if (op.thread < 0)
			continue;
		if (groups.empty() || groups.back().end != i || join)
			groups.push_back(Group{i, i, 0});
		Group &g = groups.back();
		g.end = i + 1;
		g.threads = std::max(g.threads, op.thread + 1);
		if (proc.size() <= size_t(op.thread))
			proc.resize(size_t(op.thread) + 1, -1);
		int &pr = proc[size_t(op.thread)];
		if (pr >= 0 && pr != op.proc) {
			*error = "thread " + std::to_string(op.thread) + " runs in two processes";
			return {};
		}
		pr = op.proc;
	}
	return groups;
}

Group find_group(const Program &p, std::string *error)
{
	std::vector<Group> groups = find_groups(p, error);
	return groups.empty() ? Group{p.ops.size(), p.ops.size(), 0} : groups.front();
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
	std::vector<Group> groups = find_groups(p, &err);
	if (!err.empty())  // run sequentially, it would pass as a schedule it never was
		throw std::invalid_argument("run_schedule: " + err);
	Runner r(p, cfg, std::move(groups), checks);
	return r.run(group_strategy);
}

Program with_schedule(const Program &p, const std::vector<sched::Record> &records)
{
	Program q = p;
	q.schedule = records;
	return q;
}

}  // namespace fl::interleave
