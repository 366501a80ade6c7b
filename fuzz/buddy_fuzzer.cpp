// SPDX-License-Identifier: GPL-2.0-only
// Fuzz target `buddy`: bytes -> an allocator Program (src/libarena/buddy_program.h)
// at the build's libarena level (-DFL_BUDDY_LEVEL="before" | "nmi_deferred" |
// "ret_overwrite" | "series" | "guard_leak") -> run on a fresh port arena
// with the shadow model and invariants I1-I12 after every op and at every
// named point. At the series levels an input whose first byte is 0 mod 4
// is concurrent: its CPUs run as scheduler tasks under a ByteSchedule
// decoded from its last bytes ((delta, target) pairs, as the program
// target's). Aborts, printing the Program's text form (with the schedule
// it took), on the first violation.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/sched/strategy.h"
#include "libarena/buddy_runner.h"

#if !defined(FL_BUDDY_LEVEL) && defined(FL_FUZZ_CONFIG)
#define FL_BUDDY_LEVEL FL_FUZZ_CONFIG  /* fuzz/build.sh passes the level as the configuration */
#endif
#ifndef FL_BUDDY_LEVEL
#error "build the buddy target with -DFL_BUDDY_LEVEL=\"before\" (or nmi_deferred, ret_overwrite)"
#endif

namespace {

fl::libarena::buddy_level build_level()
{
	using fl::libarena::buddy_level;
	for (buddy_level l : fl::libarena::kBuddyLevels)
		if (!std::strcmp(FL_BUDDY_LEVEL, fl::libarena::to_string(l)))
			return l;
	std::fprintf(stderr, "faultline fuzz: bad FL_BUDDY_LEVEL '%s'\n", FL_BUDDY_LEVEL);
	std::exit(2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const fl::libarena::buddy_level level = build_level();
	const bool concurrent = fl::libarena::has_caches(level) && size > 2 && data[0] % 4 == 0;
	std::vector<std::pair<uint32_t, uint8_t>> picks;
	if (concurrent) {  // the last bytes: up to 8 (delta, target) pairs
		const size_t n = std::min<size_t>(8, (size - 1) / 4);
		for (size_t i = 0; i < n; i++)
			picks.emplace_back(data[size - 2 * n + 2 * i] % 16, data[size - 2 * n + 2 * i + 1]);
		size -= 2 * n;
	}
	fl::libarena::BuddyProgram p = fl::libarena::decode_buddy_program(data, size, level);
	p.concurrent = concurrent;
	fl::sched::ByteSchedule schedule(picks);
	fl::libarena::BuddyVerdict v =
		concurrent ? fl::libarena::run_buddy_program(p, schedule) : fl::libarena::run_buddy_program(p);
	if (v.ok)
		return 0;
	p.schedule = v.records;
	std::fprintf(stderr, "faultline: verdict: violation at op %zu: %s\n%s", v.op + 1, v.what.c_str(),
		     fl::libarena::format_buddy_program(p).c_str());
	std::abort();
}
