// SPDX-License-Identifier: GPL-2.0-only
#include "base/sched/bounded.h"

#include <vector>

namespace fl::sched {

std::optional<BoundedSearch::Node> BoundedSearch::next()
{
	while (!queue_.empty()) {
		Node n = std::move(queue_.front());
		queue_.pop_front();
		if (ran_.emplace(n.picks, n.events).second)
			return n;
	}
	return std::nullopt;
}

void BoundedSearch::expand(const Node &n, const Forced &f)
{
	if (int(n.departures()) >= max_deviations_)
		return;
	// A new departure comes after every departure of n in time (after its
	// last forced pick and its last forced answer), so that n's own run
	// replays up to it: a pick forced at step 2 is not run under an answer
	// changed before step 2, where step 2 may be another task's (the
	// nmi_deferred swarm's 30-minute run diverged so: "at T2 thread:exit#1
	// the schedule switches to T2, which is not runnable").
	for (const auto &seen : f.seen()) {
		if (seen.step < n.after || seen.events_before < n.after_event)
			continue;
		for (int alt : seen.runnable) {
			if (alt == seen.default_choice)
				continue;
			Node c{n.picks, n.events, seen.step + 1, n.after_event};
			c.picks[seen.step] = alt;
			queue_.push_back(std::move(c));
		}
	}
	// At most max_events questions per schedule branch: a lock failure or
	// each pending NMI.
	for (const auto &ev : f.seen_events()) {
		if (ev.event < n.after_event || ev.event >= n.after_event + max_events_ || ev.step < n.after)
			continue;
		std::vector<int> answers = ev.nmi ? ev.pending : std::vector<int>{1};
		for (int a : answers) {
			Node c{n.picks, n.events, n.after, ev.event + 1};
			c.events[ev.event] = a;
			queue_.push_back(std::move(c));
		}
	}
}

}  // namespace fl::sched
