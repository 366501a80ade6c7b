// SPDX-License-Identifier: GPL-2.0-only
// Bounded search over schedules (the explorers of both systems): every
// schedule that departs from the default at most max_deviations times,
// fewer departures first (breadth first). A departure is a pick other than
// the default at a step, or an answer to a fail / NMI question
// (Forced::seen_events), at most max_events questions past the last event
// departure per branch; each later in the run than the departures before it,
// so every schedule's forced prefix replays as it ran. Exhaustive for small Programs: exhausted() says the
// whole bound ran, which is when an explorer can stop re-walking a Program.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "base/sched/strategy.h"

namespace fl::sched {

class BoundedSearch {
public:
	struct Node {
		std::map<uint64_t, int> picks, events;
		uint64_t after = 0;        // pick departures only at steps >= after
		uint64_t after_event = 0;  // event departures only at questions >= after_event
		size_t departures() const { return picks.size() + events.size(); }
	};
	BoundedSearch(int max_deviations, uint64_t max_events) : max_deviations_(max_deviations), max_events_(max_events)
	{
		queue_.push_back(Node{});
	}
	// The next schedule to run (its Forced departures), or nullopt when
	// every schedule within the bound ran.
	std::optional<Node> next();
	// After running `n` under Forced f: queue its children.
	void expand(const Node &n, const Forced &f);
	bool exhausted() const { return queue_.empty(); }

private:
	int max_deviations_;
	uint64_t max_events_;
	std::deque<Node> queue_;
	// A pick and an event departure are reached in either order: run each
	// set of departures once.
	std::set<std::pair<std::map<uint64_t, int>, std::map<uint64_t, int>>> ran_;
};

// An explorer's bound (BoundedSearch's arguments).
struct BoundedOptions {
	int max_deviations = 2;
	uint64_t max_events = 2;
};

}  // namespace fl::sched
