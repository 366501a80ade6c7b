// SPDX-License-Identifier: GPL-2.0-only
// The allocator's linearizability check (libarena/buddy_linearize.h): a
// concurrent run passes, the same run with one result changed is reported,
// whatever schedule ran it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/sched/strategy.h"
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

// A Program of the source tree's corpora.
BuddyProgram read_program(const std::string &path)
{
	std::ifstream in(std::filesystem::path(FL_SOURCE_DIR) / path);
	std::stringstream text;
	text << in.rdbuf();
	std::string err;
	const auto p = parse_buddy_program(text.str(), &err);
	EXPECT_TRUE(p) << path << ": " << err;
	return p ? *p : BuddyProgram{};
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

// Two CPUs that get a new chunk at once leave the arena larger than any
// order of the ops does: such a run is ok and not checked, never a report.
TEST(BuddyLinearize, TwoCpusGettingAChunkAtOnceIsNotChecked)
{
	const BuddyVerdict v = run_buddy_program(read_program("corpora/buddy/not_checked/two_cpus_get_a_chunk_at_once.bl"));
	EXPECT_TRUE(v.ok) << v.what;
	EXPECT_EQ(v.linearize_note, "linearizability not checked: two CPUs got a new chunk at once");
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
