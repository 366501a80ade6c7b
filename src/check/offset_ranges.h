// SPDX-License-Identifier: GPL-2.0-only
// A set of byte offsets kept as disjoint half-open ranges: the contents
// shadow's unknown and known bytes. A concurrent update of a 64 KiB value
// makes 64 Ki offsets unknown; kept one by one (an unordered_set of bytes)
// that was a node allocation per byte, a third of the threads fuzz target's
// time under ASan once its inputs updated large values (#37).
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace fl {

class OffsetRanges {
public:
	bool empty() const { return r_.empty(); }
	void clear() { r_.clear(); }

	bool contains(uint64_t x) const
	{
		auto it = r_.upper_bound(x);
		return it != r_.begin() && std::prev(it)->second > x;
	}
	// The end of the range holding x (x itself when none does).
	uint64_t end_of(uint64_t x) const
	{
		auto it = r_.upper_bound(x);
		return it != r_.begin() && std::prev(it)->second > x ? std::prev(it)->second : x;
	}
	// For an x not in the set: the first offset after it that is (UINT64_MAX when none is).
	uint64_t next_after(uint64_t x) const
	{
		auto it = r_.upper_bound(x);
		return it == r_.end() ? UINT64_MAX : it->first;
	}

	void add(uint64_t lo, uint64_t hi)
	{
		if (lo >= hi)
			return;
		auto it = r_.upper_bound(lo);
		if (it != r_.begin() && std::prev(it)->second >= lo) {  // joins the range before
			--it;
			lo = it->first;
			hi = std::max(hi, it->second);
		}
		while (it != r_.end() && it->first <= hi) {  // swallows the ranges it reaches
			hi = std::max(hi, it->second);
			it = r_.erase(it);
		}
		r_[lo] = hi;
	}
	void remove(uint64_t lo, uint64_t hi)
	{
		if (lo >= hi)
			return;
		auto it = r_.upper_bound(lo);
		if (it != r_.begin() && std::prev(it)->second > lo) {  // cut the range that holds lo
			--it;
			const uint64_t end = it->second;
			if (it->first < lo)
				(it++)->second = lo;
			else
				it = r_.erase(it);
			if (end > hi) {
				r_[hi] = end;
				return;
			}
		}
		while (it != r_.end() && it->first < hi) {
			if (it->second > hi) {  // keep its tail
				const uint64_t end = it->second;
				r_.erase(it);
				r_[hi] = end;
				return;
			}
			it = r_.erase(it);
		}
	}

private:
	std::map<uint64_t, uint64_t> r_;  // start -> end, disjoint, not touching
};

}  // namespace fl
