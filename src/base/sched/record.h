// SPDX-License-Identifier: GPL-2.0-only
// A schedule record: one decision that differs from the default policy,
// anchored at a labelled point of one task, so that a run replays from its
// records alone. The one text form every Program vocabulary shares
// (array-map .fl, allocator .bl):
//
//   at T0 finish_fault:pte_offset_map_lock#1 switch T1
//        when T0 reaches its 1st decision at that label, run T1
//   at T1 buddy_lock:held#2 fail
//        the fallible acquisition at that point fails (a trylock returns
//        busy, rqspinlock gives -ETIMEDOUT, vma_start_read falls back)
//   at T0 buddy_cache_free:push#1 nmi N1
//        NMI handler N1 (declared by the Program, pending on T0's CPU)
//        runs there, on T0, before T0 goes on; it may itself be
//        interrupted by another pending handler (a nested NMI)
//
// Occurrences count the task's decisions at the label, NMI handlers'
// included, 1-based.
#pragma once

#include <cstdint>
#include <string>

namespace fl::sched {

enum class Action : uint8_t { switch_to, fail, nmi };

struct Record {
	int task = 0;
	std::string label;
	uint32_t occurrence = 1;
	int target = 0;  // switch_to: the task to run; nmi: the handler; fail: 0
	Action action = Action::switch_to;
	bool operator==(const Record &) const = default;
};

// "at T0 LABEL#1 switch T1" (no newline).
std::string format_record(const Record &);
// Parses a record from its words after "at" ("T0", "LABEL#1", "switch",
// "T1"), checking task < max_tasks and handler < max_handlers. On bad
// input, false, a message naming what was expected, and in *bad_word (if
// given) the index of the word at fault, for a column in the error.
bool parse_record(const std::string *words, size_t n, int max_tasks, int max_handlers, Record *out,
		  std::string *error, size_t *bad_word = nullptr);

}  // namespace fl::sched
