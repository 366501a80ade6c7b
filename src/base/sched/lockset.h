// SPDX-License-Identifier: GPL-2.0-only
// A lockset race checker in the spirit of Eraser (Savage et al., SOSP 1997),
// not its code: two tasks touch one shared location, at least one writes,
// both accesses are plain, and no lock is held by both with at least one of
// them holding it exclusively. Reported whatever order the two accesses ran
// in, so a lock deleted around code with no scheduling point inside is seen
// from one run in which both accesses happen.
//
// A marked access (READ_ONCE/WRITE_ONCE, atomics, cmpxchg, a lock word's
// own) is a declared lockless one and never half of a report. That is
// stricter about plain accesses than KCSAN, whose data race needs only one
// plain access: here the rule is the locking discipline (a PTE is written
// under its PTL even though the store itself is WRITE_ONCE), and a declared
// lockless read, such as handle_pte_fault's first look, is a hint the
// code re-checks under the lock. Atomicity across marked accesses is the
// explorer's to find (access_points).
//
// Comparisons are pairwise, not Eraser's single intersection, so "written
// under A and B, read under A or under B" (the VMA's fields: mmap_lock and
// the per-VMA lock) is not a false alarm. Eraser's exclusive phase is kept
// for initialisation and hand-over: while only one task has touched a
// location, its accesses made with no lock held are forgotten (a new object
// being filled in, or an object its owner passes on through a lock-free
// list); its locked accesses are kept, and compared once a second task
// arrives.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace fl::sched {

// A kind of shared location and the rule the kernel protects it by (printed
// with every report: the seeded rules).
struct SharedClass {
	const char *name;
	const char *rule;
	// The location in words a report may print, when its address is the
	// same run to run (an arena address); nullptr: unnamed.
	std::string (*where)(const void *loc) = nullptr;
	// Reachable by every task from the start (a slot of a table all tasks
	// share): no access to it is initialisation, so it skips the exclusive
	// phase below and a first task's unlocked accesses are kept.
	bool born_shared = false;
};

enum class AccessKind : uint8_t { read, write, marked_read, marked_write };

// One lock a task holds when it accesses: which instance, whether held
// exclusively (mutex, spinlock, rwsem for write), and its class for reports.
struct LockRef {
	const void *lock;
	bool exclusive;
	const char *name;
	bool operator==(const LockRef &o) const { return lock == o.lock && exclusive == o.exclusive; }
};

// Who accessed, holding what, where.
struct AccessSite {
	int context;  // a task, or an NMI handler run on it: accesses of one context are never compared
	int task;     // for the report
	bool nmi;
	std::span<const LockRef> locks;  // sorted by lock (the scheduler's buffer: no copy per access)
	uint32_t site;               // Label::id of the access ("set_pte_at:pte")
	uint32_t after;              // Label::id of the task's last scheduling point
};

class Lockset {
public:
	Lockset();
	~Lockset();
	Lockset(const Lockset &) = delete;
	Lockset &operator=(const Lockset &) = delete;
	// Records the access; a report (empty when fine) when it races an
	// earlier access of another task to the same location.
	std::string access(const void *loc, const SharedClass &, AccessKind, const AccessSite &);
	void reset();
	// [lo, hi) of class `cls` changed owner (an object allocated, handed to
	// its user): forget what was seen there, as Eraser does on reallocation.
	void forget(const void *lo, const void *hi, const SharedClass &cls);
	uint64_t accesses() const { return accesses_; }

private:
	struct Rec {
		int context, task;
		AccessKind kind;
		bool nmi;
		uint32_t locks;  // index into locksets_
		uint32_t site, after;
		bool operator==(const Rec &) const = default;
	};
	// The thread's pool the containers below take their nodes from: a
	// scheduler (and its checker) is built for every run, and its nodes
	// come back to the pool at its end instead of going through malloc
	// again, which under ASan records a stack per node (a sixth of a
	// concurrent allocator run).
	static std::pmr::memory_resource *pool();
	struct Loc {
		int owner = -1;
		bool shared = false;
		uint32_t forgets_seen = 0;  // forgotten_ entries applied to it
		std::pmr::vector<Rec> hist{pool()};  // distinct accesses, in order
	};
	struct Key {
		const void *loc;
		const SharedClass *cls;
		bool operator==(const Key &) const = default;
	};

	uint32_t intern_locks(std::span<const LockRef>);
	bool protected_pair(uint32_t a, uint32_t b) const;
	std::string report(const void *loc, const SharedClass &, const Rec &now, const Rec &then) const;

	// The locations seen this run: an open-addressed table (linear
	// probing, a power of two of slots, at most half full) of indexes into
	// locs. A slot is in use when stamped with this run's stamp, so a
	// reset clears no slot; the Locs (their histories' buffers) serve the
	// run's next locations. A scheduler and its checker are built for
	// each run, so the table passes to the thread's next Lockset. An
	// unordered_map's try_emplace (hashing, a node and a history's
	// allocation per location) was two fifths of the checker's time.
	struct Slot {
		Key key;
		uint32_t loc;
		uint32_t stamp = 0;
	};
	struct Table {
		std::pmr::vector<Slot> slots{pool()};
		std::pmr::vector<Loc> locs{pool()};
		size_t used = 0;  // of locs, the ones this run uses
		uint32_t stamp = 0;
		void next_run();
	};
	Loc &loc_of(const Key &k, bool *fresh);
	void grow();
	Table *t_;  // in pool() memory, as the thread's spare is
	// The table the thread's last Lockset left, never destroyed: the
	// pool releases its memory with the thread.
	static thread_local Table *spare_;

	// The ranges forget() was asked for, in order. A location is forgotten
	// when next accessed (its entries since it was last seen are applied
	// then): an allocator run hands objects over after every alloc, and
	// erasing at once needed the locations by class in address order, a
	// tree insert per location first seen (a sixth of the checker's time).
	struct Forgotten {
		const void *lo, *hi;
		const SharedClass *cls;
	};
	std::pmr::vector<Forgotten> forgotten_{pool()};
	std::pmr::vector<std::pmr::vector<LockRef>> locksets_{pool()};
	uint32_t last_locks_ = 0;  // the last lockset interned
	uint64_t accesses_ = 0;
};

// A scope on this thread, counted: ScopedFlag<Tag> while alive, active().
// The scheduler carries the count with each task (a TLS slot) and starts an
// NMI handler at zero: a scope a task leaves open at a scheduling point (a
// lock word's spin_lock) belongs to that task, not to whatever runs next.
template <class Tag> class ScopedFlag {
public:
	ScopedFlag() { depth_++; }
	~ScopedFlag() { depth_--; }
	ScopedFlag(const ScopedFlag &) = delete;
	ScopedFlag &operator=(const ScopedFlag &) = delete;
	static bool active() { return depth_ > 0; }
	static int depth() { return depth_; }
	static void set_depth(int d) { depth_ = d; }

private:
	static inline thread_local int depth_ = 0;
};
// Accesses inside are marked: the lock words' own accesses, cmpxchg,
// READ_ONCE/WRITE_ONCE written as plain loads and stores.
using MarkedAccess = ScopedFlag<struct MarkedTag>;
// Accesses inside are not the code under test's (the checkers' own reads,
// kcsan_disable_current()): not recorded.
using IgnoreAccesses = ScopedFlag<struct IgnoreTag>;
// Accesses inside have no scheduling point of their own (access_points):
// the later accesses of one atomic instruction written as several (a
// cmpxchg's store after its load, a lock word's store once it is taken),
// which no other context comes between. Never open across a point.
using NoAccessPoint = ScopedFlag<struct NoAccessPointTag>;

}  // namespace fl::sched
