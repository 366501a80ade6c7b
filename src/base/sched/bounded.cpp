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
	for (const auto &seen : f.seen()) {
		if (seen.step < n.after)
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
		if (ev.event < n.after_event || ev.event >= n.after_event + max_events_)
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
