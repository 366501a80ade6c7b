// SPDX-License-Identifier: GPL-2.0-only
// Linearizability of one interleaved run (Herlihy & Wing): the concurrent
// group's observed results (every field of each op's Event: return value or
// errno, SIGBUS/SIGSEGV, loaded bytes, smaps text) and those of the ops after
// the group must be what SOME sequential order of the group's ops gives, an
// order that keeps each thread's own order. The sequential port is the
// specification: each candidate order is the same Program with the group's
// ops in that order and thread= removed, run on a fresh machine with no
// scheduler (docs/interleavings.md, "Linearizability").
//
// Every op of a group overlaps every other (there is no real time), so any
// per-thread-consistent order is a candidate. With several groups (a "join"
// or a sequential op between them) the whole history is checked: one order
// per group, each group's replayed from the state the chosen orders before
// it left, with the ops between groups compared too. Traces name no addresses
// (mappings are labels), so where mmap put a mapping never differs; a group
// op runs with the addresses it used (its labels as they were when it began).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check/execution.h"
#include "check/interleave/schedule_run.h"

namespace fl::interleave {

struct LinearizeResult {
	Violation violation;  // not_linearizable, with the history
	size_t op = 0;        // the program op where the closest order first differs
	std::string note;     // "not checked: too many orders (...)": the cap on replays ran out
	uint64_t replays = 0;
};

inline constexpr uint64_t kLinearizeCap = 5000;

// `trace`: the run's complete trace; `completion`: the groups' ops (as
// program op indices) in the order they returned. `cap` bounds the replays
// over all groups.
// `used`: the addresses each op ran with (Execution::used_addresses), for the group ops' candidates.
LinearizeResult check_linearizable(const Program &, const Config &, const std::vector<Group> &, const Trace &trace,
				   const std::vector<size_t> &completion, uint64_t cap = kLinearizeCap,
				   const std::vector<Execution::OpAddresses> &used = {});
// One group.
LinearizeResult check_linearizable(const Program &, const Config &, const Group &, const Trace &trace,
				   const std::vector<size_t> &completion, uint64_t cap = kLinearizeCap);

}  // namespace fl::interleave
