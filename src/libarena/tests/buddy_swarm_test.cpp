// SPDX-License-Identifier: GPL-2.0-only
// The generator of concurrent allocator Programs (buddy_generate.h) and the
// swarm (buddy_swarm.h): what the generator reaches, that it is
// deterministic, that the swarm's counts add up and are the same for the
// same seed, and that a Program whose bounded search is exhausted is left.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "libarena/buddy_generate.h"
#include "libarena/buddy_swarm.h"

namespace fl::libarena {
namespace {

u64 order_of(u64 size)
{
	u64 o = 0;
	while ((BUDDY_MIN_ALLOC_BYTES << o) < size)
		o++;
	return o;
}

// Over 500 seeds: every order 0-15 and an invalid size, CPUs 0-3, every
// named NMI point and NMIs between ops, every op kind, access points; the
// same seed writes the same Program.
TEST(BuddyGenerate, ReachesTheVocabularyAndIsDeterministic)
{
	std::set<u64> orders;
	std::set<std::string> points;
	std::set<int> cpus, kinds;
	bool invalid = false;
	size_t several = 0, nested = 0, joined = 0, events = 0, bursts = 0, event_runs = 0, access_points = 0;
	for (uint64_t seed = 1; seed <= 500; seed++) {
		SeededChoices a(seed), b(seed);
		const BuddyCase x = generate_buddy_case(a, buddy_level::series);
		EXPECT_EQ(format_buddy_program(x.program), format_buddy_program(generate_buddy_case(b, buddy_level::series).program));
		EXPECT_TRUE(x.program.concurrent);
		EXPECT_GE(x.program.ops.size(), 2u);
		EXPECT_LE(x.program.ops.size(), kMaxGeneratedBuddyOps);
		for (const BuddyOp &op : x.program.ops) {
			kinds.insert(op.kind);
			cpus.insert(op.cpu);
			if (op.kind == BuddyOp::alloc || op.kind == BuddyOp::bulk || op.kind == BuddyOp::nmi_alloc) {
				if (op.size == 0 || op.size > (512u << 10))
					invalid = true;
				else
					orders.insert(order_of(op.size));
			}
			if (op.kind == BuddyOp::nmi_free || op.kind == BuddyOp::nmi_alloc)
				points.insert(op.at);
			if (op.kind == BuddyOp::nmi) {
				several += op.body.size() > 1;
				nested += std::any_of(op.body.begin(), op.body.end(),
						      [](const BuddyOp &c) { return c.kind == BuddyOp::nmi; });
				for (const BuddyOp &call : op.body)
					EXPECT_EQ(call.cpu, op.cpu);
			}
		}
		joined += !x.program.joins.empty();
		size_t run = 1, longest = 1;  // the same op written again and again: a burst
		for (size_t i = 1; i < x.program.ops.size(); i++)
			longest = std::max(longest, run = x.program.ops[i] == x.program.ops[i - 1] ? run + 1 : 1);
		bursts += longest >= 8;
		events += !x.events.empty();
		// events at consecutive questions: two failures in one call (a busy
		// transfer cache, then a failed lock in the spill's bulk free)
		event_runs += std::adjacent_find(x.events.begin(), x.events.end(), [](const auto &a, const auto &b) {
				      return b.first == a.first + 1;
			      }) != x.events.end();
		access_points += x.program.access_points;
		// the text form carries what the Program says (the schedule is the run's)
		std::string err;
		const auto back = parse_buddy_program(format_buddy_program(x.program), &err);
		ASSERT_TRUE(back) << err << "\n" << format_buddy_program(x.program);
		EXPECT_EQ(back->ops, x.program.ops);
		EXPECT_EQ(back->joins, x.program.joins);
		EXPECT_EQ(back->access_points, x.program.access_points);
	}
	// handler blocks of several calls, nested ones, joins, bursts and schedule events in a fair share
	EXPECT_GT(several, 50u);
	EXPECT_GT(nested, 20u);
	EXPECT_GT(joined, 50u);
	EXPECT_GT(bursts, 50u);  // what fills LIFOs and transfer caches on several CPUs
	EXPECT_GT(events, 200u);
	EXPECT_GT(event_runs, 80u);  // about a quarter
	EXPECT_GT(access_points, 80u);  // a quarter: a point at every arena access
	EXPECT_LT(access_points, 170u);
	EXPECT_EQ(orders.size(), 16u);
	EXPECT_TRUE(invalid);
	EXPECT_EQ(cpus, (std::set<int>{0, 1, 2, 3}));
	EXPECT_EQ(kinds.size(), 10u);
	EXPECT_EQ(points.size(), kBuddyNmiPointCount + 1);  // and "" (between ops)
}

// RapidCheck's empty list is the smallest case: one alloc, no schedule picks.
TEST(BuddyGenerate, AnEmptyListIsTheSmallestCase)
{
	const std::vector<u32> none;
	ListedChoices c(none);
	const BuddyCase x = generate_buddy_case(c, buddy_level::series);
	ASSERT_EQ(x.program.ops.size(), 1u);
	EXPECT_EQ(x.program.ops[0].kind, BuddyOp::alloc);
	EXPECT_TRUE(x.picks.empty());
	EXPECT_TRUE(x.events.empty());
	EXPECT_TRUE(x.program.joins.empty());
}

BuddySwarmOptions fixed(buddy_level level, uint64_t seed, uint64_t programs)
{
	BuddySwarmOptions o;
	o.level = level;
	o.seed = seed;
	o.max_programs = programs;
	o.seconds = 1e9;  // counts, not time, bound it: deterministic
	o.program_seconds = 1e9;
	o.program_schedules = 20;
	return o;
}

TEST(BuddySwarm, CountsAddUpAndRepeatForTheSameSeed)
{
	const BuddySwarmReport a = buddy_swarm(fixed(buddy_level::series, 3, 4));
	const BuddySwarmReport b = buddy_swarm(fixed(buddy_level::series, 3, 4));
	EXPECT_FALSE(a.finding) << a.finding->verdict.what;
	EXPECT_EQ(a.programs, 4u);
	EXPECT_EQ(a.distinct + a.repeats + a.unclassified, a.schedules);
	EXPECT_LE(a.exhausted, a.programs);
	EXPECT_GT(a.distinct, a.programs);
	EXPECT_EQ(a.schedules, b.schedules);
	EXPECT_EQ(a.distinct, b.distinct);
	EXPECT_EQ(a.exhausted, b.exhausted);
}

// A Program whose bound ran out is left there (no PCT / random re-walks);
// without stop_when_exhausted the same Program keeps running schedules.
TEST(BuddySwarm, AnExhaustedProgramIsLeft)
{
	for (uint64_t seed = 1; seed <= 50; seed++) {
		SeededChoices c(seed);
		const BuddyCase k = generate_buddy_case(c, buddy_level::series);
		BuddyExploreOptions e;
		e.seconds = 1e9;
		e.max_schedules = 60;
		e.stop_when_exhausted = true;
		const BuddyExploreReport x = explore_buddy(k.program, e);
		if (!x.bounded_exhausted)
			continue;
		EXPECT_EQ(x.schedules, x.bounded);
		EXPECT_EQ(x.repeats + x.unclassified, 0u) << "the bounded search ran a schedule twice";
		e.stop_when_exhausted = false;
		const BuddyExploreReport y = explore_buddy(k.program, e);
		EXPECT_EQ(y.schedules, 60u);
		EXPECT_GT(y.repeats, 0u);
		return;
	}
	FAIL() << "no generated Program of seeds 1-50 exhausted its bound in 30 schedules";
}

// guard_leak from scratch: the swarm's first finding replays from its text.
TEST(BuddySwarm, FindsGuardLeakAndItReplays)
{
	const BuddySwarmReport r = buddy_swarm(fixed(buddy_level::guard_leak, 1, 20));
	ASSERT_TRUE(r.finding);
	EXPECT_EQ(r.finding->verdict.what.substr(0, 4), "I10:");
	EXPECT_EQ(r.finding->replay_error, "");
	EXPECT_FALSE(buddy_swarm(fixed(buddy_level::series, 1, r.finding_program)).finding);
}

}  // namespace
}  // namespace fl::libarena
