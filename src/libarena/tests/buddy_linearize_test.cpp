// SPDX-License-Identifier: GPL-2.0-only
// The allocator's linearizability check (libarena/buddy_linearize.h): a
// concurrent run passes, the same run with one result changed is reported,
// whatever schedule ran it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "base/sched/strategy.h"
#include "libarena/buddy_generate.h"
#include "libarena/buddy_linearize.h"

namespace fl::libarena {
namespace {

BuddyProgram program(buddy_level level)
{
	std::string err;
	auto p = parse_buddy_program("alloc 64\nalloc 100\nfree live:0\nalloc 64 cpu=1\nfree live:1 cpu=1\n"
				     "nmi_free live:0 cpu=1 at=buddy_lock:held\nconcurrent\n",
				     &err);
	EXPECT_TRUE(p) << err;
	p->level = level;
	return *p;
}

// A Program's text, parsed (`where` names it in a failure).
BuddyProgram parsed(const std::string &text, const std::string &where = "the text")
{
	std::string err;
	const auto p = parse_buddy_program(text, &err);
	EXPECT_TRUE(p) << where << ": " << err;
	return p ? *p : BuddyProgram{};
}

// A Program of the source tree's corpora.
BuddyProgram read_program(const std::string &path)
{
	std::ifstream in(std::filesystem::path(FL_SOURCE_DIR) / path);
	std::stringstream text;
	text << in.rdbuf();
	return parsed(text.str(), path);
}

TEST(BuddyLinearize, RunsPassAndAChangedResultIsReported)
{
	for (buddy_level level : {buddy_level::before, buddy_level::nmi_deferred, buddy_level::series}) {
		for (uint64_t seed = 0; seed < 8; seed++) {
			BuddyProgram p = program(level);
			sched::RandomWalk s(seed);
			const BuddyVerdict v = run_buddy_program(p, s);  // checked inside
			ASSERT_TRUE(v.ok) << to_string(level) << " seed " << seed << ": " << v.what;
			ASSERT_EQ(v.results.size(), p.ops.size());
			EXPECT_EQ(v.results[0], "object");
			EXPECT_EQ(v.results[2], "0");
			// free live:0 on CPU 0 returned an error instead: no order does that.
			BuddyVerdict bad = v;
			bad.results[2] = "-22";
			check_buddy_linearizable(p, bad);
			ASSERT_FALSE(bad.ok) << to_string(level) << " seed " << seed;
			EXPECT_EQ(bad.what.rfind("not_linearizable: ", 0), 0u) << bad.what;
			EXPECT_NE(bad.what.find("first difference: op 3 free live:0"), std::string::npos) << bad.what;
			// An alloc that failed where every order gives an object.
			bad = v;
			bad.results[3] = "NULL";
			check_buddy_linearizable(p, bad);
			EXPECT_FALSE(bad.ok) << to_string(level) << " seed " << seed;
		}
	}
}

// corpora/buddy/quiet/*.bl: what a search reported on correct code, each
// at its own level and with its own schedule, now ok, and with the
// linearizability check run (not switched off by a "not checked" note).
// Each was a violation on the code before its fix.
// A handler that came after an op (its point not reached: the alloc took
// no lock) is an element of the orders of its own: its result is its own,
// not the arming op's, its span begins after that op ended, and a handler
// result no order gives (an alloc's "0") is reported as the handler's.
TEST(BuddyLinearize, AHandlerBetweenOpsIsAnElementOfItsOwn)
{
	std::string err;
	const auto p = parse_buddy_program("level series\nalloc 64\nnmi_alloc 64 at=buddy_lock:held\nalloc 64\n"
					   "alloc 64 cpu=1\nfree live:0 cpu=1\nconcurrent\n",
					   &err);
	ASSERT_TRUE(p) << err;
	const BuddyVerdict v = run_buddy_program(*p);
	ASSERT_TRUE(v.ok) << v.what;
	EXPECT_EQ(v.linearize_note, "");
	EXPECT_TRUE(v.real_time);
	ASSERT_EQ(v.between.size(), 1u);
	const BuddyVerdict::Between &nmi = v.between[0];
	EXPECT_EQ(nmi.armed_by, 1u);
	EXPECT_EQ(nmi.after, 2u);
	EXPECT_EQ(nmi.result, "NMI; object");
	EXPECT_EQ(v.results[1], "armed");
	EXPECT_LT(v.spans[2].second, nmi.span.first);
	BuddyVerdict bad = v;
	bad.between[0].result = "NMI; 0";
	check_buddy_linearizable(*p, bad);
	EXPECT_FALSE(bad.ok);
	EXPECT_NE(bad.what.find("first difference: the NMI after op 3 (armed by op 2): sequentially -> NMI; object, "
				"observed -> NMI; 0"),
		  std::string::npos)
		<< bad.what;
}

// A handler the schedule ran inside an op (at a decision, not at its
// Program's point) is checked where it ran: the candidates run it at the
// same occurrence of the same named point of that op. The runs pass,
// checked; the same runs with the handler's result changed to one no
// order gives are reported, naming the op that armed it, unless other
// CPUs ran in that op before the handler (BuddyVerdict::others_before_nmi):
// then the run is not checked, whatever its results.
TEST(BuddyLinearize, AHandlerTheSchedulePlacedIsCheckedWhereItRan)
{
	std::string err;
	const auto parsed = parse_buddy_program("alloc 64\nalloc 64\nnmi_alloc 64 at=buddy_cache_free:push\nfree live:0\n"
						"free live:1\nalloc 64 cpu=1\nfree live:2 cpu=1\nconcurrent\n",
						&err);
	ASSERT_TRUE(parsed) << err;
	for (buddy_level level : {buddy_level::before, buddy_level::nmi_deferred, buddy_level::series}) {
		BuddyProgram p = *parsed;
		p.level = level;
		size_t placed = 0, others = 0;
		for (uint64_t seed = 0; seed < 256 && placed < 4; seed++) {
			sched::RandomWalk s(seed, sched::EventRates{0, 64});
			const BuddyVerdict v = run_buddy_program(p, s);
			ASSERT_TRUE(v.ok) << to_string(level) << " seed " << seed << ": " << v.what;
			if (v.placed.empty())
				continue;
			EXPECT_EQ(v.linearize_note,
				  v.others_before_nmi ? "linearizability not checked: other CPUs ran inside an op before its NMI" : "")
				<< to_string(level) << " seed " << seed;
			// (a run no order explains is not checked either way)
			const std::string others_ran = v.others_before_nmi ? "before" : v.others_after_nmi ? "after" : "";
			ASSERT_EQ(v.placed[0].armed_by, 2u);
			EXPECT_EQ(v.placed[0].in_op, 3u);  // the CPU's next op, the free
			EXPECT_GE(v.placed[0].count, 1u);
			BuddyVerdict bad = v;
			bad.results[2] = "NMI; 0";
			check_buddy_linearizable(p, bad);
			if (!others_ran.empty()) {
				others++;
				EXPECT_TRUE(bad.ok) << bad.what;
				EXPECT_EQ(bad.linearize_note, "linearizability not checked: other CPUs ran inside an op " + others_ran + " its NMI");
				continue;
			}
			placed++;
			ASSERT_FALSE(bad.ok) << to_string(level) << " seed " << seed;
			EXPECT_NE(bad.what.find("first difference: op 3 nmi_alloc 64"), std::string::npos) << bad.what;
		}
		EXPECT_GE(placed, 4u) << to_string(level) << " (" << others << " more after other CPUs ran in the op)";
	}
}

// A handler the schedule ran inside an op before that op did anything
// another context could see (BuddyVerdict::Placed::ahead: no arena write,
// no other CPU ran in it yet) is also a step of its own right before the
// op. CPU 0 frees a 512 KiB block and its NMI (alloc 64) comes at the
// free's first lock question; CPU 1 frees the NMI's object, then its own
// NMI finds no 512 KiB block free. With the handler inside the free, CPU
// 1's free comes after the block's, so its NMI would get the block: no
// order gave the NULL (reported, before the handler was tried ahead). A
// result no order gives, ahead or inside, is still reported: CPU 1 ran
// inside CPU 0's free after the handler, but the handler ahead is a step
// of its own (not BuddyVerdict::others_after_nmi). The fuzz finding's two
// placed handlers: the one in the free_bulk came before its lock (ahead),
// the one in an alloc after it claimed its cache's guard.
TEST(BuddyLinearize, AHandlerAheadOfAnythingItsOpDidIsCheckedBeforeItToo)
{
	const BuddyProgram p = parsed("level series\nalloc 524288\nnmi_alloc 64 at=buddy_lock:held\nfree live:0\n"
				      "free live:0 cpu=1\nnmi_alloc 524288 cpu=1\nconcurrent\n"
				      "at T0 buddy_lock:timeout#2 nmi N0\nat T0 buddy_lock:timeout#2 switch T1\n");
	const BuddyVerdict v = run_buddy_program(p);
	ASSERT_TRUE(v.ok) << v.what;
	EXPECT_EQ(v.linearize_note, "");
	EXPECT_EQ(v.results[1], "armed; NMI; object");
	EXPECT_EQ(v.results[4], "NMI; NULL");
	ASSERT_EQ(v.placed.size(), 1u);
	const BuddyVerdict::Placed &nmi = v.placed[0];
	EXPECT_EQ(nmi.armed_by, 1u);
	EXPECT_EQ(nmi.in_op, 2u);
	EXPECT_TRUE(nmi.ahead);
	EXPECT_LT(v.spans[2].first, nmi.span.first);
	EXPECT_LT(nmi.span.second, v.spans[3].first);  // CPU 1's free began after the handler ended
	EXPECT_FALSE(v.others_after_nmi);
	BuddyVerdict bad = v;
	bad.results[1] = "armed; NMI; NULL";  // the first chunk has room for 64 bytes in every order
	check_buddy_linearizable(p, bad);
	ASSERT_FALSE(bad.ok);
	EXPECT_EQ(bad.what.rfind("not_linearizable: ", 0), 0u) << bad.what;

	const BuddyVerdict found = run_buddy_program(read_program("src/libarena/tests/data/nmi_ahead_of_its_free_bulk.bl"));
	ASSERT_TRUE(found.ok) << found.what;
	EXPECT_EQ(found.linearize_note, "");
	ASSERT_EQ(found.placed.size(), 2u);
	for (const BuddyVerdict::Placed &at : found.placed)
		EXPECT_EQ(at.ahead, at.in_op == 11) << "in op " << at.in_op + 1;  // op 12, the free_bulk
}

// A handler of several calls inside which another CPU ran, as an op of
// its own (no at=) or between ops (its point not reached: the alloc it
// was armed for takes no cache): each call is an element of the orders of
// its own, after the op it follows, so the run is checked instead of left
// out, and it passes. The same run with one call's result changed to one
// no order gives (an NMI alloc's NULL, with the first chunk's room) is
// reported, naming that call. (At nmi_deferred a handler's free and alloc
// take no lock and pass no point: nothing runs between them.)
TEST(BuddyLinearize, AHandlerOfSeveralCallsIsCheckedCallByCall)
{
	const struct {
		const char *name, *handler;
		size_t after;  // the op the calls follow
	} shapes[] = {
		{"as an op", "nmi\n  free live:0\n  alloc 64\nend\n", 2},
		{"between ops", "nmi at=buddy_cache_free:push\n  free live:0\n  alloc 64\nend\nalloc 64\n", 3},
	};
	for (const auto &shape : shapes) {
		std::string err;
		const auto parsed = parse_buddy_program(std::string("alloc 64\nalloc 64\n") + shape.handler +
								"alloc 64 cpu=1\nfree live:1 cpu=1\nalloc 64 cpu=1\nconcurrent\n",
							&err);
		ASSERT_TRUE(parsed) << err;
		for (buddy_level level : {buddy_level::before, buddy_level::series}) {
			BuddyProgram p = *parsed;
			p.level = level;
			const std::string name = std::string(shape.name) + " at " + to_string(level);
			size_t split = 0;
			for (uint64_t seed = 0; seed < 64; seed++) {
				sched::RandomWalk s(seed);
				const BuddyVerdict v = run_buddy_program(p, s);
				ASSERT_TRUE(v.ok) << name << " seed " << seed << ": " << v.what;
				EXPECT_EQ(v.linearize_note, "") << name << " seed " << seed;
				const auto call = [&](int k) {
					return std::find_if(v.between.begin(), v.between.end(),
							    [&](const BuddyVerdict::Between &b) { return b.call == k; });
				};
				if (call(0) == v.between.end())
					continue;
				split++;
				ASSERT_NE(call(1), v.between.end()) << name << " seed " << seed;
				EXPECT_EQ(call(0)->after, shape.after) << name;
				EXPECT_EQ(call(1)->after, shape.after) << name;
				EXPECT_EQ(call(1)->armed_by, 2u) << name;
				EXPECT_LT(call(0)->span.second, call(1)->span.first) << name;
				EXPECT_EQ(call(1)->result, "object") << name << " seed " << seed;
				BuddyVerdict bad = v;
				bad.between[size_t(call(1) - v.between.begin())].result = "NULL";
				check_buddy_linearizable(p, bad);
				ASSERT_FALSE(bad.ok) << name << " seed " << seed;
				EXPECT_NE(bad.what.find("first difference: call 2 (alloc 64) of the NMI after op " +
							std::to_string(shape.after + 1) + " (armed by op 3): sequentially -> object"),
					  std::string::npos)
					<< bad.what;
			}
			EXPECT_GE(split, 4u) << name;
		}
	}
}

// A lock that failed inside a handler of its own place (between ops, or
// an op) decides nothing about where it lands: the candidates run it at
// its place and fail the same acquisition, so the run is checked (once
// "a lock failed beside an NMI", not checked), and a result the failure
// rules out (the call's result as if its lock had not failed) is
// reported. At before, where each of the handler's calls takes the buddy
// lock, in every order (at series its caches mostly serve it).
TEST(BuddyLinearize, ALockFailedInAHandlerOfItsOwnPlaceIsChecked)
{
	const char *const handlers[] = {"nmi\n  free live:0\n  alloc 64\nend\n",
					"nmi at=buddy_cache_free:push\n  free live:0\n  alloc 64\nend\nalloc 64\n"};
	// "NMI; 0; NULL (lock failed)" -> "NMI; 0; object"
	auto unfailed = [](std::string r) {
		for (const auto &[failed, ok] : {std::pair{"NULL (lock failed)", "object"}, std::pair{"-110 (lock failed)", "0"}})
			if (const size_t at = r.find(failed); at != std::string::npos)
				return r.replace(at, std::strlen(failed), ok);
		return r;
	};
	for (const char *handler : handlers) {
		std::string err;
		const auto p = parse_buddy_program(std::string("alloc 64\nalloc 64\n") + handler +
							   "alloc 64 cpu=1\nfree live:1 cpu=1\nalloc 64 cpu=1\nconcurrent\n",
						   &err);
		ASSERT_TRUE(p) << err;
		ASSERT_EQ(p->level, buddy_level::before);
		const std::string name = format_buddy_op(p->ops[2]);
		size_t failed = 0;
		for (uint64_t seed = 0; seed < 128; seed++) {
			sched::RandomWalk s(seed, sched::EventRates{96, 0});
			const BuddyVerdict v = run_buddy_program(*p, s);
			ASSERT_TRUE(v.ok) << name << " seed " << seed << ": " << v.what;
			if (std::none_of(v.fails.begin(), v.fails.end(), [](const BuddyVerdict::FailAt &f) { return f.depth == 1; }))
				continue;
			failed++;
			EXPECT_EQ(v.linearize_note, "") << name << " seed " << seed;
			BuddyVerdict bad = v;
			std::vector<std::string *> nmi{&bad.results[2]};
			for (BuddyVerdict::Between &b : bad.between)
				nmi.push_back(&b.result);
			const auto r = std::find_if(nmi.begin(), nmi.end(), [&](const std::string *r) { return unfailed(*r) != *r; });
			ASSERT_NE(r, nmi.end()) << name << " seed " << seed;
			**r = unfailed(**r);
			check_buddy_linearizable(*p, bad);
			EXPECT_FALSE(bad.ok) << name << " seed " << seed << ": " << bad.linearize_note;
			EXPECT_EQ(bad.what.rfind("not_linearizable: ", 0), 0u) << bad.what;
		}
		EXPECT_GE(failed, 4u) << name;
	}
}

// corpora/buddy/not_checked/*.bl: runs on correct code a search reported
// before their shape was known, of shapes the check cannot decide (two CPUs
// that get a new chunk at once leave the arena larger than any order of the
// ops does; other CPUs ran while one got a new chunk, or inside an op before
// its NMI): each is ok, not checked and says why, never a report.
TEST(BuddyLinearize, NotCheckedCorpusIsQuietAndSaysWhy)
{
	const std::map<std::string, std::string> why = {
		{"two_cpus_get_a_chunk_at_once.bl", "two CPUs got a new chunk at once"},
		{"other_cpus_beside_a_new_chunk.bl", "other CPUs ran while one got a new chunk"},
		{"drain_put_back_a_transfer_cache_unlocked.bl", "other CPUs ran while one got a new chunk"},
		{"nmi_handler_across_other_cpus_ops.bl", "other CPUs ran inside an op before its NMI"},
		{"other_cpus_inside_an_op_after_its_nmi.bl", "other CPUs ran inside an op after its NMI"},
		{"nmi_placed_inside_an_nmi_op.bl", "the schedule placed an NMI"},
	};
	size_t files = 0;
	for (const auto &entry :
	     std::filesystem::directory_iterator(std::filesystem::path(FL_SOURCE_DIR) / "corpora/buddy/not_checked")) {
		const BuddyVerdict v = run_buddy_program(read_program(entry.path().string()));
		EXPECT_TRUE(v.ok) << entry.path() << ": " << v.what;
		const auto w = why.find(entry.path().filename().string());
		ASSERT_NE(w, why.end()) << entry.path() << ": say here why it is not checked";
		EXPECT_EQ(v.linearize_note, "linearizability not checked: " + w->second) << entry.path();
		files++;
	}
	EXPECT_EQ(files, why.size());
}

// Where an op first held the buddy lock (BuddyVerdict::locked, where the
// search's first order puts it) lies inside its span: the end-of-run drain
// on CPU 0 once set it for CPU 0's last op, long after that op ended.
TEST(BuddyLinearize, AnOpHeldTheLockInsideItsSpan)
{
	size_t locked = 0;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		SeededChoices choices(seed);
		const BuddyCase c = generate_buddy_case(choices, buddy_level::series);
		sched::ByteSchedule s(c.picks, c.events);
		const BuddyVerdict v = run_buddy_program(c.program, s);
		ASSERT_EQ(v.locked.size(), v.spans.size());
		for (size_t i = 0; i < v.locked.size(); i++) {
			if (!v.locked[i])
				continue;
			locked++;
			EXPECT_LE(v.spans[i].first, v.locked[i]) << "seed " << seed << " op " << i + 1;
			EXPECT_LE(v.locked[i], v.spans[i].second) << "seed " << seed << " op " << i + 1;
		}
	}
	EXPECT_GE(locked, 60u);
}

// The quiet corpus file `name`: its run, which the plain search gave up on
// after its cap of orders, is checked (no note) with the shortcuts on.
BuddyVerdict expect_decided_by_the_shortcuts_only(const std::string &name)
{
	struct Restore {
		~Restore() { set_buddy_linearize_shortcuts(true); }
	} restore;
	const BuddyProgram p = read_program(std::string(FL_SOURCE_DIR) + "/corpora/buddy/quiet/" + name);
	set_buddy_linearize_shortcuts(false);
	const BuddyVerdict plain = run_buddy_program(p);
	EXPECT_TRUE(plain.ok) << plain.what;
	EXPECT_EQ(plain.linearize_note.rfind("linearizability not checked: too many orders", 0), 0u) << plain.linearize_note;
	set_buddy_linearize_shortcuts(true);
	BuddyVerdict v = run_buddy_program(p);
	EXPECT_TRUE(v.ok) << v.what;
	EXPECT_EQ(v.linearize_note, "");
	return v;
}

// A run whose NMI handlers ran between their CPU's ops while another CPU's
// handler ran late inside an op is decided by the order the elements ended
// in (each handler kept after its op, though it ended before it): checked,
// not "too many orders" (a 30-minute campaign's corpus, 2026-12-07: 156 of
// its 1,084 concurrent runs gave up before, 45 with the span orders).
TEST(BuddyLinearize, RunsTheSearchGaveUpOnAreCheckedByTheirSpanOrders)
{
	expect_decided_by_the_shortcuts_only("nmis_between_ops_beside_a_late_nmi_alloc.bl");
}

// A run out of real-time order as the candidates see it (a handler inside
// an op ran across another CPU's op) is searched in real-time order first,
// and only then in each CPU's order alone, where the search gave up.
TEST(BuddyLinearize, RunsOutOfRealTimeOrderAreSearchedInItFirst)
{
	EXPECT_FALSE(expect_decided_by_the_shortcuts_only("nmi_inside_an_op_across_other_cpus_in_real_time_order.bl").real_time);
}

// The check's shortcuts (the orders the elements began and ended in
// replayed first, a candidate stopped at its first settled difference)
// give the plain search's verdicts on generated Programs, each under the
// schedule the generator drew, and on the same runs with one result
// changed, which no order may explain: the same report, word for word.
// The one difference allowed is the documented one: a run the plain
// search gave up on (its cap of orders) that one of those orders explains.
TEST(BuddyLinearize, ShortcutsGiveTheVerdictsOfThePlainSearch)
{
	struct Restore {
		~Restore() { set_buddy_linearize_shortcuts(true); }
	} restore;
	auto run = [](const BuddyCase &c, bool shortcuts) {
		set_buddy_linearize_shortcuts(shortcuts);
		sched::ByteSchedule s(c.picks, c.events);
		return run_buddy_program(c.program, s);
	};
	auto check = [](const BuddyProgram &p, BuddyVerdict v, bool shortcuts) {
		set_buddy_linearize_shortcuts(shortcuts);
		check_buddy_linearizable(p, v);
		return v;
	};
	size_t checked = 0, changed = 0, reported = 0, gave_up = 0;
	for (buddy_level level : {buddy_level::nmi_deferred, buddy_level::series}) {
		for (uint64_t seed = 1; seed <= 40; seed++) {
			SeededChoices choices(seed);
			const BuddyCase c = generate_buddy_case(choices, level);
			const std::string name = std::string(to_string(level)) + " seed " + std::to_string(seed);
			const BuddyVerdict on = run(c, true), off = run(c, false);
			EXPECT_EQ(on.results, off.results) << name;
			if (off.linearize_note.rfind("linearizability not checked: too many orders", 0) == 0 && on.ok &&
			    on.linearize_note.empty()) {
				gave_up++;
				continue;
			}
			EXPECT_EQ(on.ok, off.ok) << name;
			EXPECT_EQ(on.what, off.what) << name;
			EXPECT_EQ(on.linearize_note, off.linearize_note) << name;
			if (!off.ok || !off.linearize_note.empty())
				continue;
			checked++;
			// One result changed (a run no order gives), early and late in the Program.
			for (size_t from : {size_t(0), off.results.size() / 2}) {
				for (size_t i = from; i < off.results.size(); i++) {
					const std::string &r = off.results[i];
					if (r != "object" && r != "0" && r != "NULL")
						continue;
					BuddyVerdict bad = off;
					bad.results[i] = r == "object" ? "NULL" : r == "NULL" ? "object" : "-22";
					const BuddyVerdict a = check(c.program, bad, true), b = check(c.program, bad, false);
					EXPECT_EQ(a.ok, b.ok) << name << " op " << i + 1;
					EXPECT_EQ(a.what, b.what) << name << " op " << i + 1;
					EXPECT_EQ(a.linearize_note, b.linearize_note) << name << " op " << i + 1;
					changed++;
					reported += !b.ok;
					break;
				}
			}
		}
	}
	EXPECT_GE(checked, 40u);
	EXPECT_GE(reported, 20u);
	std::printf("%zu runs checked, %zu changed (%zu reported), %zu the plain search gave up on\n", checked, changed,
		    reported, gave_up);
}

TEST(BuddyLinearize, QuietCorpusIsQuietAndChecked)
{
	size_t files = 0;
	for (const auto &entry : std::filesystem::directory_iterator(std::filesystem::path(FL_SOURCE_DIR) / "corpora/buddy/quiet")) {
		const BuddyVerdict v = run_buddy_program(read_program(entry.path().string()));
		EXPECT_TRUE(v.ok) << entry.path() << ": " << v.what;
		EXPECT_EQ(v.linearize_note, "") << entry.path();
		files++;
	}
	EXPECT_GE(files, 3u);
}

}  // namespace
}  // namespace fl::libarena
