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
//   concurrent                   # each CPU's ops run as one task of the scheduler
//   at T0 buddy_cache_free:claimed#1 switch T1   # a schedule record (concurrent)
//
// Sequential Programs run their ops in order, each on its CPU; concurrent
// ones run CPU N's ops as task TN, interleaved by the schedule.
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
	enum Kind : u8 { alloc, bulk, free, free_bulk, nmi_free, nmi_alloc, store, reinit, drain } kind = alloc;
	u64 size = 0;                 // alloc, bulk, nmi_alloc
	u64 norder = 0;               // bulk
	Target target;                // free, nmi_free, store
	std::vector<Target> targets;  // free_bulk
	bool has_nmi = false;         // free: an NMI frees nmi_target at "lock_held"
	Target nmi_target;
	u64 value = 0;                // store
	u8 cpu = 0;                   // < BUDDY_NR_CPUS
	std::string at;               // nmi_free, nmi_alloc: a point label, or "" (between ops)
	bool operator==(const BuddyOp &) const = default;
};

struct BuddyProgram {
	buddy_level level = buddy_level::before;
	std::vector<BuddyOp> ops;
	bool concurrent = false;
	std::vector<sched::Record> schedule;  // concurrent: the non-default picks
};

std::string format_buddy_program(const BuddyProgram &);
// nullopt and a one-line message ("line 3: unknown op 'x'") on bad text.
std::optional<BuddyProgram> parse_buddy_program(const std::string &text, std::string *error);
BuddyProgram decode_buddy_program(const u8 *data, size_t size, buddy_level level);
// The named points an NMI may arrive at (at=), for generators.
extern const char *const kBuddyNmiPoints[];
extern const size_t kBuddyNmiPointCount;

inline constexpr size_t kMaxBuddyOps = 48;

}  // namespace fl::libarena
