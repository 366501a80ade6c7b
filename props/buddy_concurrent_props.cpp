// SPDX-License-Identifier: GPL-2.0-only
// The concurrent property of libarena's buddy allocator: RapidCheck draws a
// list of numbers, generate_buddy_case (src/libarena/buddy_generate.h)
// reads a concurrent Program (CPUs 0-3, NMIs between ops or at any named
// point, handler blocks of several calls and nested ones, joins, stores,
// drains, every order) and its schedule (byte picks, lock failures, NMI
// placements) from it, and the Program runs once under that schedule with the explorer's
// checks (run_buddy_program: lockset, lockdep, the invariants at every
// point, linearizability). Shrinking the list shrinks the Program and the
// schedule together. Quiet on before, nmi_deferred and series; on
// guard_leak it must be falsified from scratch, and the counterexample,
// written as .bl text with the schedule the run took, must replay (as
// `buddy-explore --replay` does) to the same verdict.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include "base/sched/strategy.h"
#include "libarena/buddy_generate.h"
#include "libarena/buddy_runner.h"

namespace fl::libarena {
namespace {

// The decisions: a list whose length and numbers grow with RapidCheck's size.
rc::Gen<std::vector<u32>> gen_choices()
{
	return rc::gen::scale(2.5, rc::gen::container<std::vector<u32>>(rc::gen::arbitrary<u32>()));
}

struct Ran {
	BuddyProgram program;  // with the schedule the run took, as records
	BuddyVerdict verdict;
};

Ran run_case(const std::vector<u32> &choices, buddy_level level)
{
	ListedChoices c(choices);
	BuddyCase k = generate_buddy_case(c, level);
	sched::ByteSchedule s(k.picks, k.events);
	Ran r{k.program, run_buddy_program(k.program, s)};
	r.program.schedule = r.verdict.records;
	return r;
}

std::string show(const Ran &r) { return r.verdict.what + "\n" + format_buddy_program(r.program); }

// The property at `level`: false if RapidCheck falsified it; *last is the
// last failing case (the shrunk one when shrinking is on).
bool check_level(buddy_level level, std::optional<Ran> *last = nullptr)
{
	rc::detail::TestMetadata md;
	md.id = std::string("BuddyConcurrent/") + to_string(level);
	md.description = md.id;
	const rc::detail::TestResult result = rc::detail::checkTestable(
		[&] {
			Ran r = run_case(*gen_choices(), level);
			RC_ASSERT(!r.verdict.bad_input);  // the generator writes only runnable Programs
			if (!r.verdict.ok) {
				if (last)
					*last = r;
				RC_FAIL(show(r));
			}
		},
		md);
	rc::detail::printResultMessage(result, std::cout);
	std::cout << std::endl;
	rc::detail::FailureResult failure;
	return !result.match(failure);
}

TEST(BuddyConcurrent, BeforeQuiet) { EXPECT_TRUE(check_level(buddy_level::before)); }
TEST(BuddyConcurrent, NmiDeferredQuiet) { EXPECT_TRUE(check_level(buddy_level::nmi_deferred)); }
TEST(BuddyConcurrent, SeriesQuiet) { EXPECT_TRUE(check_level(buddy_level::series)); }

// guard_leak (H's fast free leaves the CPU's guard set), from scratch: found,
// and the counterexample's text alone replays to the same verdict and trace.
TEST(BuddyConcurrent, FindsGuardLeakAndReplays)
{
	const auto t0 = std::chrono::steady_clock::now();
	std::optional<Ran> last;
	ASSERT_FALSE(check_level(buddy_level::guard_leak, &last)) << "guard_leak was not found";
	ASSERT_TRUE(last);
	std::printf("guard_leak found in %.2f s:\n%s",
		    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), show(*last).c_str());
	std::string err;
	auto parsed = parse_buddy_program(format_buddy_program(last->program), &err);
	ASSERT_TRUE(parsed) << err;
	const BuddyVerdict again = run_buddy_program(*parsed);
	EXPECT_FALSE(again.ok);
	EXPECT_EQ(again.what, last->verdict.what);
	EXPECT_EQ(again.op, last->verdict.op);
	EXPECT_EQ(again.trace_hash, last->verdict.trace_hash);
}

}  // namespace
}  // namespace fl::libarena
