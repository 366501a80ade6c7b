// SPDX-License-Identifier: GPL-2.0-only
// Fuzz target `buddy`: bytes -> an allocator Program (src/libarena/buddy_program.h)
// at the binary's libarena level (its name, buddy-<level>, or FL_FUZZ_CONFIG:
// "before" | "nmi_deferred" | "ret_overwrite" | "series" | "guard_leak") -> run on a fresh port arena
// with the shadow model and invariants I1-I12 after every op and at every
// named point. Past `before` (the nmi and series levels) an input whose
// first byte is 0 mod 4 is concurrent: its CPUs run as scheduler tasks under a ByteSchedule
// decoded from its last bytes ((delta, target) pairs, as the program
// target's), with up to two lock failures or NMI placements (the first
// byte's bits 2-3 say how many; each a (question, answer) pair before the
// picks), and one time in four (the first delta byte's bits 4-5, which the
// delta leaves unused) a point at every arena access (BuddyProgram::
// access_points; not at the nmi levels). Aborts, printing the Program's
// text form (with the schedule it took), on the first violation. Under AFL++ (afl-clang-fast++,
// ./faultline fuzz --engine afl --target buddy) each input runs twice and
// the first run's coverage is discarded, which keeps stability at 100 %.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "base/sched/strategy.h"
#include "fuzz_config.h"
#include "libarena/buddy_runner.h"

namespace {

fl::libarena::buddy_level build_level()
{
	using fl::libarena::buddy_level;
	const std::string &level = fl::fuzz::config_text();
	for (buddy_level l : fl::libarena::kBuddyLevels)
		if (level == fl::libarena::to_string(l))
			return l;
	fl::fuzz::bad_config("bad libarena level '" + level + "'");
}

// One input: the Program (with the schedule it took) and its verdict.
struct Outcome {
	fl::libarena::BuddyProgram program;
	fl::libarena::BuddyVerdict verdict;
};

Outcome run_input(const uint8_t *data, size_t size)
{
	static const fl::libarena::buddy_level level = build_level();
	const bool concurrent = level != fl::libarena::buddy_level::before && size > 2 && data[0] % 4 == 0;
	std::vector<std::pair<uint32_t, uint8_t>> picks;
	std::map<uint64_t, int> events;  // fail/NMI question -> answer (ByteSchedule)
	bool access_points = false;
	if (concurrent) {  // the last bytes: up to 8 (delta, target) pairs
		const size_t n = std::min<size_t>(8, (size - 1) / 4);
		for (size_t i = 0; i < n; i++)
			picks.emplace_back(data[size - 2 * n + 2 * i] % 16, data[size - 2 * n + 2 * i + 1]);
		access_points = n && (data[size - 2 * n] & 0x30) == 0x30;
		size -= 2 * n;
		for (size_t e = (data[0] >> 2) % 4; e && size > 4; e--, size -= 2)
			events[data[size - 2] % 32] = 1 + data[size - 1] % 4;
	}
	Outcome o{fl::libarena::decode_buddy_program(data, size, level), {}};
	o.program.concurrent = concurrent;
	o.program.access_points = access_points && fl::libarena::takes_access_points(level);
	fl::sched::ByteSchedule schedule(picks, events);
	o.verdict = concurrent ? fl::libarena::run_buddy_program(o.program, schedule)
			       : fl::libarena::run_buddy_program(o.program);
	return o;
}

}  // namespace

#ifdef __AFL_COMPILER
__AFL_COVERAGE();
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef __AFL_COMPILER
	// AFL++ re-runs inputs to measure stability, and a process's first run
	// through a scheduling-point site (its label is interned once) or a
	// fiber stack (pooled) takes paths no later run takes: warm them with a
	// first run whose coverage is discarded, and measure the second.
	(void)run_input(data, size);
	__AFL_COVERAGE_DISCARD();
#endif
	Outcome o = run_input(data, size);
	if (o.verdict.ok)
		return 0;
	o.program.schedule = o.verdict.records;
	std::fprintf(stderr, "faultline: verdict: violation at op %zu: %s\n%s", o.verdict.op + 1, o.verdict.what.c_str(),
		     fl::libarena::format_buddy_program(o.program).c_str());
	std::abort();
}
