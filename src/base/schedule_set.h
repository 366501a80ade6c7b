// SPDX-License-Identifier: GPL-2.0-only
// Distinct schedules among an explorer's runs. Two runs took the same
// schedule iff they made the same decisions: the scheduler's trace hash
// (RunResult::trace_hash, over (task, label) of every decision) names one.
// A set of those hashes, open addressing, at most kMaxDistinct entries (a
// 64 MiB table by default): past that, a run whose hash is not in the set is
// counted as unclassified, neither distinct nor a repeat, so neither count
// overstates.
#pragma once

#include <cstdint>
#include <vector>

#include "base/unchecked_runs.h"

namespace fl {

class ScheduleSet {
public:
	enum class Seen : uint8_t { fresh, repeat, unclassified };
	static constexpr uint64_t kMaxDistinct = uint64_t(1) << 22;
	explicit ScheduleSet(uint64_t max_distinct = kMaxDistinct) : max_(max_distinct) {}

	Seen add(uint64_t hash)
	{
		if (hash == 0)
			hash = 1;  /* 0 marks an empty slot */
		if (slots_.empty())
			slots_.assign(1024, 0);
		uint64_t *slot = find(hash);
		if (*slot == hash) {
			repeats_++;
			return Seen::repeat;
		}
		if (distinct_ >= max_) {
			unclassified_++;
			return Seen::unclassified;
		}
		*slot = hash;
		distinct_++;
		if (distinct_ * 2 > slots_.size())
			grow();
		return Seen::fresh;
	}
	uint64_t distinct() const { return distinct_; }
	uint64_t repeats() const { return repeats_; }
	uint64_t unclassified() const { return unclassified_; }
	uint64_t runs() const { return distinct_ + repeats_ + unclassified_; }

private:
	uint64_t *find(uint64_t hash)
	{
		const size_t mask = slots_.size() - 1;
		size_t i = size_t(hash ^ (hash >> 29)) & mask;
		while (slots_[i] && slots_[i] != hash)
			i = (i + 1) & mask;
		return &slots_[i];
	}
	void grow()
	{
		std::vector<uint64_t> old;
		old.swap(slots_);
		slots_.assign(old.size() * 2, 0);
		for (uint64_t h : old)
			if (h)
				*find(h) = h;
	}

	std::vector<uint64_t> slots_;
	uint64_t max_;
	uint64_t distinct_ = 0, repeats_ = 0, unclassified_ = 0;
};

// An explorer's report (array map or allocator: both have these fields)
// takes its distinct / repeat / unclassified counts from its set.
template <class Report>
void report_counts(Report &r, const ScheduleSet &seen)
{
	r.distinct = seen.distinct();
	r.repeats = seen.repeats();
	r.unclassified = seen.unclassified();
}

// A swarm's report adds one explored Program's counts.
template <class Swarm, class Report>
void add_program_counts(Swarm &s, const Report &x)
{
	s.programs++;
	s.exhausted += x.bounded_exhausted;
	s.schedules += x.schedules;
	s.distinct += x.distinct;
	s.repeats += x.repeats;
	s.unclassified += x.unclassified;
	s.linearize_unchecked.add(x.linearize_unchecked);
}

}  // namespace fl
