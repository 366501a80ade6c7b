// SPDX-License-Identifier: GPL-2.0-only
// A lock-order checker in lockdep's spirit (not its code): lock classes, a
// dependency graph with one witness per edge, and a cycle search on every
// new edge, so an inversion is reported from a run that did not deadlock.
// Also: recursion on a class already held (a subclass, as the kernel's
// *_nested() annotations give, is a class of its own), sleeping acquires
// under a spinlock or RCU, sleeping or non-NMI-safe locks in NMI context,
// might_fault() as an mmap_lock read acquisition, trylocks (no recursion
// check, no incoming edge, outgoing edges as usual), nest locks (an acquire
// made under its nest lock adds no edge from it), and seeded external edges
// for dependencies the port does not model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fl::sched {

enum class LockKind : uint8_t { mutex, rwsem, spinlock, rcu };

struct LockClass {
	const char *name;
	LockKind kind;
	bool nmi_safe = false;  // raw/lock-free: may be taken in NMI context
	bool sleeps() const { return kind == LockKind::mutex || kind == LockKind::rwsem; }
};

// The port's lock classes (one per kernel lock the shims model).
extern const LockClass kMmapLock, kVmLock, kPtl, kFreezeMutex;

// A dependency the port does not model, with where it comes from.
struct SeededEdge {
	const char *from, *to, *why;
};
// The kernel's edges the port cannot produce (kernel-lock-edges): today the
// VMA lock -> mmap_lock chain of syzbot+4dc041c686b7c816a71e.
extern const std::vector<SeededEdge> kKernelSeededEdges;

enum class ExecContext : uint8_t { task, irq, nmi };

// One lock a task holds: its class, the SINGLE_DEPTH_NESTING-style subclass
// it was taken with, and where.
struct HeldLock {
	const LockClass *cls;
	uint8_t subclass;
	const std::string *at;  // the interned Label's name (labels live as long as the process)
	int nmi_depth = 0;  // taken by an NMI handler run on the task (Scheduler::nmi_enter)
};

class Lockdep {
public:
	Lockdep();
	// A task acquires `cls` (with `subclass`) at `label` while holding
	// `held` (outermost first). Returns a report (empty when fine).
	// `nest`: the class whose holding makes this acquire safe (no edge from it).
	std::string acquire(int task, const LockClass &cls, uint8_t subclass, const std::vector<HeldLock> &held,
			    const std::string &label, bool trylock, const LockClass *nest, ExecContext ctx,
			    int rcu_depth, int atomic_depth);
	// might_sleep() outside a lock acquire (GFP_KERNEL, copy_from_user...).
	std::string might_sleep(const std::string &label, ExecContext ctx, int rcu_depth, int atomic_depth) const;
	void seed(const SeededEdge &);
	size_t edges() const { return edges_.size(); }

private:
	struct Edge {
		int from, to;
		std::string witness;  // "held A at L1, took B at L2 (T0)"
	};
	static std::string class_name(const LockClass &, uint8_t subclass);
	int class_id(const std::string &name);
	int class_id(const LockClass &, uint8_t subclass);  // cached: no name built per acquire
	const Edge *find_edge(int from, int to) const;
	// The edges of a path from -> ... -> to, or empty.
	std::vector<const Edge *> path(int from, int to) const;
	std::string cycle_report(const Edge &added, const std::vector<const Edge *> &back) const;

	std::vector<std::string> classes_;
	struct ClassKey {
		const LockClass *cls;
		uint8_t subclass;
		int id;
	};
	std::vector<ClassKey> ids_;
	std::vector<Edge> edges_;
	std::vector<std::vector<int>> out_;  // class -> edge indices
};

}  // namespace fl::sched
