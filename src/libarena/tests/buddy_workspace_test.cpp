// SPDX-License-Identifier: GPL-2.0-only
// The restored arena (buddy_workspace.h) gives the verdicts a fresh one
// gives: every text Program of corpora/buddy, run twice, once reusing the
// thread's arena and once on arenas of its own (inside an arena scope already
// open, where reuse steps aside), the linearizability candidates included.
#include <gtest/gtest.h>

#include "base/arena.h"
#include "libarena/buddy_workspace.h"
#include "buddy_testing.h"

namespace fl::libarena {
namespace {

TEST(BuddyWorkspace, ReusedArenaGivesTheVerdictsOfFreshOnes)
{
	size_t programs = 0, concurrent = 0, findings = 0;
	for (const auto &[name, program] : buddy_corpus_programs()) {
		const BuddyVerdict reused = run_buddy_program(program);
		ASSERT_NE(restored_buddy_arena(), nullptr) << "FL_MACHINE_REUSE=0 in the environment";
		BuddyVerdict fresh;
		{
			arena::Scope scratch(&arena::thread_arena());
			ASSERT_EQ(restored_buddy_arena(), nullptr);
			fresh = run_buddy_program(program);
			arena::Pause heap;
			fresh = BuddyVerdict(fresh);  // on the heap: the next restore drops the scratch
		}
		expect_same_verdict(reused, fresh, name);
		programs++;
		concurrent += program.concurrent;
		findings += !reused.ok;
	}
	EXPECT_GE(programs, 20u);
	EXPECT_GE(concurrent, 5u);
	EXPECT_GE(findings, 1u);  // the findings corpus: violations compared too
}

}  // namespace
}  // namespace fl::libarena
