// SPDX-License-Identifier: GPL-2.0-only
// The search behind the linearizability checks (Wing & Gong's, over a
// deterministic sequential specification): every order of a concurrent
// group's ops that keeps each thread's own order, tried one by one by a
// caller-supplied replay until one reproduces the observed results. A
// replay reports the first position whose result differs; since the
// specification is deterministic, every order with that prefix gives the
// same result there, so the whole subtree is skipped (prefix pruning).
// Orders are tried closest to a hint first (the order the ops completed in),
// which is a linearization of most correct runs: one replay; then those
// that leave the hint at one choice, at two, ... (limited discrepancy
// search), never below a prefix a replay refuted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace fl {

struct OrderSearch {
	// Each thread's ops in its own order; op ids are 0..n-1 over all threads.
	std::vector<std::vector<size_t>> threads;
	// rank[id]: where op id completed in the observed run (children are
	// tried in rank order, so the first leaf is the completion order).
	// Empty: the spans' ends, if any.
	std::vector<size_t> rank;
	// group[id]: the concurrent group op id belongs to (a join between two
	// groups: every op of a group comes before any op of the next). Empty:
	// one group. Along each thread the groups do not decrease.
	std::vector<size_t> group;
	// spans[id]: when op id began and ended on a clock all threads share.
	// An op that ended before another began comes first (Herlihy and Wing's
	// real-time order, which makes the check linearizability rather than
	// sequential consistency, and prunes most orders of a run whose ops
	// seldom overlap), and the completion order when there is no rank.
	// Empty: no such order.
	std::vector<std::pair<uint64_t, uint64_t>> spans;
	// Orders replayed at most (the pruned ones are not counted): undecided
	// after that many is too_many, not checked, never a pass.
	uint64_t cap = 5000;
};

struct OrderResult {
	enum Kind : uint8_t { linearizable, not_linearizable, too_many } kind = linearizable;
	uint64_t orders = 0;   // the multinomial count, before real-time order (saturated at 2^62)
	uint64_t replays = 0;  // leaves replayed (the rest were pruned)
	// linearizable: the order that matched; otherwise the closest one tried
	// (the latest first difference) and that position (n: only ops after
	// the group differed).
	std::vector<size_t> order;
	size_t mismatch = 0;
};

// replay(order) returns the position in `order` of the first op whose
// result differs from the observed one, order.size() when only the ops
// after the group differ, or kMatch.
inline constexpr size_t kMatch = SIZE_MAX;
using OrderReplay = std::function<size_t(const std::vector<size_t> &order)>;

// n! / (n_1! ... n_k!), saturated at `cap + 1`.
uint64_t count_orders(const std::vector<std::vector<size_t>> &threads, uint64_t cap);
// The same for the orders a search tries: the product over its groups.
uint64_t count_search_orders(const OrderSearch &, uint64_t cap);

OrderResult search_orders(const OrderSearch &, const OrderReplay &);

// The buddy runner's linearizability check runs after every interleaved run
// unless FL_LINEARIZE=0 is in the environment (to measure what it costs);
// the array map's is switched per run (interleave::ScheduleChecks::linearize).
bool linearize_enabled();

}  // namespace fl
