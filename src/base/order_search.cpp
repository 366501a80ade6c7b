// SPDX-License-Identifier: GPL-2.0-only
#include "base/order_search.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

namespace fl {

uint64_t count_orders(const std::vector<std::vector<size_t>> &threads, uint64_t cap)
{
	// The product of binomials C(placed + k, k), one thread at a time; every
	// partial product is an integer, and the saturation keeps it in range.
	const uint64_t limit = cap + 1;
	uint64_t total = 1, placed = 0, m;
	for (const std::vector<size_t> &t : threads) {
		uint64_t c = 1;  // C(placed + k, k), built up k = 1..|t|
		for (uint64_t k = 1; k <= t.size() && c < limit; k++) {
			// c * (placed + k) / k, exactly and without a wider type (none
			// on 32-bit targets): k / gcd(c, k) divides placed + k.
			const uint64_t g = std::gcd(c, k);
			c = __builtin_mul_overflow(c / g, (placed + k) / (k / g), &m) || m > limit ? limit : m;
		}
		placed += t.size();
		total = __builtin_mul_overflow(total, c, &m) || m > limit ? limit : m;
	}
	return total;
}

uint64_t count_search_orders(const OrderSearch &s, uint64_t cap)
{
	if (s.group.empty())
		return count_orders(s.threads, cap);
	size_t groups = 0;
	for (size_t g : s.group)
		groups = std::max(groups, g + 1);
	const uint64_t limit = cap + 1;
	uint64_t total = 1, m;
	for (size_t g = 0; g < groups && total < limit; g++) {
		std::vector<std::vector<size_t>> in(s.threads.size());
		for (size_t t = 0; t < s.threads.size(); t++)
			for (size_t id : s.threads[t])
				if (s.group[id] == g)
					in[t].push_back(id);
		total = __builtin_mul_overflow(total, count_orders(in, cap), &m) || m > limit ? limit : m;
	}
	return total;
}

namespace {

constexpr uint64_t kCountLimit = uint64_t(1) << 62;

class Search {
public:
	Search(const OrderSearch &s, const OrderReplay &replay) : s_(s), replay_(replay), next_(s.threads.size())
	{
		for (const std::vector<size_t> &t : s.threads)
			n_ += t.size();
	}

	// Limited discrepancy search (Harvey & Ginsberg): the orders that leave
	// the hint's choice at most d times, for d = 0, 1, 2, ..., until an
	// order matches or a pass cut nothing. Plain depth-first search first
	// changes the deepest choices, so when the hint went wrong early (an
	// op whose effect shows only many positions later, as an alloc that
	// took a new chunk shows in a later NMI's NULL) it spends the whole
	// cap below the wrong choice. Prefixes known dead (a replay's first
	// difference, a subtree searched in full) are not searched again.
	OrderResult run()
	{
		r_.orders = count_search_orders(s_, kCountLimit);
		for (size_t budget = 0;; budget++) {
			const uint64_t cuts = cuts_;
			if (dfs(0, budget)) {
				r_.kind = OrderResult::linearizable;
				return r_;
			}
			if (out_ || cuts_ == cuts) {
				r_.kind = out_ ? OrderResult::too_many : OrderResult::not_linearizable;
				return r_;
			}
		}
	}

private:
	uint64_t rank(size_t id) const
	{
		return id < s_.rank.size() ? s_.rank[id] : id < s_.spans.size() ? s_.spans[id].second : id;
	}
	size_t group(size_t id) const { return id < s_.group.size() ? s_.group[id] : 0; }

	// True when a full order matched. Otherwise fail_ is the depth whose
	// choice is dead: a caller deeper than that unwinds. `budget`: how many
	// more times the order may leave the hint (a child other than the first).
	bool dfs(size_t depth, size_t budget)
	{
		if (prefixes_[path_.back()].dead) {
			fail_ = depth ? depth - 1 : 0;
			return false;
		}
		if (depth == n_) {
			if (r_.replays >= s_.cap) {
				out_ = true;  // undecided: never a pass
				return false;
			}
			r_.replays++;
			const size_t bad = replay_(order_);
			if (bad == kMatch) {
				r_.order = order_;
				r_.mismatch = n_;
				return true;
			}
			if (r_.order.empty() || bad > r_.mismatch) {
				r_.order = order_;
				r_.mismatch = bad;
			}
			fail_ = std::min(bad, n_ - 1);
			prefixes_[path_[fail_ + 1]].dead = true;  // order_[0..fail_]
			return false;
		}
		// The threads with ops left in the earliest group that has any, the
		// one whose next op completed first first.
		size_t now = SIZE_MAX;
		for (size_t t = 0; t < s_.threads.size(); t++)
			if (next_[t] < s_.threads[t].size())
				now = std::min(now, group(s_.threads[t][next_[t]]));
		// Real-time order: no op may come before one that ended before it began.
		uint64_t first_end = UINT64_MAX;
		for (size_t t = 0; t < s_.threads.size() && !s_.spans.empty(); t++)
			for (size_t k = next_[t]; k < s_.threads[t].size(); k++)
				first_end = std::min(first_end, s_.spans[s_.threads[t][k]].second);
		std::vector<size_t> ready;
		for (size_t t = 0; t < s_.threads.size(); t++)
			if (next_[t] < s_.threads[t].size() && group(s_.threads[t][next_[t]]) == now &&
			    (s_.spans.empty() || s_.spans[s_.threads[t][next_[t]]].first < first_end))
				ready.push_back(t);
		std::sort(ready.begin(), ready.end(), [&](size_t a, size_t b) {
			return rank(s_.threads[a][next_[a]]) < rank(s_.threads[b][next_[b]]);
		});
		const uint64_t cuts = cuts_;
		for (size_t i = 0; i < ready.size(); i++) {
			if (i > 0 && budget == 0) {
				cuts_++;  // the next pass tries the rest
				break;
			}
			const size_t t = ready[i];
			order_.push_back(s_.threads[t][next_[t]++]);
			path_.push_back(child(path_.back(), order_.back()));
			const bool found = dfs(depth + 1, budget - (i > 0));
			path_.pop_back();
			next_[t]--;
			order_.pop_back();
			if (found)
				return true;
			if (out_ || fail_ < depth)
				return false;  // an earlier choice is already wrong
		}
		if (cuts_ == cuts)
			prefixes_[path_.back()].dead = true;  // searched in full: no pass need come back
		fail_ = depth ? depth - 1 : 0;  // every choice here failed: the parent's is dead
		return false;
	}

	const OrderSearch &s_;
	const OrderReplay &replay_;
	size_t n_ = 0;
	std::vector<size_t> next_;  // per thread: its next op's position
	std::vector<size_t> order_;
	size_t fail_ = 0;
	bool out_ = false;  // the cap on replays ran out
	uint64_t cuts_ = 0;  // children left for a later pass (its budget ran out)
	// The prefixes searched, as a trie, each marked dead when no order
	// matches from it (a replay's first difference, a subtree searched in
	// full); path_[k]: the node of order_'s first k ops. The search asks at
	// every node it enters: a set of whole prefixes cost a comparison of
	// vectors per step of its lookup, 7 % of a grown buddy-series corpus's
	// linearizability checks.
	struct Prefix {
		size_t id = 0;                    // its last op
		uint32_t first = 0, next = 0;     // first child, next sibling (0: none; the root is no child)
		bool dead = false;
	};
	std::vector<Prefix> prefixes_ = std::vector<Prefix>(1);
	std::vector<uint32_t> path_ = std::vector<uint32_t>(1, 0);
	uint32_t child(uint32_t node, size_t id)
	{
		uint32_t c = prefixes_[node].first;
		for (; c && prefixes_[c].id != id; c = prefixes_[c].next)
			;
		if (c)
			return c;
		Prefix p;
		p.id = id;
		p.next = prefixes_[node].first;
		prefixes_.push_back(p);
		return prefixes_[node].first = uint32_t(prefixes_.size() - 1);
	}
	OrderResult r_;
};

}  // namespace

OrderResult search_orders(const OrderSearch &s, const OrderReplay &replay) { return Search(s, replay).run(); }

bool linearize_enabled()
{
	static const bool on = [] {
		const char *v = std::getenv("FL_LINEARIZE");
		return !v || std::strcmp(v, "0") != 0;
	}();
	return on;
}

}  // namespace fl
