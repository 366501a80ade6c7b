// SPDX-License-Identifier: GPL-2.0-only
// Generated concurrent allocator Programs: the one generator behind the
// concurrent RapidCheck property (props/buddy_concurrent_props.cpp) and
// `buddy-explore --swarm` (buddy_swarm.h). It reads its decisions from a
// BuddyChoices source: RapidCheck's shrinkable list of numbers (a shorter
// list or smaller numbers make a smaller case: an exhausted list reads 0,
// and 0 is always the simplest answer) or a seeded generator (the swarm).
//
// A case is 2 to 4 CPUs (0-3), each CPU's ops one task, up to 32 ops:
// allocs and bulk allocs whose sizes reach every order 0-15 (and now and
// then an invalid one), frees of live objects (sometimes with an NMI free
// at lock_held), free_bulk with NULLs, NMI frees and allocs on any CPU
// between ops or at any point of kBuddyNmiPoints, NMI handler blocks of
// 1-3 calls (nested one level), user stores, drains (the series levels),
// reinit, and in a quarter of the cases joins (two or three phases); then
// a schedule as the fuzzers' byte picks and events (sched::ByteSchedule:
// lock failures and where a pending handler runs, now and then a burst of
// them in a row). Each Program also draws its features (swarm
// testing): op kinds left out, a palette of sizes most allocs reuse, and
// whether most ops go to CPU 0, so that some Programs fill a LIFO past its
// capacity and reach the transfer caches. Nothing in it is shaped for a
// particular bug.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "base/sched/strategy.h"
#include "libarena/buddy_program.h"

namespace fl::libarena {

class BuddyChoices {
public:
	virtual ~BuddyChoices() = default;
	// A number in [0, n) (0 when n is 0).
	u32 below(u32 n) { return n ? next() % n : 0; }
	// The source has nothing more to say (a RapidCheck list ran out).
	virtual bool exhausted() const { return false; }

protected:
	virtual u32 next() = 0;
};

// RapidCheck's list: read in order, 0 past its end.
class ListedChoices final : public BuddyChoices {
public:
	explicit ListedChoices(const std::vector<u32> &v) : v_(v) {}
	bool exhausted() const override { return i_ >= v_.size(); }

private:
	u32 next() override { return i_ < v_.size() ? v_[i_++] : 0; }
	const std::vector<u32> &v_;
	size_t i_ = 0;
};

// The swarm's: seeded, never exhausted.
class SeededChoices final : public BuddyChoices {
public:
	explicit SeededChoices(uint64_t seed) : rng_(seed) {}

private:
	u32 next() override { return u32(rng_() >> 32); }
	sched::SplitMix64 rng_;
};

struct BuddyCase {
	BuddyProgram program;  // concurrent, no schedule records yet
	std::vector<std::pair<uint32_t, uint8_t>> picks;  // sched::ByteSchedule's (delta, target)
	std::map<uint64_t, int> events;                   // and its events: lock failures, NMI placements
};

inline constexpr size_t kMaxGeneratedBuddyOps = 64;  // 32 unless the Program comes in bursts

BuddyCase generate_buddy_case(BuddyChoices &, buddy_level);

}  // namespace fl::libarena
