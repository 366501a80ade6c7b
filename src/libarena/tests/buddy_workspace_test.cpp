// SPDX-License-Identifier: GPL-2.0-only
// The restored arena (buddy_workspace.h) gives the verdicts a fresh one
// gives: every text Program of corpora/buddy, run twice, once reusing the
// thread's arena and once on arenas of its own (inside an arena scope already
// open, where reuse steps aside), the linearizability candidates included.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/arena.h"
#include "libarena/buddy_workspace.h"

namespace fl::libarena {
namespace {

TEST(BuddyWorkspace, ReusedArenaGivesTheVerdictsOfFreshOnes)
{
	size_t programs = 0, concurrent = 0, findings = 0;
	for (const auto &entry :
	     std::filesystem::recursive_directory_iterator(std::filesystem::path(FL_SOURCE_DIR) / "corpora/buddy")) {
		if (entry.path().extension() != ".bl")
			continue;
		std::ifstream in(entry.path());
		std::stringstream text;
		text << in.rdbuf();
		const auto p = parse_buddy_program(text.str(), nullptr);
		if (!p)
			continue;
		const BuddyVerdict reused = run_buddy_program(*p);
		ASSERT_NE(restored_buddy_arena(), nullptr) << "FL_MACHINE_REUSE=0 in the environment";
		BuddyVerdict fresh;
		{
			arena::Scope scratch(&arena::thread_arena());
			ASSERT_EQ(restored_buddy_arena(), nullptr);
			fresh = run_buddy_program(*p);
			arena::Pause heap;
			fresh = BuddyVerdict(fresh);  // on the heap: the next restore drops the scratch
		}
		const std::string name = entry.path().string();
		EXPECT_EQ(reused.ok, fresh.ok) << name;
		EXPECT_EQ(reused.what, fresh.what) << name;
		EXPECT_EQ(reused.trace, fresh.trace) << name;
		EXPECT_EQ(reused.results, fresh.results) << name;
		EXPECT_EQ(reused.spans, fresh.spans) << name;
		EXPECT_EQ(reused.between, fresh.between) << name;
		EXPECT_EQ(reused.linearize_note, fresh.linearize_note) << name;
		programs++;
		concurrent += p->concurrent;
		findings += !reused.ok;
	}
	EXPECT_GE(programs, 20u);
	EXPECT_GE(concurrent, 5u);
	EXPECT_GE(findings, 1u);  // the findings corpus: violations compared too
}

}  // namespace
}  // namespace fl::libarena
