// SPDX-License-Identifier: GPL-2.0-only
// Fuzz target `program`: bytes -> Program (the binary decoding) -> run on the
// build's configuration in lockstep with `pre` at the same width, page size
// and door. Aborts, naming the invariant, on a violation or an unexpected
// difference. No state survives an input: the thread's Workspace restores
// its machines to their state right after construction before every run
// (check/workspace.h; FL_MACHINE_REUSE=0: a fresh pair per run).
//
// Built with a config ending in "threads" (the fixed kernel) or a historical
// level ("v2/arch64/4k/anon/mask/toctou_2021"), it is the interleaving
// fuzzer: bytes -> a Program whose last ops run concurrently plus a schedule
// (decode_concurrent: ops and schedule mutate together) -> one run under the
// deterministic scheduler. Lock hand-offs and chosen switches, as label
// pairs, are libFuzzer extra counters, so an input that makes a new
// hand-off is kept. A finding is printed as the text Program with the
// label-anchored schedule it took, replayed once first.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "base/sched/strategy.h"
#include "check/differential.h"
#include "check/interleave/explore.h"
#include "check/program_binary.h"
#include "check/program_text.h"
#include "check/workspace.h"
#include "fuzz_config.h"

namespace {

constexpr size_t kPairCounters = 1 << 12;
// libFuzzer reads (and clears before every input) this section as extra
// coverage; without libFuzzer it is an ordinary array.
__attribute__((section("__libfuzzer_extra_counters"), used)) uint8_t g_pairs[kPairCounters];

void count_pair(uint32_t from, uint32_t to)
{
	uint32_t h = (from * 0x9e3779b1u) ^ (to * 0x85ebca6bu + 0x165667b1u);
	uint8_t &c = g_pairs[(h ^ (h >> 15)) % kPairCounters];
	if (c < 255)
		c++;
}

int concurrent(const uint8_t *data, size_t size)
{
	static const bool hooked = (fl::sched::set_pair_hook(count_pair), true);
	(void)hooked;
	const fl::Config &cfg = fl::fuzz::build_config();
	// The run and its linearizability candidates build their machines in the
	// thread's arena (a bump, where ASan's malloc records a stack per block),
	// and the next input drops them all at once (check/workspace.h).
	std::optional<fl::arena::Scope> in_arena;
	if (fl::machine_reuse() && !fl::arena::active()) {
		fl::arena::thread_arena().begin_freeze();
		in_arena.emplace(&fl::arena::thread_arena());
	}
	fl::ConcurrentInput in = fl::decode_concurrent(data, size);
	fl::sched::ByteSchedule schedule(in.schedule, fl::sched::ByteSchedule::failing(in.fail_events));
	fl::interleave::ScheduleOutcome o = fl::interleave::run_schedule(in.program, cfg, schedule);
	if (!o.finding())
		return 0;
	fl::Program found = fl::interleave::finding_program(in.program, cfg, o);
	fl::sched::Replay replay(found.schedule);
	fl::interleave::ScheduleOutcome again = fl::interleave::run_schedule(found, cfg, replay);
	const bool replays = again.verdict() == o.verdict() && again.sched.trace_hash == o.sched.trace_hash;
	std::string verdict = o.verdict();  // one line: the Program follows it
	for (char &c : verdict)
		c = c == '\n' ? ' ' : c;
	std::fprintf(stderr, "faultline: verdict: %s (%s)%s\n%s", verdict.c_str(), cfg.name().c_str(),
		     replays ? "" : " [the schedule does not replay]", fl::format_program(found).c_str());
	std::abort();
}

}  // namespace

// Before the first input (libFuzzer, and AFL++'s driver before its fork
// server): the workspace is built, and a few Programs run on it, so that
// what happens once per process (building the machines, first uses of
// function-local statics) is not part of any input's run: the same input
// takes the same edges every time (AFL++ stability).
extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	if (fl::fuzz::build_concurrent())
		return 0;
	if (fl::Workspace *ws = fl::Workspace::of(fl::fuzz::build_config()))
		for (uint8_t seed = 0; seed < 64; seed++) {
			uint8_t bytes[48];
			for (size_t i = 0; i < sizeof bytes; i++)
				bytes[i] = uint8_t(seed * 37 + i * 101);
			ws->run_in_arena(fl::decode_program(bytes, sizeof bytes));  // verdicts ignored
		}
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fl::fuzz::build_concurrent())
		return concurrent(data, size);
	// Everything from the decoding on lives in the workspace's arena (no
	// malloc per input), until the next input's session drops it.
	std::optional<fl::Workspace::Session> session;
	if (fl::Workspace *ws = fl::Workspace::of(fl::fuzz::build_config()))
		session.emplace(*ws);
	fl::Program p = fl::decode_program(data, size);
	const fl::RunReport r = session ? fl::run_differential(p, session->test(), session->reference())
					: fl::run_differential(p, fl::fuzz::build_config());
	if (r.verdict.kind == fl::Verdict::ok)
		return 0;
	std::fprintf(stderr, "faultline: verdict: %s: %s\n%s", r.verdict.str().c_str(), r.verdict.detail.c_str(),
		     fl::format_program(p).c_str());
	std::abort();
}
