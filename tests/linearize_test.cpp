// SPDX-License-Identifier: GPL-2.0-only
// The linearizability check (src/check/interleave/linearize.h) and its
// search (src/base/order_search.h): each tampered history is reported with
// its closest order, an untampered one passes, too many orders is a note.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>

#include "base/order_search.h"
#include "base/sched/strategy.h"
#include "check/interleave/linearize.h"
#include "check/program_text.h"

namespace fl {
namespace {

const Config kV2{Arch::A64, Patch::v2, 12, Door::anon, false};

Program parse(const std::string &text)
{
	ParseResult r = parse_program(text);
	EXPECT_TRUE(r.program) << r.error.str();
	return r.program ? *r.program : Program{};
}

// update, freeze and a writable mmap at once (corpora/interleavings/explore/update_freeze_mmap.fl).
const char *kGroup = "map value_size=8 max_entries=512\n"
		     "update idx=0 val=5 thread=0\n"
		     "freeze thread=1\n"
		     "mmap B len=1p prot=rw thread=2\n"
		     "load B\n";

TEST(OrderSearch, CountsInterleavingsAndSaturates)
{
	EXPECT_EQ(count_orders({{0, 1}, {2, 3}}, 5000), 6u);
	EXPECT_EQ(count_orders({{0}, {1}, {2}}, 5000), 6u);
	EXPECT_EQ(count_orders({{0, 1, 2}}, 5000), 1u);
	// 12 ops, 3 per thread over 4 threads: 12! / (3!)^4 = 369600
	std::vector<std::vector<size_t>> big(4);
	for (size_t i = 0; i < 12; i++)
		big[i % 4].push_back(i);
	EXPECT_EQ(count_orders(big, 1000000), 369600u);
	EXPECT_EQ(count_orders(big, 5000), 5001u);
}

TEST(OrderSearch, PrunesEveryOrderWithADeadPrefix)
{
	// Only the order 1, 0, 2 matches; an op 0 placed first is wrong at once.
	OrderSearch s;
	s.threads = {{0}, {1}, {2}};
	std::vector<std::vector<size_t>> tried;
	OrderResult r = search_orders(s, [&](const std::vector<size_t> &o) {
		tried.push_back(o);
		if (o[0] == 0)
			return size_t(0);
		return o == std::vector<size_t>{1, 0, 2} ? kMatch : size_t(1);
	});
	EXPECT_EQ(r.kind, OrderResult::linearizable);
	EXPECT_EQ(r.order, (std::vector<size_t>{1, 0, 2}));
	// 0,1,2 rules out 0,2,1 too; 1,0,2 matches: two replays.
	EXPECT_EQ(tried.size(), 2u);
}

TEST(OrderSearch, RunningOutOfReplaysIsUndecidedNotAPass)
{
	OrderSearch s;
	s.threads = {{0}, {1}, {2}};
	s.cap = 3;
	const auto last_differs = [](const std::vector<size_t> &o) { return o.size() - 1; };
	OrderResult r = search_orders(s, last_differs);
	EXPECT_EQ(r.kind, OrderResult::too_many);
	EXPECT_EQ(r.replays, 3u);
	EXPECT_EQ(r.orders, 6u);
	s.cap = 6;
	r = search_orders(s, last_differs);
	EXPECT_EQ(r.kind, OrderResult::not_linearizable);
	EXPECT_EQ(r.replays, 6u);
}

// The hint went wrong at its first choice, and every order shows it only at
// its last position (an alloc that took a new chunk, seen in a later NMI's
// NULL): depth-first search would replay the 7! orders below the wrong
// first choice before changing it; one discrepancy from the hint finds it.
TEST(OrderSearch, AnEarlyWrongChoiceIsFoundWithinTheCap)
{
	OrderSearch s;
	for (size_t id = 0; id < 8; id++)
		s.threads.push_back({id});
	s.cap = 300;
	const std::vector<size_t> match = {1, 0, 2, 3, 4, 5, 6, 7};
	const OrderResult r = search_orders(s, [&](const std::vector<size_t> &o) { return o == match ? kMatch : o.size() - 1; });
	EXPECT_EQ(r.kind, OrderResult::linearizable);
	EXPECT_EQ(r.order, match);
	EXPECT_EQ(r.orders, 40320u);
	EXPECT_LE(r.replays, 30u);
}

TEST(OrderSearch, AnOpThatEndedBeforeAnotherBeganComesFirst)
{
	// Three threads of one op: op 0 ended (clock 2) before op 2 began (3),
	// op 1 overlaps both. Of the 6 orders, the 3 with op 0 before op 2.
	OrderSearch s;
	s.threads = {{0}, {1}, {2}};
	s.spans = {{1, 2}, {1, 6}, {3, 4}};
	std::vector<std::vector<size_t>> tried;
	const OrderResult r = search_orders(s, [&](const std::vector<size_t> &o) {
		tried.push_back(o);
		return o.size() - 1;  // never a match: every order allowed is tried
	});
	EXPECT_EQ(r.kind, OrderResult::not_linearizable);
	ASSERT_EQ(tried.size(), 3u);
	for (const std::vector<size_t> &o : tried)
		EXPECT_LT(std::find(o.begin(), o.end(), 0), std::find(o.begin(), o.end(), 2));
	s.spans.clear();  // sequential consistency: all six
	tried.clear();
	search_orders(s, [&](const std::vector<size_t> &o) {
		tried.push_back(o);
		return o.size() - 1;
	});
	EXPECT_EQ(tried.size(), 6u);
}

TEST(OrderSearch, GroupsKeepEveryOpOfAGroupBeforeTheNext)
{
	// Two threads of two ops each, a join after each thread's first op:
	// groups {0, 2} and {1, 3}, 2 x 2 = 4 orders of the 6 without it.
	OrderSearch s;
	s.threads = {{0, 1}, {2, 3}};
	s.group = {0, 1, 0, 1};
	EXPECT_EQ(count_search_orders(s, 5000), 4u);
	std::vector<std::vector<size_t>> tried;
	const OrderResult r = search_orders(s, [&](const std::vector<size_t> &o) {
		tried.push_back(o);
		return o.size() - 1;  // never a match: every order is tried
	});
	EXPECT_EQ(r.kind, OrderResult::not_linearizable);
	EXPECT_EQ(r.orders, 4u);
	ASSERT_EQ(tried.size(), 4u);
	for (const std::vector<size_t> &o : tried) {
		const auto pos = [&](size_t id) { return std::find(o.begin(), o.end(), id) - o.begin(); };
		EXPECT_LT(std::max(pos(0), pos(2)), std::min(pos(1), pos(3)));
	}
}

TEST(Linearize, ObservedRunPassesAndATamperedResultIsReported)
{
	Program p = parse(kGroup);
	std::string err;
	const interleave::Group g = interleave::find_group(p, &err);
	sched::DefaultStrategy d;
	interleave::ScheduleOutcome o = interleave::run_schedule(p, kV2, d);
	ASSERT_FALSE(o.finding()) << o.verdict();
	ASSERT_EQ(o.trace.events.size(), p.ops.size());
	EXPECT_GE(o.linearize_replays, 1u);  // the check ran
	const std::vector<size_t> completion{0, 1, 2};
	EXPECT_FALSE(interleave::check_linearizable(p, kV2, g, o.trace, completion).violation);

	// The default schedule: update, freeze (0), mmap rw refused. A writable
	// mapping and a freeze that succeeded: no order gives both.
	ASSERT_EQ(o.trace.events[1].ret, 0);
	ASSERT_LT(o.trace.events[2].ret, 0);
	Trace bad = o.trace;
	bad.events[2].ret = 0;
	interleave::LinearizeResult r = interleave::check_linearizable(p, kV2, g, bad, completion);
	ASSERT_EQ(r.violation.what, Invariant::not_linearizable);
	EXPECT_NE(r.violation.detail.find("T1: op 2 freeze"), std::string::npos) << r.violation.detail;
	EXPECT_NE(r.violation.detail.find("first difference"), std::string::npos) << r.violation.detail;
	EXPECT_STREQ(to_string(r.violation.what), "not_linearizable");

	// An op after the group is compared too: the load's bytes.
	Trace after = o.trace;
	after.events[3].sig = 7;
	r = interleave::check_linearizable(p, kV2, g, after, completion);
	ASSERT_EQ(r.violation.what, Invariant::not_linearizable);
	EXPECT_NE(r.violation.detail.find("(after the group)"), std::string::npos) << r.violation.detail;
}

TEST(Linearize, BusyFreezeBesideAWriterIsAFailedFreeze)
{
	// map_freeze returns -EBUSY while an update is write-active: no order
	// shows it, the kernel allows it (linearize.cpp, busy_freeze).
	Program p = parse("map value_size=8 max_entries=1\nupdate idx=0 val=1 thread=0\nfreeze thread=1\n");
	std::string err;
	const interleave::Group g = interleave::find_group(p, &err);
	sched::DefaultStrategy d;
	interleave::ScheduleOutcome o = interleave::run_schedule(p, kV2, d);
	ASSERT_FALSE(o.finding()) << o.verdict();
	Trace busy = o.trace;
	busy.events[1].ret = -EBUSY;
	EXPECT_FALSE(interleave::check_linearizable(p, kV2, g, busy, {0, 1}).violation);
	// Without a writer beside it, the same -EBUSY is reported.
	Program alone = parse("map value_size=8 max_entries=1\nlookup idx=0 thread=0\nfreeze thread=1\n");
	o = interleave::run_schedule(alone, kV2, d);
	ASSERT_FALSE(o.finding()) << o.verdict();
	busy = o.trace;
	busy.events[1].ret = -EBUSY;
	EXPECT_EQ(interleave::check_linearizable(alone, kV2, interleave::find_group(alone, &err), busy, {0, 1}).violation.what,
		  Invariant::not_linearizable);
}

// A syscall on the map fd holds the file from the fdget at its start, so
// beside another thread's close it can succeed as if before the close while
// what it decides comes after ops that came after the close (linearize.cpp,
// its_file_beside_a_close): a freeze that took the file, then the close and
// the munmap of the last writable mapping, then the freeze's write-active
// check. The candidates take the freeze's file at the close; not when the
// freeze began only after the close (its thread's lookup before it already
// found the fd closed), and not for a result no order gives even with the
// file (the writable mapping still there).
TEST(Linearize, AnOpHoldsTheFileItTookBeforeAClose)
{
	std::string err;
	sched::DefaultStrategy d;
	auto check = [&](const std::string &text, size_t freeze, int64_t ret) {
		Program p = parse(text);
		interleave::ScheduleOutcome o = interleave::run_schedule(p, kV2, d);
		EXPECT_FALSE(o.finding()) << o.verdict();
		Trace t = o.trace;
		EXPECT_EQ(t.events.size(), p.ops.size());
		if (t.events.size() != p.ops.size())
			return interleave::LinearizeResult{};
		t.events[freeze].ret = ret;
		std::vector<size_t> completion;
		for (size_t i = 1; i < p.ops.size(); i++)
			completion.push_back(i);
		return interleave::check_linearizable(p, kV2, interleave::find_group(p, &err), t, completion);
	};
	const std::string map = "map value_size=8 max_entries=1 key_size=4 flags=mmapable\nmmap A len=1p\n";
	// The default schedule runs T0 first: the freeze finds the fd closed.
	EXPECT_FALSE(check(map + "freeze thread=1\nclose thread=0\nmunmap A len=1p thread=0\n", 1, -EBADF).violation);
	// ok: it took the file before the close, checked after the munmap.
	interleave::LinearizeResult r = check(map + "freeze thread=1\nclose thread=0\nmunmap A len=1p thread=0\n", 1, 0);
	EXPECT_FALSE(r.violation) << r.violation.detail;
	// ok where its thread's lookup before it found the fd closed: it began
	// after the close, so it cannot hold the file.
	r = check(map + "lookup idx=0 thread=1\nfreeze thread=1\nclose thread=0\nmunmap A len=1p thread=0\n", 2, 0);
	EXPECT_EQ(r.violation.what, Invariant::not_linearizable) << r.note;
	// ok with the writable mapping never unmapped: -EBUSY or -EBADF in every
	// order, with its file or not.
	r = check(map + "freeze thread=1\nclose thread=0\n", 1, 0);
	EXPECT_EQ(r.violation.what, Invariant::not_linearizable) << r.note;
}

// map_update_elem checks its permission (frozen) before map_freeze stores
// frozen and writes after it (its_check_beside_a_freeze): T0's freeze
// returned 0 and its lookup saw the old value while T1's update, begun
// before the freeze, was in flight and then returned 0. The candidates let
// that update check at the freeze. A second update of T1 began only after
// its first returned, after the freeze: it gets -EPERM, and had it returned
// 0 that would be reported.
TEST(Linearize, AnUpdateChecksItsPermissionBeforeAFreezeBesideIt)
{
	const std::string map = "map value_size=8 max_entries=1 key_size=4 flags=mmapable\n";
	const std::string window = "at T0 map_freeze:READ_ONCE#1 switch T1\nat T1 map_update_elem:might_fault#1 switch T0\n";
	auto run = [&](const std::string &ops) {
		Program p = parse(map + ops + window);
		sched::Replay rep(p.schedule);
		interleave::ScheduleOutcome o = interleave::run_schedule(p, kV2, rep);
		EXPECT_FALSE(o.finding()) << o.verdict();
		EXPECT_EQ(o.linearize_note, "");
		EXPECT_EQ(o.trace.events.size(), p.ops.size());
		return std::make_pair(p, o.trace);
	};
	auto [p, t] = run("update idx=0 val=1 thread=1\nfreeze thread=0\nlookup idx=0 thread=0\n");
	ASSERT_EQ(t.events.size(), 3u);
	EXPECT_EQ(t.events[0].ret, 0);  // the update
	EXPECT_EQ(t.events[1].ret, 0);  // the freeze
	EXPECT_EQ(t.events[2].data, std::vector<uint8_t>(8, 0));  // the lookup: the old value
	auto [q, u] = run("update idx=0 val=1 thread=1\nupdate idx=0 val=2 thread=1\nfreeze thread=0\nlookup idx=0 thread=0\n");
	ASSERT_EQ(u.events.size(), 4u);
	EXPECT_EQ(u.events[1].ret, -EPERM);
	u.events[1].ret = 0;
	std::string err;
	const interleave::LinearizeResult r =
		interleave::check_linearizable(q, kV2, interleave::find_group(q, &err), u, {2, 3, 0, 1});
	EXPECT_EQ(r.violation.what, Invariant::not_linearizable) << r.note;
}

// Two groups with a join between them: the second group's results are
// checked from the state the first group's orders leave (no longer "not
// checked: several groups"); a wrong result in the second group is
// reported, a right one that needs a first-group order the run did not take
// passes, the observed run passes.
TEST(Linearize, SeveralGroupsAreCheckedAsOneHistory)
{
	Program p = parse("map value_size=8 max_entries=1\n"
			  "update idx=0 val=1 thread=0\n"
			  "update idx=0 val=3 thread=1\n"
			  "join\n"
			  "lookup idx=0 thread=0\n"
			  "update idx=0 val=2 thread=1\n"
			  "lookup idx=0\n");
	std::string err;
	const std::vector<interleave::Group> groups = interleave::find_groups(p, &err);
	ASSERT_EQ(groups.size(), 2u) << err;
	sched::DefaultStrategy d;
	interleave::ScheduleOutcome o = interleave::run_schedule(p, kV2, d);
	ASSERT_FALSE(o.finding()) << o.verdict();
	EXPECT_EQ(o.linearize_note, "");
	EXPECT_GE(o.linearize_replays, 1u);  // the check ran
	ASSERT_EQ(o.trace.events.size(), p.ops.size());
	const std::vector<size_t> completion{0, 1, 2, 3};
	EXPECT_FALSE(interleave::check_linearizable(p, kV2, groups, o.trace, completion).violation);
	// The default schedule: 1 then 3, so the second group's lookup saw 3.
	ASSERT_EQ(o.trace.events[2].data.size(), 8u);
	ASSERT_EQ(o.trace.events[2].data[0], 3);
	auto saw = [&](uint8_t v) {
		Trace t = o.trace;
		t.events[2].data.assign(8, 0);
		t.events[2].data[0] = v;
		return interleave::check_linearizable(p, kV2, groups, t, completion);
	};
	// 7: no order of either group writes it.
	interleave::LinearizeResult r = saw(7);
	ASSERT_EQ(r.violation.what, Invariant::not_linearizable);
	EXPECT_EQ(r.op, 2u);
	EXPECT_NE(r.violation.detail.find("group 2:"), std::string::npos) << r.violation.detail;
	EXPECT_NE(r.violation.detail.find("first difference: op 3 lookup"), std::string::npos) << r.violation.detail;
	// 1: the first group in the other order (3 then 1); 2: the second
	// group's update first. Both linearizable.
	EXPECT_FALSE(saw(1).violation) << saw(1).violation.detail;
	EXPECT_FALSE(saw(2).violation) << saw(2).violation.detail;

	// The sequential op after the last group is compared too.
	Trace after = o.trace;
	after.events[4].data.assign(8, 0);
	r = interleave::check_linearizable(p, kV2, groups, after, completion);
	ASSERT_EQ(r.violation.what, Invariant::not_linearizable);
	EXPECT_NE(r.violation.detail.find("(after the group)"), std::string::npos) << r.violation.detail;
}

TEST(Linearize, TooManyOrdersIsANoteNotAPass)
{
	Program p = parse(kGroup);
	std::string err;
	sched::DefaultStrategy d;
	interleave::ScheduleOutcome o = interleave::run_schedule(p, kV2, d);
	Trace bad = o.trace;
	bad.events[2].ret = 0;
	interleave::LinearizeResult r =
		interleave::check_linearizable(p, kV2, interleave::find_group(p, &err), bad, {0, 1, 2}, /*cap=*/1);
	EXPECT_FALSE(r.violation);
	EXPECT_EQ(r.replays, 1u);
	EXPECT_NE(r.note.find("not checked: too many orders"), std::string::npos) << r.note;
}

}  // namespace
}  // namespace fl
