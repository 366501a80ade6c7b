// SPDX-License-Identifier: GPL-2.0-only
// Scheduling strategies. Each sees only decisions with >= 2 runnable tasks.
//  DefaultStrategy  - no preemption: keep running; when blocked, lowest id
//  RandomWalk       - uniform among the runnable tasks (seeded)
//  Pct              - PCT (Burckhardt et al., ASPLOS'10): random distinct
//                     priorities, d-1 priority-change points in [1, k]
//  Forced           - given picks at given steps, default elsewhere; logs
//                     what it saw so bounded search can branch (explorer)
//  Replay           - label-anchored records; a record that does not fit
//                     or is never reached is a divergence
// RandomWalk and Pct also make fallible acquisitions fail and run pending
// NMI handlers at the rates they are given (EventRates; none by default).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "base/sched/scheduler.h"

namespace fl::sched {

// The strategies' seeded generator (SplitMix64): one is seeded per schedule,
// and seeding mt19937_64 (312 words) cost more than scheduling a small run.
class SplitMix64 {
public:
	using result_type = uint64_t;
	explicit SplitMix64(uint64_t seed) : s_(seed) {}
	static constexpr result_type min() { return 0; }
	static constexpr result_type max() { return ~result_type(0); }
	result_type operator()()
	{
		uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		return z ^ (z >> 31);
	}

private:
	uint64_t s_;
};

// How often a searching strategy answers Strategy::fail and Strategy::nmi
// with yes, per 256 questions. Its own generator, so that a seed's picks
// stay what they were whatever the rates.
struct EventRates {
	uint8_t fail = 0, nmi = 0;
	bool operator==(const EventRates &) const = default;
};

class EventDice {
public:
	EventDice(uint64_t seed, EventRates r) : rng_(seed ^ 0x6e6d692f6661696cull), r_(r) {}
	bool fail() { return r_.fail && rng_() % 256 < r_.fail; }
	int nmi(const std::vector<int> &pending)
	{
		if (!r_.nmi || rng_() % 256 >= r_.nmi)
			return -1;
		return pending[size_t(rng_() % pending.size())];
	}

private:
	SplitMix64 rng_;
	EventRates r_;
};

class DefaultStrategy final : public Strategy {
public:
	int pick(const Decision &d) override { return d.default_choice; }
};

class RandomWalk final : public Strategy {
public:
	explicit RandomWalk(uint64_t seed, EventRates rates = {}) : rng_(seed), dice_(seed, rates) {}
	int pick(const Decision &d) override;
	bool fail(const Decision &) override { return dice_.fail(); }
	int nmi(const Decision &, const std::vector<int> &pending) override { return dice_.nmi(pending); }

private:
	SplitMix64 rng_;
	EventDice dice_;
};

class Pct final : public Strategy {
public:
	// depth d >= 1; k: the expected number of steps (learned by the caller
	// as the running maximum and passed in through set_k).
	Pct(uint64_t seed, int depth, uint64_t k, EventRates rates = {})
		: rng_(seed), dice_(seed, rates), depth_(depth), k_(k ? k : 1)
	{
	}
	void set_k(uint64_t k) { k_ = k ? k : 1; }
	void begin(int ntasks) override;
	int pick(const Decision &d) override;
	bool fail(const Decision &) override { return dice_.fail(); }
	int nmi(const Decision &, const std::vector<int> &pending) override { return dice_.nmi(pending); }

private:
	SplitMix64 rng_;
	EventDice dice_;
	int depth_;
	uint64_t k_;
	std::vector<int> prio_;             // per task; higher runs
	std::vector<uint64_t> change_at_;   // sorted steps
	size_t next_change_ = 0;
};

class Forced final : public Strategy {
public:
	// Each decision and question carries the other kind's count so far,
	// which orders them in time (BoundedSearch::expand).
	struct Seen {
		uint64_t step;
		int current;
		bool current_runnable;
		std::vector<int> runnable;
		int default_choice;
		uint64_t events_before;  // questions asked before this pick
	};
	// A fail or nmi question (Decision::event) it was asked: what a
	// bounded search may branch on. pending is empty for a fail question.
	struct SeenEvent {
		uint64_t event;
		bool nmi;
		std::vector<int> pending;
		uint64_t step;  // picks made before this question
	};
	// events: the answer per question (fail: 1 = fail; nmi: the handler).
	explicit Forced(std::map<uint64_t, int> picks, std::map<uint64_t, int> events = {})
		: picks_(std::move(picks)), events_(std::move(events))
	{
	}
	int pick(const Decision &d) override;
	bool fail(const Decision &d) override;
	int nmi(const Decision &d, const std::vector<int> &pending) override;
	const std::vector<Seen> &seen() const { return seen_; }
	const std::vector<SeenEvent> &seen_events() const { return seen_events_; }

private:
	// Logs the question; its forced answer, or -1.
	int answer(const Decision &d, bool nmi, const std::vector<int> &pending);
	std::map<uint64_t, int> picks_, events_;
	std::vector<Seen> seen_;
	std::vector<SeenEvent> seen_events_;
};

// The fuzzers' and generators' schedule: (delta, target) pairs decoded from
// bytes. After `delta` more counted steps (Decision::step), switch to the
// (target % n)th of the n runnable tasks other than the default one: every
// pick is a preemption. Every byte string is a valid schedule.
// events: an answer per fail/NMI question number (Decision::event): for a
// fail question any non-zero value fails it; for an NMI question v > 0
// runs pending handler (v - 1) % pending.size(). Absent or 0: no.
class ByteSchedule final : public Strategy {
public:
	// The events map that fails the fail questions listed (a generator's
	// lock failures, ConcurrentInput::fail_events).
	static std::map<uint64_t, int> failing(const std::vector<uint32_t> &questions)
	{
		std::map<uint64_t, int> m;
		for (uint32_t q : questions)
			m[q] = 1;
		return m;
	}

public:
	explicit ByteSchedule(std::vector<std::pair<uint32_t, uint8_t>> picks, std::map<uint64_t, int> events = {})
		: picks_(std::move(picks)), events_(std::move(events))
	{
	}
	void begin(int ntasks) override;
	int pick(const Decision &d) override;
	bool fail(const Decision &d) override;
	int nmi(const Decision &d, const std::vector<int> &pending) override;

private:
	std::vector<std::pair<uint32_t, uint8_t>> picks_;
	std::map<uint64_t, int> events_;
	size_t next_ = 0;
	uint64_t due_ = 0;
};

class Replay final : public Strategy {
public:
	explicit Replay(std::vector<Record> records) : records_(std::move(records)) {}
	void begin(int ntasks) override;
	int pick(const Decision &d) override;
	bool fail(const Decision &d) override;
	int nmi(const Decision &d, const std::vector<int> &pending) override;
	std::string divergence() const override;

private:
	// The next record if it is `action` at d's point: consumed, and returned.
	const Record *take(const Decision &d, Action action);
	std::vector<Record> records_;
	std::vector<uint32_t> label_ids_;
	size_t next_ = 0;
	std::string diverged_;
};

}  // namespace fl::sched
