// SPDX-License-Identifier: GPL-2.0-only
// The runner's shortcuts give the verdicts of the runs without them (the
// point checks' reuse, the linearizability candidates' resuming): every
// text Program of corpora/buddy (findings included) and generated
// concurrent Programs under their generated schedules, run with each
// shortcut on and off, the verdicts compared field by field.
#include <gtest/gtest.h>

#include <functional>

#include "base/sched/strategy.h"
#include "libarena/buddy_generate.h"
#include "libarena/buddy_runner.h"
#include "buddy_testing.h"

namespace fl::libarena {
namespace {

// name -> a run of the Program under its schedule (a fresh strategy per run).
using Runs = std::vector<std::pair<std::string, std::function<BuddyVerdict()>>>;

Runs corpus_and_generated()
{
	Runs runs;
	for (const auto &entry : buddy_corpus_programs())
		runs.emplace_back(entry.first, [p = entry.second] { return run_buddy_program(p); });
	for (buddy_level level : {buddy_level::before, buddy_level::nmi_deferred, buddy_level::series}) {
		for (uint64_t seed = 1; seed <= 30; seed++) {
			SeededChoices choices(seed);
			const BuddyCase c = generate_buddy_case(choices, level);
			runs.emplace_back(std::string(to_string(level)) + " seed " + std::to_string(seed), [c] {
				sched::ByteSchedule s(c.picks, c.events);
				return run_buddy_program(c.program, s);
			});
		}
	}
	return runs;
}

// Each run with the shortcut on and off (`set`), compared; at least one failing.
void expect_same_verdicts(void (*set)(bool))
{
	size_t runs = 0, findings = 0;
	for (const auto &[name, run] : corpus_and_generated()) {
		set(false);
		const BuddyVerdict off = run();
		set(true);
		const BuddyVerdict on = run();
		expect_same_verdict(on, off, name);
		runs++;
		findings += !off.ok;
	}
	EXPECT_GE(runs, 110u);
	EXPECT_GE(findings, 1u);  // the findings corpus: violations compared too
}

TEST(BuddyRunner, PointChecksSkipNoStateTheyHaveNotPassed)
{
	expect_same_verdicts(set_buddy_point_check_reuse);
}

// A linearizability candidate resumed from the state its order shares with
// the last one run gives what it gives from the start (BuddyCandidates).
TEST(BuddyLinearize, ResumedCandidatesGiveTheVerdictsOfFreshOnes)
{
	expect_same_verdicts([](bool on) { set_buddy_candidate_resume(on ? BuddyResume::on : BuddyResume::off); });
}

}  // namespace
}  // namespace fl::libarena
