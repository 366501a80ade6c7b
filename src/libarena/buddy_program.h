// SPDX-License-Identifier: GPL-2.0-only
// Allocator Programs: a libarena level and a sequence of allocator calls on
// one CPU (alloc, bulk, free, free_bulk, destroy+init), NMIs (an NMI doing an
// alloc or free between ops, or at the named point "lock_held" inside a
// free), and user-space stores through the arena mapping into allocated
// objects. Objects are named by role, not address ("live:2" = the third
// live object, "stale:0", "interior:1", "unaligned:0", "null"), so a Program
// means the same on every run. Text form (one op a line):
//
//   level nmi_deferred
//   alloc 100
//   bulk 64 norder=3
//   free live:1 nmi=live:0       # an NMI frees live:0 while this free holds the lock
//   nmi_free stale:0
//   nmi_alloc 32
//   free_bulk live:0,live:0,null
//   store live:2 val=7
//   reinit                       # buddy_destroy, then buddy_init
//   alloc 64 cpu=1               # any op: which CPU runs it (default 0)
//   nmi_free live:0 cpu=1 at=buddy_cache_free:push
//                                # an NMI on CPU 1 at that named point of CPU 1's
//                                # next op (after that op if it never gets there)
//   drain                        # (series) buddy_cache_drain_all
//   nmi cpu=1 at=buddy_cache_free:push   # an NMI handler block: its calls run in
//     free live:0                        # NMI context on CPU 1, in order (alloc,
//     alloc 64                           # bulk, free, free_bulk, store, and
//     nmi at=buddy_lock:held             # nested blocks: at= a point of the
//       free live:1                      # handler's next call, or none: right
//     end                                # there); at= and its absence as for
//   end                                  # nmi_free
//   join                         # (concurrent) a barrier: every CPU runs its ops above first
//   concurrent                   # each CPU's ops run as one task of the scheduler
//   points access                # a scheduling point at every arena access too
//   at T0 buddy_cache_free:claimed#1 switch T1   # a schedule record (concurrent)
//   at T0 buddy_lock:timeout#2 fail              # a lock failure (any Program)
//   at T0 buddy_cache_free:claimed#1 nmi N0      # the schedule runs handler N0 there
//
// nmi_free X and nmi_alloc S are one-call blocks, and `free X nmi=Y` a
// one-call block armed at buddy_lock:held (the runner lowers them; their
// text stays as written). Handlers are numbered N0, N1, ... per run in the
// order they are armed (a block with at=, or the nmi= of a free).
//
// Sequential Programs run their ops in order, each on its CPU; concurrent
// ones run CPU N's ops as task TN, interleaved by the schedule. A switch
// record makes a Program concurrent; fail and nmi records do not (a
// sequential Program with records runs each CPU as task TN, in program order).
// Binary form: any byte string decodes (decode_buddy_program), for fuzzers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/sched/scheduler.h"
#include "libarena/buddy.h"

namespace fl::libarena {

struct Target {
	enum Kind : u8 { live, stale, interior, unaligned, null } kind = null;
	u32 n = 0;
	bool operator==(const Target &) const = default;
};

struct BuddyOp {
	enum Kind : u8 { alloc, bulk, free, free_bulk, nmi_free, nmi_alloc, store, reinit, drain, nmi } kind = alloc;
	u64 size = 0;                 // alloc, bulk, nmi_alloc
	u64 norder = 0;               // bulk
	Target target;                // free, nmi_free, store
	std::vector<Target> targets;  // free_bulk
	bool has_nmi = false;         // free: an NMI frees nmi_target at "lock_held"
	Target nmi_target;
	u64 value = 0;                // store
	u8 cpu = 0;                   // < BUDDY_NR_CPUS
	std::string at;               // nmi_free, nmi_alloc, nmi: a point label, or "" (between ops)
	std::vector<BuddyOp> body;    // nmi: the handler's calls (no reinit, drain, nmi=, cpu=)
	bool operator==(const BuddyOp &) const = default;
};

// The calls a workload repeats, which the generator and the binary form
// write in bursts: a LIFO spills on its 9th push and refills when empty.
inline bool comes_in_bursts(const BuddyOp &op)
{
	return op.kind == BuddyOp::alloc || op.kind == BuddyOp::free || op.kind == BuddyOp::nmi_free ||
	       op.kind == BuddyOp::nmi_alloc;
}

struct BuddyProgram {
	buddy_level level = buddy_level::before;
	std::vector<BuddyOp> ops;
	bool concurrent = false;
	// (concurrent) a `join` line before op k: a barrier every CPU reaches
	// (having run its ops before it) before any runs an op after it
	// (sequentially a no-op). Ascending, 0 < k < ops.size().
	std::vector<size_t> joins;
	std::vector<sched::Record> schedule;  // concurrent: the non-default picks
	// "open upstream": the slips open upstream run as upstream has them
	// (buddy_ctx::open_upstream); generators never write it.
	bool open_upstream = false;
	// "points access": a scheduling point at every load and store of the
	// allocator (sched::Scheduler::access_points), not only at its named
	// points, locks and atomics: a read and a write with no named point
	// between (a cmpxchg written as a load and a store) get a window.
	bool access_points = false;
};

// The levels a Program may have access points at: not the nmi levels, whose
// shadow predicts the deferred list's order from each NMI free as it starts
// (a push stopped between its read and its cmpxchg, beside a drain, would
// need the prediction at the cmpxchg: not written yet).
inline bool takes_access_points(buddy_level l)
{
	return l != buddy_level::nmi_deferred && l != buddy_level::ret_overwrite;
}

std::string format_buddy_program(const BuddyProgram &);
// nullopt and a one-line message ("line 3: unknown op 'x'") on bad text.
std::optional<BuddyProgram> parse_buddy_program(const std::string &text, std::string *error);
BuddyProgram decode_buddy_program(const u8 *data, size_t size, buddy_level level);
// The named points an NMI may arrive at (at=), for generators.
extern const char *const kBuddyNmiPoints[];
extern const size_t kBuddyNmiPointCount;

// The binary form's ops (the rest of the bytes, but a concurrent input's
// schedule at its end, decode to nothing). An input's cost is linear in its
// ops (about 65 us each for a concurrent one under ASan), which is why the
// limit was 24 (syzkaller aims at 20-30 calls a program). But a spill or
// refill on two CPUs of one order at once takes a dozen allocs and frees of
// that order per CPU: with bursts at 24 ops the planted lost re-check
// spill_no_recheck was not found in 3 x 120 s, at 48 in 35-63 s, its
// violation at op 33-44. src/libarena/README.md has the measurements.
inline constexpr size_t kMaxBuddyOps = 48;
inline constexpr size_t kMaxNmiNesting = 4;  // nmi blocks inside nmi blocks (the parser's limit)

// One op's text (a block on several lines), without a trailing newline.
std::string format_buddy_op(const BuddyOp &);

}  // namespace fl::libarena
