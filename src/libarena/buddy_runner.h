// SPDX-License-Identifier: GPL-2.0-only
// Runs an allocator Program on a fresh arena and allocator, predicting every
// result from the shadow model (which objects are live, which wait on the
// deferred list, which the series' caches hold) and checking the invariants
// after every op and at every named point of the allocator (and, in a
// concurrent Program, at every scheduling decision). The one runner the fuzz
// target, the property tests, the explorer and the ctest replay share.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/sched/scheduler.h"
#include "libarena/buddy_program.h"

namespace fl::libarena {

struct BuddyVerdict {
	bool ok = true;
	bool bad_input = false;  // the Program cannot run (the message says why)
	size_t op = 0;     // 0-based, when !ok
	std::string what;  // "I12: free stale:0 returned 0, expected -EINVAL"
	std::vector<std::string> trace;  // one line per op: the op and what it returned
	std::vector<sched::Record> records;  // concurrent: the schedule's non-default picks
	uint64_t steps = 0;                  // concurrent: decisions with >= 2 runnable CPUs
	uint64_t trace_hash = 0;
	// Per op, what it returned ("object", "NULL", "0", "-22", "skipped",
	// "NMI; 0" for an NMI's): what the linearizability check compares
	// (buddy_linearize.h).
	std::vector<std::string> results;
	// Per op (concurrent runs), when it ran: its first and last event on a
	// clock the CPUs share. An op that ended before another began comes
	// first in every linearization (real-time order).
	std::vector<std::pair<u64, u64>> spans;
	// Per op (concurrent runs), on the same clock, when it first held the
	// buddy lock, itself or an NMI handler that ran inside it (the clock's
	// last event before that; 0: never): near where an op that changes the
	// buddy takes effect, which the end of its span can be far past. The
	// linearizability search starts from the order of these.
	std::vector<u64> locked;
	// (concurrent runs, and the linearizability check's candidates) Each NMI
	// handler that ran between two ops of its CPU: after the op that armed it
	// (a free's nmi=, or the CPU's last op) or after the CPU's next op, which
	// did not reach its point. Nothing of its CPU ran beside it, but the
	// other CPUs did: it is an element of the linearizability check's orders
	// of its own, with its own span and result, between those two ops of
	// its CPU (a sequential run appends its result to the arming op's).
	// A handler of several calls (no nested block) that another CPU ran
	// between, whether it came between ops or as an op of its own (no at=),
	// is one element per call instead (`call`): an NMI stops its own CPU
	// only, so each call is as atomic as an op is, no more, and another
	// CPU may see the state between two of them. Its CPU's order keeps
	// the calls in sequence, after the op they follow (an op-handler's
	// own op, whose result is then "NMI").
	struct Between {
		size_t armed_by = 0;  // the op that armed it
		size_t after = 0;     // the op it came after
		std::string result;   // "NMI; object"; one call's: "object"
		std::pair<u64, u64> span{0, UINT64_MAX};
		int call = -1;        // -1: the whole handler; else which of its calls (0-based)
		u64 locked = 0;       // as an op's (BuddyVerdict::locked)
		bool operator==(const Between &) const = default;
	};
	std::vector<Between> between;
	// (concurrent runs) Each NMI handler the schedule ran inside an op of its
	// CPU (a record "at TN LABEL#K nmi Nh"), where the candidates run it:
	// in op in_op, outside NMIs, at the count-th time that op passed the
	// named point `label` (Runner::place says which decisions have one).
	struct Placed {
		size_t armed_by = 0;  // the op that armed it (its results go there)
		size_t in_op = 0;
		std::string label;
		u32 count = 0;
		// It came before anything op in_op did that another context could
		// see (no arena write, no other CPU ran in the op), and armed_by is
		// its CPU's op before in_op: it is as much a step of its own right
		// before in_op (a Between after armed_by, over `span`) as a part of
		// it. Others may have seen its effect and not yet the op's (a
		// buddy-series fuzz report on correct code, 2026-12-06: an NMI
		// inside a free_bulk, before its lock, allocated an object another
		// CPU then freed, and a third NMI found the block the free_bulk
		// had not yet freed still taken), so the check tries it there too.
		bool ahead = false;
		std::pair<u64, u64> span{0, UINT64_MAX};
		bool operator==(const Placed &) const = default;
	};
	std::vector<Placed> placed;
	// (a candidate) a handler of `placed` did not find its place: its op
	// took another path there, so the order says nothing about the run.
	bool placed_missed = false;
	// A handler ran at a point inside an op after other CPUs had run in that
	// op: what the op did before the handler saw the state before them, and
	// the handler (and the op after it) the state after them. A candidate
	// runs the op and its handler as one step, before or after those CPUs'
	// ops, so no order may give both (a buddy-series fuzz report on correct
	// code, 2026-12-06: a spill found the transfer cache full, another CPU
	// then refilled from it and allocated the object the handler freed).
	// The run is not checked (check_buddy_linearizable).
	bool others_before_nmi = false;
	// The mirror: other CPUs ran inside an op after a handler at a point in
	// it, before the op's end. The handler saw the state before them and the
	// op's rest the state after them; a candidate runs both as one step, so
	// no order may give both (a 30-minute buddy-series campaign on correct
	// code, 2026-12-07, 54 reports: CPU 3's NMI alloc of a whole chunk found
	// none between an NMI's alloc inside CPU 2's free and that free's end,
	// where every order of whole steps gives it one). Such a run is not
	// checked if no order explains it (check_buddy_linearizable). Not for
	// a handler ahead (Placed::ahead): that one is a step of its own.
	bool others_after_nmi = false;
	// Another CPU's op or handler ran while an op or handler got a new chunk:
	// libarena gets a chunk outside its lock, so that CPU may have seen the
	// arena with the chunk's pages taken and the chunk not yet linked, a state
	// no order of whole ops gives (an NMI alloc, which takes existing chunks
	// only, NULL there and an object later where every candidate gives NULL
	// or an object at both: three buddy-series fuzz reports on correct code,
	// 2026-12-06). The run is not checked.
	bool growth_overlapped = false;
	// False when another CPU's op began or ended while a handler ran at a
	// named point inside an op: the candidates run that handler at the
	// same point, inside the op, as one step, which the run did not take,
	// so its spans order nothing and the check keeps each CPU's order only.
	bool real_time = true;
	// (a linearizability candidate) the element of its order (an op, or a
	// handler of `between`) that ran when a check failed.
	size_t failed_step = 0;
	// Per op, the objects its pointers named (0: none), as (allocating op + 1) << 8 | k.
	std::vector<std::vector<u64>> refs;
	std::string linearize_note;  // "not checked: too many orders" when over the cap
	// The acquisitions that failed (schedule events), each as the op on whose
	// CPU it was asked (an NMI's: the op it interrupted), the NMI depth, the
	// lock (0: the buddy lock, 1: a transfer cache's) and which acquisition
	// of that lock by that op at that depth it was (1-based).
	struct FailAt {
		size_t op;
		int depth;
		int lock;
		u32 question;
		bool operator==(const FailAt &) const = default;
	};
	std::vector<FailAt> fails;
};

// A concurrent Program runs under its own schedule (Replay of p.schedule).
BuddyVerdict run_buddy_program(const BuddyProgram &p);
// A concurrent Program under `s` (the explorer's strategies); a sequential
// one in program order under `s`, whose fail and NMI answers it takes.
BuddyVerdict run_buddy_program(const BuddyProgram &p, sched::Strategy &s);

// A sequential Program whose op k's pointers name the objects refs[k] names
// (objects named by the ops that allocated them, orig[k]: op k's index in the
// Program refs came from), not roles: the linearizability check's candidates.
// skipped[k]: op k is skipped with that outcome, as the concurrent run
// skipped it (its own rules: reinit and drain wait for the other CPUs).
struct BuddyPins {
	std::vector<size_t> orig;
	std::vector<std::vector<u64>> refs;
	std::vector<std::string> skipped;
	std::vector<BuddyVerdict::FailAt> fails;  // by orig op: they fail here too
	// The concurrent run's BuddyVerdict::between, each by the orig op that
	// armed it and its CPU: it stays armed (no point, no end of an op fires
	// it) until its place in the order, after op fire_after[k]'s position k.
	// One of a handler's calls apart (call >= 0: Between::call) runs alone
	// there, in NMI context on its CPU.
	struct PinnedNmi {
		size_t armed_by;
		int cpu;
		int call = -1;
	};
	std::vector<PinnedNmi> nmis;
	std::vector<std::vector<size_t>> fire_after;  // per op position: the handlers (nmis) that follow it
	std::vector<BuddyVerdict::Placed> placed;      // the concurrent run's: each runs at its place
	// (optional) Asked after each op position and the handlers after it,
	// with the verdict so far and the elements of the order begun: true
	// ends the run there (the check has the first difference it looks for).
	std::function<bool(const BuddyVerdict &, size_t begun)> enough;
};
BuddyVerdict run_buddy_program(const BuddyProgram &p, const BuddyPins &pins);

// The candidates of one linearizability check, run one after another: q
// and pins are the caller's, rebuilt for each order. run(same) runs the
// next one, whose order shares its first `same` elements with the last
// one run: it resumes from the state saved at the latest point of that
// shared prefix (before an op), instead of from the start, and gives the
// verdict run_buddy_program(q, pins) gives.
class BuddyCandidates {
public:
	BuddyCandidates(const BuddyProgram &q, const BuddyPins &pins);
	~BuddyCandidates();
	BuddyCandidates(const BuddyCandidates &) = delete;
	BuddyCandidates &operator=(const BuddyCandidates &) = delete;
	BuddyVerdict run(size_t same);

private:
	struct Impl;
	Impl *impl_;
};
// Resuming is on unless a test (or FL_BUDDY_RESUME=off|compare in the
// environment) turns it off (every candidate from the start) or asks to
// compare (each candidate is run afresh too, and a difference is a
// violation "checker: ...").
enum class BuddyResume { on, off, compare };
void set_buddy_candidate_resume(BuddyResume mode);

// The checks at every named point and scheduling decision skip a state they
// passed (nothing written to the arena, no live object more or less, the
// same CPUs inside an op): on unless a test turns it off to compare.
void set_buddy_point_check_reuse(bool on);

// The concurrency checkers of the allocator's runs, each on unless a
// benchmark turns it off to measure what it costs (buddy-explore --no-*):
// the lockset race checker (Scheduler::lockset), the checks at every named
// point and scheduling decision (caches, transfer caches, I8), and the
// linearizability check of concurrent runs. The checks after each op and
// at the end of a run stay on.
struct BuddyCheckers {
	bool lockset = true, point_checks = true, linearize = true;
};
void set_buddy_checkers(const BuddyCheckers &);

// The same, one op at a time, sequentially (the RapidCheck stateful model drives this).
class BuddySession {
public:
	explicit BuddySession(buddy_level level);
	~BuddySession();
	BuddySession(const BuddySession &) = delete;
	BuddySession &operator=(const BuddySession &) = delete;
	// Runs op and the checks after it; false (and verdict() says why) on a violation.
	bool step(const BuddyOp &op);
	const BuddyVerdict &verdict() const;
	size_t live_objects() const;
	// The op would be skipped (a double free of an object a cache holds, D2).
	bool would_skip(const BuddyOp &op) const;

private:
	BuddyProgram program_;
	struct Impl;
	Impl *impl_;
};

}  // namespace fl::libarena
