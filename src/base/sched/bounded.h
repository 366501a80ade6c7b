// SPDX-License-Identifier: GPL-2.0-only
// Bounded search over schedules, shared by the explorers (array map and
// allocator): every schedule that departs from the default at most
// `max_deviations` times, breadth first (fewer departures first). A
// departure is a pick other than the default at a step, or a lock failure /
// an NMI at one of the first `max_events` fail/NMI questions after the last
// event departure (Forced::seen_events); both count toward max_deviations.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/sched/strategy.h"

namespace fl::sched {

struct BoundedOptions {
	int max_deviations = 2;
	uint64_t max_events = 2;
};

enum class BoundedEnd : uint8_t { exhausted, stopped, found };

// run(strategy, name): one schedule under `strategy`; true ends the search
// (a finding the caller stops at). stop(): the budget is spent.
BoundedEnd bounded_search(const BoundedOptions &, const std::function<bool()> &stop,
			  const std::function<bool(Forced &, const std::string &name)> &run);

}  // namespace fl::sched
