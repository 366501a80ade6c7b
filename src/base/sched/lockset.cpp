// SPDX-License-Identifier: GPL-2.0-only
#include "base/sched/lockset.h"

#include <algorithm>
#include <new>
#include <utility>

#include "base/arena.h"
#include "base/sched/label.h"

namespace fl::sched {

namespace {

bool is_write(AccessKind k) { return k == AccessKind::write || k == AccessKind::marked_write; }
bool is_marked(AccessKind k) { return k == AccessKind::marked_read || k == AccessKind::marked_write; }

const char *kind_name(AccessKind k)
{
	switch (k) {
	case AccessKind::read: return "read";
	case AccessKind::write: return "write";
	case AccessKind::marked_read: return "marked read";
	case AccessKind::marked_write: return "marked write";
	}
	return "?";
}

}  // namespace

std::pmr::memory_resource *Lockset::pool()
{
	// The heap even inside an arena scope: checker state is never in a
	// machine's arena, which the next restore drops.
	struct Heap final : std::pmr::memory_resource {
		void *do_allocate(size_t n, size_t align) override
		{
			arena::Pause heap;
			return ::operator new(n, std::align_val_t(align));
		}
		void do_deallocate(void *p, size_t n, size_t align) override
		{
			(void)n;
			::operator delete(p, std::align_val_t(align));
		}
		bool do_is_equal(const std::pmr::memory_resource &o) const noexcept override { return this == &o; }
	};
	thread_local Heap heap;
	thread_local std::pmr::unsynchronized_pool_resource nodes(&heap);
	return &nodes;
}

void Lockset::reset()
{
	arena::Pause heap;  /* checker state: never in a machine's arena */
	t_->next_run();
	forgotten_.clear();
	locksets_.clear();
	last_locks_ = 0;
	accesses_ = 0;
}

void Lockset::forget(const void *lo, const void *hi, const SharedClass &cls)
{
	arena::Pause heap;  /* checker state: never in a machine's arena */
	forgotten_.push_back({lo, hi, &cls});
}

namespace {
// A slot for (loc, cls): the address's bits mixed (Fibonacci hashing), as
// arena words are 4- or 8-aligned and close together.
size_t slot_hash(const void *loc, const void *cls, size_t mask)
{
	const uint64_t x = (uint64_t(uintptr_t(loc)) ^ uint64_t(uintptr_t(cls)) << 1) * 0x9e3779b97f4a7c15ull;
	return size_t(x >> 32) & mask;
}
}  // namespace

thread_local Lockset::Table *Lockset::spare_ = nullptr;

void Lockset::Table::next_run()
{
	used = 0;
	if (++stamp == 0) {  // wrapped: no slot may look in use
		for (Slot &s : slots)
			s.stamp = 0;
		stamp = 1;
	}
}

Lockset::Lockset()
{
	arena::Pause heap;  /* checker state: never in a machine's arena */
	t_ = std::exchange(spare_, nullptr);
	if (!t_)
		t_ = new (pool()->allocate(sizeof(Table), alignof(Table))) Table;
	t_->next_run();
}

Lockset::~Lockset()
{
	if (!spare_) {
		spare_ = t_;
		return;
	}
	arena::Pause heap;
	t_->~Table();
	pool()->deallocate(t_, sizeof(Table), alignof(Table));
}

void Lockset::grow()
{
	std::pmr::vector<Slot> old(std::max<size_t>(256, 2 * t_->slots.size()), pool());
	old.swap(t_->slots);
	const size_t mask = t_->slots.size() - 1;
	for (const Slot &s : old) {
		if (s.stamp != t_->stamp)
			continue;
		size_t i = slot_hash(s.key.loc, s.key.cls, mask);
		while (t_->slots[i].stamp == t_->stamp)
			i = (i + 1) & mask;
		t_->slots[i] = s;
	}
}

// The record of k, fresh (as first seen) if this run has none yet.
Lockset::Loc &Lockset::loc_of(const Key &k, bool *fresh)
{
	Table &t = *t_;
	if (2 * (t.used + 1) > t.slots.size())
		grow();
	const size_t mask = t.slots.size() - 1;
	for (size_t i = slot_hash(k.loc, k.cls, mask);; i = (i + 1) & mask) {
		Slot &s = t.slots[i];
		if (s.stamp == t.stamp && s.key == k) {
			*fresh = false;
			return t.locs[s.loc];
		}
		if (s.stamp != t.stamp) {
			s = {k, uint32_t(t.used), t.stamp};
			*fresh = true;
			if (t.used == t.locs.size())
				t.locs.emplace_back();
			Loc &l = t.locs[t.used++];
			l.owner = -1;
			l.shared = false;
			l.forgets_seen = 0;
			l.hist.clear();
			return l;
		}
	}
}

uint32_t Lockset::intern_locks(std::span<const LockRef> l)
{
	// A context's accesses come in runs under one set of locks.
	if (last_locks_ < locksets_.size() &&
	    std::equal(locksets_[last_locks_].begin(), locksets_[last_locks_].end(), l.begin(), l.end()))
		return last_locks_;
	for (size_t i = 0; i < locksets_.size(); i++)
		if (std::equal(locksets_[i].begin(), locksets_[i].end(), l.begin(), l.end()))
			return last_locks_ = uint32_t(i);
	locksets_.emplace_back(l.begin(), l.end());
	return last_locks_ = uint32_t(locksets_.size() - 1);
}

// Some lock both held, at least one of them exclusively.
bool Lockset::protected_pair(uint32_t a, uint32_t b) const
{
	for (const LockRef &x : locksets_[a])
		for (const LockRef &y : locksets_[b])
			if (x.lock == y.lock && (x.exclusive || y.exclusive))
				return true;
	return false;
}

std::string Lockset::report(const void *loc, const SharedClass &cls, const Rec &now, const Rec &then) const
{
	auto side = [&](const Rec &r) {
		std::string s = "T" + std::to_string(r.task) + (r.nmi ? " (NMI)" : "") + " " + kind_name(r.kind) +
				" at " + label_by_id(r.site).name +
				" (after " + label_by_id(r.after).name + ") holding {";
		std::vector<std::string> names;  // by name: lock addresses differ run to run
		for (const LockRef &l : locksets_[r.locks])
			names.push_back(std::string(l.name) + (l.exclusive ? "" : " (shared)"));
		std::sort(names.begin(), names.end());
		for (size_t i = 0; i < names.size(); i++)
			s += (i ? ", " : "") + names[i];
		return s + "}";
	};
	return std::string("data race on ") + cls.name + (cls.where ? " " + cls.where(loc) : std::string()) + ": " +
	       side(now) + "; earlier " + side(then) +
	       "; no lock held by both (rule: " + cls.rule + ")";
}

std::string Lockset::access(const void *loc, const SharedClass &cls, AccessKind kind, const AccessSite &who)
{
	arena::Pause heap;  /* checker state: never in a machine's arena */
	accesses_++;
	if (is_marked(kind))
		return {};  // never half of a report: nothing to remember
	bool fresh;
	Loc &l = loc_of(Key{loc, &cls}, &fresh);
	if (fresh)
		l.hist.reserve(4);
	else
		for (size_t f = l.forgets_seen; f < forgotten_.size(); f++)
			if (forgotten_[f].cls == &cls && !std::less<const void *>()(loc, forgotten_[f].lo) &&
			    std::less<const void *>()(loc, forgotten_[f].hi)) {
				l.owner = -1;  // as if first seen now
				l.shared = false;
				l.hist.clear();
			}
	l.forgets_seen = uint32_t(forgotten_.size());
	if (l.owner < 0)
		l.owner = who.context;
	if (!l.shared && (who.context != l.owner || cls.born_shared))
		l.shared = true;
	// The exclusive phase: an owner's unlocked access is initialisation or
	// hand-over, not a use the others must agree with.
	if (!l.shared && who.locks.empty())
		return {};
	Rec now{who.context, who.task, kind, who.nmi, intern_locks(who.locks), who.site, who.after};
	// An access seen before was compared with every other then, or they
	// with it as they came: nothing new to compare.
	if (std::find(l.hist.begin(), l.hist.end(), now) != l.hist.end())
		return {};
	for (const Rec &then : l.hist) {
		if (then.context == now.context)
			continue;
		if (!is_write(then.kind) && !is_write(now.kind))
			continue;
		if (protected_pair(now.locks, then.locks))
			continue;
		return report(loc, cls, now, then);
	}
	l.hist.push_back(now);
	return {};
}

}  // namespace fl::sched
