// SPDX-License-Identifier: GPL-2.0-only
// Linearizability of one concurrent allocator run: each op's result (alloc:
// an object or NULL; bulk, free, free_bulk: the return value or error code;
// a user store: its signal; an NMI's result inside the op it interrupted)
// must be what SOME sequential run of the same Program gives, with the ops
// in an order that keeps each CPU's own order and real time (an op that
// ended before another began comes first: BuddyVerdict::spans). An NMI belongs to its CPU: it
// stays between the same two ops of that CPU, or inside the same op at the
// same named point, which is what an NMI can do (it interrupts the CPU it
// arrives on and runs to completion there); one that came before anything
// its op did is tried right before that op too (BuddyVerdict::Placed::ahead).
// Alloc addresses are not compared: which object an alloc hands out depends
// on the order, and libarena promises only success or failure and that no
// live object is handed out twice (I1, checked on every run). The candidate runs are
// sequential runs of the allocator (run_buddy_program): the sequential
// allocator is the specification (docs/interleavings.md, "Linearizability").
#pragma once

#include "libarena/buddy_runner.h"

namespace fl::libarena {

// On a concurrent run that ended ok: v.ok false and v.what "not_linearizable: ..."
// when no order reproduces it; v.linearize_note when there were too many orders.
void check_buddy_linearizable(const BuddyProgram &, BuddyVerdict &v);

// The check's shortcuts, on unless a test turns them off: the orders the
// elements began and ended in are replayed before the search, a run out of
// real-time order (BuddyVerdict::real_time) is searched in it first, and a
// candidate's run stops at its first settled difference. Off, the check is
// the plain search; the verdicts are the same either way
// (BuddyLinearize.ShortcutsGiveTheVerdictsOfThePlainSearch), but for a run
// whose search gave up after its cap of orders that one of those orders
// explains: linearizable, where the plain search says "not checked".
void set_buddy_linearize_shortcuts(bool on);

}  // namespace fl::libarena
