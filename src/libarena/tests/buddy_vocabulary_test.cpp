// SPDX-License-Identifier: GPL-2.0-only
// The allocator's concurrency vocabulary: NMI handler blocks (several
// calls, nested blocks), the old one-call forms as blocks, handlers a
// schedule places (records "nmi N") replaying from their text, and joins.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <fstream>
#include <sstream>

#include "base/sched/strategy.h"
#include "libarena/buddy_linearize.h"
#include "libarena/buddy_program.h"
#include "libarena/buddy_runner.h"

namespace fl::libarena {

namespace {

BuddyProgram parse(const std::string &text)
{
	std::string err;
	auto p = parse_buddy_program(text, &err);
	EXPECT_TRUE(p) << err << "\n" << text;
	return p ? *p : BuddyProgram{};
}

// v's schedule records, written into p's text, replay to its results and trace.
void expect_records_replay(BuddyProgram p, const BuddyVerdict &v)
{
	p.schedule = v.records;
	const BuddyVerdict again = run_buddy_program(parse(format_buddy_program(p)));
	EXPECT_EQ(again.results, v.results);
	EXPECT_EQ(again.trace_hash, v.trace_hash);
}

// nmi_free X / nmi_alloc S rewritten as the blocks they lower to.
std::string as_blocks(const std::string &text)
{
	std::istringstream in(text);
	std::string out;
	for (std::string line; std::getline(in, line);) {
		std::istringstream words(line);
		std::string op, arg, rest, opt;
		words >> op >> arg;
		if (op != "nmi_free" && op != "nmi_alloc") {
			out += line + "\n";
			continue;
		}
		while (words >> opt)
			if (opt[0] != '#')
				rest += " " + opt;
			else
				break;
		out += "nmi" + rest + "\n  " + (op == "nmi_free" ? "free " : "alloc ") + arg + "\nend\n";
	}
	return out;
}

}  // namespace

TEST(BuddyNmi, BlocksRoundTripAndBadBlocksAreOneLine)
{
	const std::string text = "level series\nalloc 64 cpu=2\nnmi cpu=2 at=buddy_cache_free:push\n  free live:0\n"
				 "  alloc 64\n  nmi at=buddy_lock:held\n    free live:1\n    store live:0 val=3\n  end\n"
				 "  bulk 64 norder=1\n  free_bulk live:0,null\n  nmi_free live:2\nend\nfree live:0 cpu=2\nnmi\nend\n";
	const BuddyProgram p = parse(text);
	EXPECT_EQ(format_buddy_program(p), text);
	ASSERT_EQ(p.ops.size(), 4u);
	ASSERT_EQ(p.ops[1].body.size(), 6u);
	EXPECT_EQ(p.ops[1].body[2].body.size(), 2u);
	EXPECT_EQ(p.ops[1].body[2].body[1].cpu, 2);  // a block's calls run on its CPU
	std::string err;
	for (const auto &[bad, msg] : std::vector<std::pair<std::string, std::string>>{
		     {"alloc 1\nend\n", "line 2: 'end' without an open 'nmi' block"},
		     {"nmi\n  alloc 1\n", "line 2: 'nmi' block without 'end'"},
		     {"nmi\n  alloc 1 cpu=1\nend\n", "line 2: 'cpu=' inside an 'nmi' block: its calls run on the block's CPU"},
		     {"nmi\n  reinit\nend\n", "line 2: 'reinit' inside an 'nmi' block (close it with 'end')"},
		     {"nmi\n  free live:0 nmi=live:1\nend\n",
		      "line 2: 'nmi=' inside an 'nmi' block: write a nested 'nmi at=buddy_lock:held' block"},
		     {"nmi 3\nend\n", "line 1: 'nmi' takes only cpu= and at= (its calls follow, one a line, up to 'end')"},
		     {"nmi\nnmi\nnmi\nnmi\nnmi\n", "line 5: 'nmi' blocks nest 4 deep at most"},
	     }) {
		EXPECT_FALSE(parse_buddy_program(bad, &err)) << bad;
		EXPECT_EQ(err, msg);
	}
}

// The old one-call forms are blocks: every regression and explore Program
// with nmi_free / nmi_alloc gives the same verdict and results, op by op, as
// its rewrite into blocks, at every level, sequentially and (explore) under
// its default schedule.
TEST(BuddyNmi, OldFormsMeanTheBlocksTheyLowerTo)
{
	size_t compared = 0;
	for (const char *sub : {"corpora/buddy/regression", "corpora/buddy/explore", "corpora/buddy/findings"})
		for (const auto &entry : std::filesystem::directory_iterator(std::filesystem::path(FL_SOURCE_DIR) / sub)) {
			std::ifstream in(entry.path());
			std::stringstream ss;
			ss << in.rdbuf();
			if (ss.str().find("nmi_") == std::string::npos)
				continue;
			BuddyProgram old = parse(ss.str()), blocks = parse(as_blocks(ss.str()));
			ASSERT_EQ(old.ops.size(), blocks.ops.size()) << entry.path();
			for (buddy_level level : kBuddyLevels) {
				old.level = blocks.level = level;
				const BuddyVerdict a = run_buddy_program(old), b = run_buddy_program(blocks);
				EXPECT_EQ(a.ok, b.ok) << entry.path() << " at " << to_string(level);
				EXPECT_EQ(a.what, b.what) << entry.path() << " at " << to_string(level);
				EXPECT_EQ(a.results, b.results) << entry.path() << " at " << to_string(level);
				compared++;
			}
		}
	EXPECT_GE(compared, 5u * 5);
}

// What one NMI could not say before: a handler that frees, then allocates,
// then frees in bulk, with a nested NMI at the buddy lock of its bulk alloc.
// Each call follows its level's NMI rule (the runner checks I1-I12 after
// the op and at every point).
TEST(BuddyNmi, AHandlerFreesThenAllocatesWithANestedNmi)
{
	const std::string ops = "alloc 64\nalloc 64\nalloc 100\nnmi\n  free live:0\n  alloc 64\n"
				"  nmi at=buddy_lock:held\n    free live:1\n  end\n  bulk 32 norder=1\n  free_bulk live:0\nend\n";
	const std::map<buddy_level, std::string> want = {
		// before: everything takes the lock; the nested NMI over the bulk's lock times out
		{buddy_level::before, "NMI; 0; object; NMI; -110; 0; 0"},
		// nmi levels: frees are deferred, allocations return NULL (no lock taken: the nested
		// NMI comes after the bulk)
		{buddy_level::nmi_deferred, "NMI; 0; NULL; -12; NMI; 0; 0"},
		{buddy_level::series, "NMI; 0; object; NMI; 0; 0; 0"},
	};
	for (const auto &[level, results] : want) {
		BuddyProgram p = parse(ops);
		p.level = level;
		const BuddyVerdict v = run_buddy_program(p);
		ASSERT_TRUE(v.ok) << to_string(level) << ": " << v.what;
		EXPECT_EQ(v.results.at(3), results) << to_string(level);
	}
}

// A concurrent schedule may run an armed handler before its point: the
// record "at TN LABEL#K nmi N" says where, and the Program's text replays it.
TEST(BuddyNmi, AHandlerTheSchedulePlacesReplaysFromItsText)
{
	BuddyProgram p = parse("level nmi_deferred\nconcurrent\nalloc 64\nalloc 64 cpu=1\n"
			       "nmi at=buddy_lock:held\n  free live:0\n  alloc 16\nend\nfree live:0\nalloc 64 cpu=1\nfree live:0 cpu=1\n");
	size_t placed = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		sched::RandomWalk walk(seed, sched::EventRates{0, 128});
		const BuddyVerdict v = run_buddy_program(p, walk);
		ASSERT_TRUE(v.ok) << v.what;
		BuddyProgram q = p;
		q.schedule = v.records;
		bool has_nmi = false;
		for (const sched::Record &r : v.records)
			has_nmi |= r.action == sched::Action::nmi;
		if (!has_nmi)
			continue;
		placed++;
		// checked: the candidates run the handler where the schedule did
		// (unless other CPUs ran in its op before it: then not checked)
		EXPECT_EQ(v.linearize_note,
			  v.others_before_nmi ? "linearizability not checked: other CPUs ran inside an op before its NMI" : "");
		EXPECT_FALSE(v.placed.empty());
		const BuddyProgram again = parse(format_buddy_program(q));
		EXPECT_EQ(again.schedule, q.schedule);
		const BuddyVerdict w = run_buddy_program(again);
		EXPECT_TRUE(w.ok) << w.what;
		EXPECT_EQ(w.records, v.records);
		EXPECT_EQ(w.results, v.results);
		EXPECT_EQ(w.trace_hash, v.trace_hash);
		EXPECT_EQ(w.placed, v.placed);
	}
	EXPECT_GT(placed, 3u);
}


namespace fl::libarena {

// `join` in a concurrent Program: every CPU runs its ops above it before
// any runs an op below it: both allocs complete before either free in every
// schedule; without the join some schedule has CPU 1 free first.
// "points access": a scheduling point at every load and store of the
// allocator, so that a schedule comes between two accesses no named point
// separates (a read and a write of one word); its records replay from the text.
TEST(BuddyAccessPoints, AScheduleComesBetweenAnyTwoAccesses)
{
	const std::string text =
		"level series\nalloc 64\nfree live:0\nalloc 64 cpu=1\nfree live:0 cpu=1\nconcurrent\npoints access\n";
	BuddyProgram p = parse(text);
	EXPECT_EQ(format_buddy_program(p), text);
	BuddyProgram q = p;
	q.access_points = false;
	size_t between_accesses = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		sched::RandomWalk a(seed), b(seed);
		const BuddyVerdict v = run_buddy_program(p, a), w = run_buddy_program(q, b);
		ASSERT_TRUE(v.ok) << v.what;
		ASSERT_TRUE(w.ok) << w.what;
		EXPECT_GT(v.steps, w.steps) << seed;
		between_accesses += std::any_of(v.records.begin(), v.records.end(), [](const sched::Record &r) {
			return r.label.find(":read") != std::string::npos || r.label.find(":write") != std::string::npos;
		});
		expect_records_replay(p, v);
	}
	EXPECT_GT(between_accesses, 0u);
	std::string err;
	EXPECT_FALSE(parse_buddy_program("level nmi_deferred\nalloc 1\nalloc 1 cpu=1\nconcurrent\npoints access\n", &err));
	EXPECT_EQ(err, "line 5: 'points access' is not for the nmi levels (their shadow predicts the deferred list at named "
		       "points)");
}

TEST(BuddyJoin, ABarrierOrdersTheGroups)
{
	const std::string text = "level series\nalloc 64\nalloc 64 cpu=1\njoin\nfree live:1 cpu=1\nfree live:0\nconcurrent\n";
	BuddyProgram p = parse(text);
	EXPECT_EQ(format_buddy_program(p), text);
	EXPECT_EQ(p.joins, std::vector<size_t>{2});
	BuddyProgram q = p;
	q.joins.clear();
	size_t reordered_without = 0;
	auto allocs_first = [](const BuddyVerdict &v) {
		return v.spans.size() == 4 &&
		       std::max(v.spans[0].second, v.spans[1].second) < std::min(v.spans[2].first, v.spans[3].first);
	};
	for (uint64_t seed = 1; seed <= 30; seed++) {
		sched::RandomWalk a(seed), b(seed);
		const BuddyVerdict v = run_buddy_program(p, a), w = run_buddy_program(q, b);
		ASSERT_TRUE(v.ok) << v.what;
		EXPECT_TRUE(allocs_first(v)) << seed;
		EXPECT_EQ(v.results[2], "0");
		EXPECT_EQ(v.results[3], "0");
		EXPECT_EQ(v.linearize_note, "");  // checked, group by group
		// a free that failed, where every order of the groups frees
		BuddyVerdict bad = v;
		bad.results[3] = "-22";
		check_buddy_linearizable(p, bad);
		EXPECT_FALSE(bad.ok) << seed;
		EXPECT_NE(bad.what.find("first difference: op 4 free live:0"), std::string::npos) << bad.what;
		ASSERT_TRUE(w.ok) << w.what;
		reordered_without += !allocs_first(w);
		expect_records_replay(p, v);
	}
	EXPECT_GT(reordered_without, 0u);
	std::string err;
	EXPECT_FALSE(parse_buddy_program("concurrent\njoin\nalloc 1\n", &err));
	EXPECT_EQ(err, "line 2: 'join' must stand between two ops");
	EXPECT_FALSE(parse_buddy_program("concurrent\nalloc 1\njoin\n", &err));
	EXPECT_EQ(err, "line 3: 'join' must stand between two ops");
}

}  // namespace fl::libarena

namespace fl::libarena {

// The decoder's new vocabulary (CPUs 0-3, handler blocks, joins) with the
// fuzz target's schedule and events: quiet on the correct levels but for
// one known finding at `before`, and each run replays from its text
// (records included). The known one: at `before` (upstream, no NMI design)
// an alloc in NMI that needs a new chunk calls bpf_arena_alloc_pages in
// NMI context, which takes the page-table lock (lockdep: "NMI context
// takes ptl"); the series levels no longer get a chunk in NMI
// (src/libarena/README.md).
// FL_BUDDY_DECODE_CASES sets the number of inputs (48).
TEST(BuddyDecode, RicherInputsRunQuietAndReplay)
{
	const char *env = std::getenv("FL_BUDDY_DECODE_CASES");
	const int cases = env ? std::atoi(env) : 48;
	const uint32_t seed = 0xb1a7;
	std::printf("BuddyDecode seed=0x%x cases=%d\n", unsigned(seed), cases);
	std::mt19937 rng(seed);
	const buddy_level levels[] = {buddy_level::before, buddy_level::nmi_deferred, buddy_level::series};
	size_t blocks = 0, joins = 0, events = 0, known = 0, bursts = 0;
	for (int i = 0; i < cases; i++) {
		std::vector<u8> bytes(8 + rng() % 120);
		for (u8 &x : bytes)
			x = u8(rng());
		BuddyProgram p = decode_buddy_program(bytes.data(), bytes.size(), levels[i % 3]);
		p.concurrent = i / 3 % 2;
		std::vector<std::pair<uint32_t, uint8_t>> picks;
		for (int k = 0; k < 8; k++)
			picks.emplace_back(rng() % 16, u8(rng()));
		std::map<uint64_t, int> ev;
		for (int k = 0; k < 3; k++)
			ev[rng() % 24] = int(rng() % 4);
		sched::ByteSchedule schedule(picks, ev);
		const BuddyVerdict v = run_buddy_program(p, schedule);
		const bool nmi_chunk = v.what.find("lockdep: NMI context takes ptl") != std::string::npos;
		known += nmi_chunk;
		ASSERT_TRUE(v.ok || (nmi_chunk && p.level == buddy_level::before)) << v.what << "\n" << format_buddy_program(p);
		for (size_t k = 0; k < p.ops.size(); k++) {
			blocks += p.ops[k].kind == BuddyOp::nmi;
			bursts += k >= 2 && p.ops[k] == p.ops[k - 1] && p.ops[k] == p.ops[k - 2];
		}
		joins += p.joins.size();
		for (const sched::Record &r : v.records)
			events += r.action != sched::Action::switch_to;
		p.schedule = v.records;
		const BuddyProgram q = parse(format_buddy_program(p));
		EXPECT_EQ(q.ops, p.ops);
		EXPECT_EQ(q.joins, p.joins);
		const BuddyVerdict r = run_buddy_program(q);
		EXPECT_EQ(r.ok, v.ok) << r.what << "\n" << format_buddy_program(q);
		EXPECT_EQ(r.what, v.what) << format_buddy_program(q);
		EXPECT_EQ(r.results, v.results) << format_buddy_program(q);
	}
	std::printf("BuddyDecode: %zu handler blocks, %zu joins, %zu fail/nmi events, %zu new chunks in NMI, %zu ops "
		    "third in a row\n",
		    blocks, joins, events, known, bursts);
	EXPECT_GT(blocks, 0u);
	EXPECT_GT(events, 0u);
	EXPECT_GT(bursts, 0u);
}

// A burst: an op byte's top bits at 3 write an alloc, free or NMI call 2-16
// times (the next byte after its operands says how many), up to the op limit.
TEST(BuddyDecode, TopBitsWriteABurst)
{
	const u8 burst[] = {0xc0, 0x01, 0x05, 0x30, 0x01};  // alloc 8 on CPU 0, 2 + 5 times; alloc 8 on CPU 3
	BuddyProgram p = decode_buddy_program(burst, sizeof burst, buddy_level::series);
	ASSERT_EQ(p.ops.size(), 8u) << format_buddy_program(p);
	for (size_t k = 0; k < 7; k++)
		EXPECT_EQ(p.ops[k], (BuddyOp{.kind = BuddyOp::alloc, .size = 8})) << k;
	EXPECT_EQ(p.ops[7], (BuddyOp{.kind = BuddyOp::alloc, .size = 8, .cpu = 3}));
	const u8 no_burst[] = {0xc5, 0x01, 0x02, 0x00, 0x01};  // a bulk alloc does not repeat: 0x00 is the next op
	EXPECT_EQ(decode_buddy_program(no_burst, sizeof no_burst, buddy_level::series).ops.size(), 2u);
	std::vector<u8> many;
	for (int i = 0; i < 10; i++)
		many.insert(many.end(), {0xc6, 0x04, 0x0e});  // free live:0, 16 times each
	EXPECT_EQ(decode_buddy_program(many.data(), many.size(), buddy_level::series).ops.size(), kMaxBuddyOps);
}

}  // namespace fl::libarena

// "open upstream": the slips found in libarena and open upstream run as
// upstream has them only when a Program asks (the open corpus), so every
// search goes on past them. The leaked chunk of a failed lock in
// buddy_alloc_from_new_chunk fails the next reset (I12) at every level;
// the same Program without the line runs the fix and is ok.
BuddyProgram open_program(const char *name)
{
	std::ifstream in(std::filesystem::path(FL_SOURCE_DIR) / "corpora/buddy/open" / name);
	std::stringstream ss;
	ss << in.rdbuf();
	return parse(ss.str());
}

TEST(BuddyOpen, UpstreamLeaksTheNewChunkAndTheDefaultRunsTheFix)
{
	BuddyProgram p = open_program("new_chunk_leaked_on_lock_failure.bl");
	ASSERT_TRUE(p.open_upstream);
	EXPECT_TRUE(parse(format_buddy_program(p)).open_upstream);
	for (buddy_level level : kBuddyLevels) {
		p.level = level;
		p.open_upstream = true;
		const BuddyVerdict upstream = run_buddy_program(p);
		EXPECT_EQ(upstream.what, "I12: buddy_init returned -16, expected 0") << to_string(level);
		p.open_upstream = false;
		EXPECT_TRUE(run_buddy_program(p).ok) << to_string(level) << ": " << run_buddy_program(p).what;
	}
}

// `before` (no NMI design upstream) grows the arena in an NMI as upstream
// has it (lockdep: the PTL in NMI context); every search runs it with the
// series' rule (an NMI allocation takes existing chunks only), and quiet.
TEST(BuddyOpen, BeforeGrowsTheArenaInAnNmiOnlyAsUpstream)
{
	BuddyProgram p = open_program("nmi_grows_the_arena.bl");
	ASSERT_TRUE(p.open_upstream);
	p.level = buddy_level::before;
	const BuddyVerdict upstream = run_buddy_program(p);
	EXPECT_NE(upstream.what.find("NMI context takes ptl"), std::string::npos) << upstream.what;
	p.open_upstream = false;
	EXPECT_TRUE(run_buddy_program(p).ok) << run_buddy_program(p).what;
	p.level = buddy_level::series;
	EXPECT_TRUE(run_buddy_program(p).ok) << run_buddy_program(p).what;
}

}  // namespace fl::libarena
