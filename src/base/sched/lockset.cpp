// SPDX-License-Identifier: GPL-2.0-only
#include "base/sched/lockset.h"

#include <algorithm>
#include <new>

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
	locs_.clear();
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
	const auto [at, fresh] = locs_.try_emplace(Key{loc, &cls});
	Loc &l = at->second;
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
