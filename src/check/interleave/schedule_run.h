// SPDX-License-Identifier: GPL-2.0-only
// One execution of a Program under the deterministic scheduler: the ops
// before its first concurrent group run as one task; then one run from the
// first group to the last: each thread one task (interleaved by the
// strategy), with the ops between groups run at the barriers by one more
// task while no thread runs; the ops after the last group as one task.
// Checked at every scheduling point (ghost invariants, the count invariants
// with the ops in flight accounted: point_invariants.h, lockdep, the
// lockset), with the machine's invariants whenever no task is inside the
// kernel, and after the run for linearizability over every group.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "check/program.h"
#include "check/trace.h"
#include "base/sched/scheduler.h"

namespace fl::interleave {

// The concurrent group: ops [begin, end), threads T0..threads-1.
struct Group {
	size_t begin = 0, end = 0;
	int threads = 0;
	bool empty() const { return begin == end; }
};
// The concurrent groups in order (Program::schedule's comment): a group
// ends at an op without thread= or at a "join". Empty if the Program has no
// thread= ops, or (with error text) if a thread's ops name two processes.
std::vector<Group> find_groups(const Program &, std::string *error);
// The first group (empty if none).
Group find_group(const Program &, std::string *error);

struct ScheduleOutcome {
	sched::RunResult sched;  // of the group (or the whole program without one)
	Violation violation;     // the first one, whoever found it
	size_t violation_op = 0;
	Trace trace;
	Stats stats;             // the machine's counters at the end
	uint64_t decisions = 0;  // over every segment
	// The linearizability check (linearize.h): its sequential replays, and
	// why it did not run when it could not ("not checked: too many orders").
	uint64_t linearize_replays = 0;
	std::string linearize_note;
	bool finding() const { return bool(violation); }
	std::string verdict() const;  // "ok" / "violation NAME at op N: detail"
};

// The checkers a run may switch off or on (measurement, the explorer).
struct ScheduleChecks {
	bool lockset = true;         // Scheduler::lockset
	bool access_points = false;  // Scheduler::access_points
	bool linearize = true;       // the linearizability check (linearize.h)
	bool point_invariants = true;  // write-active and page counts at every point (point_invariants.h)
};

// Throws std::invalid_argument when the groups are invalid (find_groups'
// error): a Program's text is checked by its reader before it gets here.
ScheduleOutcome run_schedule(const Program &, const Config &, sched::Strategy &group_strategy,
			     const ScheduleChecks & = {});

// The program with `records` as its schedule (what a finding writes).
Program with_schedule(const Program &, const std::vector<sched::Record> &records);

}  // namespace fl::interleave
