// SPDX-License-Identifier: GPL-2.0-only
#include "base/sched/strategy.h"

#include <algorithm>

namespace fl::sched {

int RandomWalk::pick(const Decision &d)
{
	const auto &r = *d.runnable;
	return r[size_t(rng_() % r.size())];
}

void Pct::begin(int ntasks)
{
	// Priorities d .. d+n-1 in random order; change points lower a task to
	// 1 .. d-1, below every initial priority.
	prio_.resize(size_t(ntasks));
	for (int i = 0; i < ntasks; i++)
		prio_[size_t(i)] = depth_ + i;
	std::shuffle(prio_.begin(), prio_.end(), rng_);
	change_at_.clear();
	for (int i = 0; i + 1 < depth_; i++)
		change_at_.push_back(rng_() % k_);
	std::sort(change_at_.begin(), change_at_.end());
	next_change_ = 0;
}

int Pct::pick(const Decision &d)
{
	while (next_change_ < change_at_.size() && change_at_[next_change_] <= d.step) {
		// The (next_change_+1)-th change point: the running task drops to
		// priority d-1-i, below all initial ones and earlier drops.
		if (d.current_runnable)
			prio_[size_t(d.current)] = depth_ - 1 - int(next_change_);
		next_change_++;
	}
	int best = (*d.runnable)[0];
	for (int t : *d.runnable)
		if (prio_[size_t(t)] > prio_[size_t(best)])
			best = t;
	return best;
}

int Forced::pick(const Decision &d)
{
	seen_.push_back(Seen{d.step, d.current, d.current_runnable, *d.runnable, d.default_choice, d.event});
	auto it = picks_.find(d.step);
	return it == picks_.end() ? d.default_choice : it->second;
}

int Forced::answer(const Decision &d, bool nmi, const std::vector<int> &pending)
{
	seen_events_.push_back(SeenEvent{d.event, nmi, pending, d.step});
	auto it = events_.find(d.event);
	return it == events_.end() ? -1 : it->second;
}

bool Forced::fail(const Decision &d)
{
	return answer(d, false, {}) == 1;
}

// A handler the earlier run had pending at this question: after a departure
// the same question number may come where it is not (a search's branch that
// no longer applies, not a divergence of the program), so it is not run.
int Forced::nmi(const Decision &d, const std::vector<int> &pending)
{
	const int h = answer(d, true, pending);
	return std::find(pending.begin(), pending.end(), h) != pending.end() ? h : -1;
}

void ByteSchedule::begin(int)
{
	next_ = 0;
	due_ = picks_.empty() ? 0 : picks_[0].first;
}

int ByteSchedule::pick(const Decision &d)
{
	if (next_ >= picks_.size() || d.step < due_)
		return d.default_choice;
	const uint8_t target = picks_[next_].second;
	next_++;
	if (next_ < picks_.size())
		due_ = d.step + 1 + picks_[next_].first;
	// A pick departs from the default: the (target % n)th of the n other
	// runnable tasks. A pick that chose the default task would be spent
	// on nothing, and random targets did so one time in two or three.
	const size_t others = d.runnable->size() - 1;  // pick() is asked with >= 2 runnable
	size_t nth = target % others;
	for (int t : *d.runnable)
		if (t != d.default_choice && nth-- == 0)
			return t;
	return d.default_choice;  // unreachable: default_choice is runnable
}

bool ByteSchedule::fail(const Decision &d)
{
	const auto it = events_.find(d.event);
	return it != events_.end() && it->second != 0;
}

int ByteSchedule::nmi(const Decision &d, const std::vector<int> &pending)
{
	const auto it = events_.find(d.event);
	if (it == events_.end() || it->second <= 0)
		return -1;
	return pending[size_t(it->second - 1) % pending.size()];
}

void Replay::begin(int ntasks)
{
	(void)ntasks;
	label_ids_.clear();
	for (const Record &r : records_)
		label_ids_.push_back(label_named(r.label).id);
	next_ = 0;
	diverged_.clear();
}

// A record at d's point that was not taken there: passed, if d has gone
// beyond its occurrence. Not inside an NMI handler: a handler run at a
// decision comes before that decision's pick, and its own decisions at the
// same label count on past the pick's occurrence, which its record (after
// theirs) still names (the buddy-series fuzz target, 2026-12-06: a
// handler run at buddy_lock:timeout#2 took the lock, passing #3, then the
// pick at #2 switched; the text replay said record 2 was passed).
const Record *Replay::take(const Decision &d, Action action)
{
	if (next_ >= records_.size())
		return nullptr;
	const Record &r = records_[next_];
	if (r.task != d.current || label_ids_[next_] != d.label)
		return nullptr;
	if (r.occurrence == d.occurrence && r.action == action) {
		next_++;
		return &r;
	}
	// A fail record comes after its point's pick, an nmi record before it.
	const bool later_here = r.occurrence == d.occurrence && r.action == Action::fail;
	if ((d.occurrence > r.occurrence || (r.occurrence == d.occurrence && !later_here && action == Action::fail)) &&
	    !d.in_nmi && diverged_.empty())
		diverged_ = "replay diverged: record " + std::to_string(next_ + 1) + " (" + format_record(r) +
			    ") was passed without being taken";
	return nullptr;
}

int Replay::pick(const Decision &d)
{
	const Record *r = take(d, Action::switch_to);
	return r ? r->target : d.default_choice;
}

bool Replay::fail(const Decision &d)
{
	return take(d, Action::fail) != nullptr;
}

int Replay::nmi(const Decision &d, const std::vector<int> &pending)
{
	(void)pending;  // the scheduler reports a handler that is not pending
	const Record *r = take(d, Action::nmi);
	return r ? r->target : -1;
}

std::string Replay::divergence() const
{
	if (!diverged_.empty())
		return diverged_;
	if (next_ < records_.size())
		return "replay diverged: record " + std::to_string(next_ + 1) + " (" + format_record(records_[next_]) +
		       ") was never reached";
	return {};
}

}  // namespace fl::sched
