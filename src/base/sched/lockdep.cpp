// SPDX-License-Identifier: GPL-2.0-only
#include "base/sched/lockdep.h"


namespace fl::sched {

const LockClass kMmapLock{"mmap_lock", LockKind::rwsem};
const LockClass kVmLock{"vm_lock", LockKind::rwsem};
const LockClass kPtl{"ptl", LockKind::spinlock};
const LockClass kFreezeMutex{"freeze_mutex", LockKind::mutex};

const std::vector<SeededEdge> kKernelSeededEdges = {
	// syzbot+4dc041c686b7c816a71e (Jan 2025): "existing dependency chain"
	// &vma->vm_lock->lock --> ... --> &mm->mmap_lock, closed through DRM,
	// bcachefs and fault paths the port does not model.
	{"vm_lock", "mmap_lock", "kernel chain vm_lock -> ... -> mmap_lock (syzbot+4dc041c686b7c816a71e)"},
};

Lockdep::Lockdep()
{
	for (const SeededEdge &e : kKernelSeededEdges)
		seed(e);
}

// "mmap_lock", or "mmap_lock/1" for subclass 1 (lockdep's own notation).
std::string Lockdep::class_name(const LockClass &cls, uint8_t subclass)
{
	return subclass ? std::string(cls.name) + "/" + std::to_string(subclass) : std::string(cls.name);
}

int Lockdep::class_id(const std::string &name)
{
	for (size_t i = 0; i < classes_.size(); i++)
		if (classes_[i] == name)
			return int(i);
	classes_.emplace_back(name);
	out_.emplace_back();
	return int(classes_.size() - 1);
}

int Lockdep::class_id(const LockClass &cls, uint8_t subclass)
{
	for (const ClassKey &k : ids_)
		if (k.cls == &cls && k.subclass == subclass)
			return k.id;
	ids_.push_back({&cls, subclass, class_id(class_name(cls, subclass))});
	return ids_.back().id;
}

void Lockdep::seed(const SeededEdge &e)
{
	int a = class_id(e.from), b = class_id(e.to);
	if (find_edge(a, b))
		return;
	out_[size_t(a)].push_back(int(edges_.size()));
	edges_.push_back({a, b, std::string("seeded: ") + e.why});
}

const Lockdep::Edge *Lockdep::find_edge(int from, int to) const
{
	for (int i : out_[size_t(from)])
		if (edges_[size_t(i)].to == to)
			return &edges_[size_t(i)];
	return nullptr;
}

std::vector<const Lockdep::Edge *> Lockdep::path(int from, int to) const
{
	// Breadth first, so the report shows the shortest chain.
	std::vector<int> via(classes_.size(), -1);  // edge that reached a class
	std::vector<bool> seen(classes_.size());
	std::vector<int> queue{from};
	seen[size_t(from)] = true;
	for (size_t q = 0; q < queue.size(); q++) {
		int c = queue[q];
		if (c == to)
			break;
		for (int ei : out_[size_t(c)]) {
			int n = edges_[size_t(ei)].to;
			if (!seen[size_t(n)]) {
				seen[size_t(n)] = true;
				via[size_t(n)] = ei;
				queue.push_back(n);
			}
		}
	}
	std::vector<const Edge *> out;
	if (!seen[size_t(to)] || from == to)
		return out;
	for (int c = to; c != from; c = edges_[size_t(via[size_t(c)])].from)
		out.insert(out.begin(), &edges_[size_t(via[size_t(c)])]);
	return out;
}

std::string Lockdep::cycle_report(const Edge &added, const std::vector<const Edge *> &back) const
{
	std::string s = "possible circular locking dependency: " + classes_[size_t(added.from)] + " -> " +
			classes_[size_t(added.to)] + " closes ";
	s += classes_[size_t(added.from)];
	for (const Edge *e : back)
		s += " <- " + classes_[size_t(e->from)];
	s += "\n  new dependency: " + added.witness;
	for (const Edge *e : back)
		s += "\n  existing: " + classes_[size_t(e->from)] + " -> " + classes_[size_t(e->to)] + ": " + e->witness;
	s += "\n  possible unsafe locking scenario: CPU0 holds " + classes_[size_t(added.from)] + " and takes " +
	     classes_[size_t(added.to)] + "; CPU1 holds " + classes_[size_t(added.to)] + " and (through the chain) takes " +
	     classes_[size_t(added.from)];
	return s;
}

std::string Lockdep::might_sleep(const std::string &label, ExecContext ctx, int rcu_depth, int atomic_depth) const
{
	if (ctx == ExecContext::nmi)
		return "sleeping function called from NMI context at " + label;
	if (atomic_depth > 0)
		return "sleeping function called from invalid context (spinlock held) at " + label;
	if (rcu_depth > 0)
		return "sleeping function called inside an RCU read-side critical section at " + label;
	return {};
}

std::string Lockdep::acquire(int task, const LockClass &cls, uint8_t subclass, const std::vector<HeldLock> &held,
			     const std::string &label, bool trylock, const LockClass *nest, ExecContext ctx,
			     int rcu_depth, int atomic_depth)
{
	if (ctx == ExecContext::nmi && !cls.nmi_safe)
		return std::string("NMI context takes ") + cls.name + ", which is not NMI-safe, at " + label;
	if (cls.sleeps() && !trylock && !might_sleep(label, ctx, rcu_depth, atomic_depth).empty())
		return might_sleep(label + " (" + cls.name + ")", ctx, rcu_depth, atomic_depth);
	if (cls.kind == LockKind::rcu || trylock)
		return {};  // RCU is a context, not an order; a trylock cannot wait
	// check_deadlock(): the same class (and subclass) again, in any mode
	// (rwsem reads are not recursive: a writer queued between the two
	// read acquisitions deadlocks them).
	for (const HeldLock &h : held)
		if (h.cls == &cls && h.subclass == subclass)
			return "possible recursive locking detected: T" + std::to_string(task) + " already holds " +
			       class_name(cls, subclass) + " (taken at " + *h.at + ") and takes it again at " + label;
	int to = class_id(cls, subclass);
	for (const HeldLock &h : held) {
		if (h.cls->kind == LockKind::rcu || (nest && h.cls == nest))
			continue;
		int from = class_id(*h.cls, h.subclass);
		if (from == to || find_edge(from, to))
			continue;
		Edge e{from, to,
		       "T" + std::to_string(task) + " held " + classes_[size_t(from)] + " (" + *h.at + "), took " +
			       classes_[size_t(to)] + " at " + label};
		out_[size_t(from)].push_back(int(edges_.size()));
		edges_.push_back(e);
		std::vector<const Edge *> back = path(to, from);  // cannot use the new edge: it leaves `from`
		if (!back.empty())
			return cycle_report(edges_.back(), back);
	}
	return {};
}

}  // namespace fl::sched
