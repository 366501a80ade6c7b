// SPDX-License-Identifier: GPL-2.0-only
#include "base/sched/bounded.h"

#include <deque>
#include <map>
#include <set>

namespace fl::sched {

BoundedEnd bounded_search(const BoundedOptions &o, const std::function<bool()> &stop,
			  const std::function<bool(Forced &, const std::string &name)> &run)
{
	struct Node {
		std::map<uint64_t, int> picks, events;
		uint64_t after;        // pick departures only at steps >= after
		uint64_t after_event;  // event departures only at questions >= after_event
	};
	std::deque<Node> queue{Node{{}, {}, 0, 0}};
	// A pick and an event departure are reached in either order: run each
	// set of departures once.
	std::set<std::pair<std::map<uint64_t, int>, std::map<uint64_t, int>>> ran;
	while (!queue.empty()) {
		if (stop())
			return BoundedEnd::stopped;
		Node n = std::move(queue.front());
		queue.pop_front();
		if (!ran.emplace(n.picks, n.events).second)
			continue;
		Forced f(n.picks, n.events);
		const size_t departures = n.picks.size() + n.events.size();
		if (run(f, "bounded(" + std::to_string(departures) + " departures)"))
			return BoundedEnd::found;
		if (int(departures) >= o.max_deviations)
			continue;
		for (const auto &seen : f.seen()) {
			if (seen.step < n.after)
				continue;
			for (int alt : seen.runnable) {
				if (alt == seen.default_choice)
					continue;
				Node c{n.picks, n.events, seen.step + 1, n.after_event};
				c.picks[seen.step] = alt;
				queue.push_back(std::move(c));
			}
		}
		// At most max_events questions per schedule branch: a lock
		// failure or each pending NMI.
		for (const auto &ev : f.seen_events()) {
			if (ev.event < n.after_event || ev.event >= n.after_event + o.max_events)
				continue;
			std::vector<int> answers = ev.nmi ? ev.pending : std::vector<int>{1};
			for (int a : answers) {
				Node c{n.picks, n.events, n.after, ev.event + 1};
				c.events[ev.event] = a;
				queue.push_back(std::move(c));
			}
		}
	}
	return BoundedEnd::exhausted;
}

}  // namespace fl::sched
