// SPDX-License-Identifier: GPL-2.0-only
// Fuzz target `buddy`: bytes -> an allocator Program (src/libarena/buddy_program.h)
// at the build's libarena level (-DFL_BUDDY_LEVEL="before" | "nmi_deferred" |
// "ret_overwrite") -> run on a fresh port arena with the shadow model and
// invariants I1-I12 after every op and at every NMI point. Aborts, printing
// the Program's text form, on the first violation.
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
	for (buddy_level l : {buddy_level::before, buddy_level::nmi_deferred, buddy_level::ret_overwrite})
		if (!std::strcmp(FL_BUDDY_LEVEL, fl::libarena::to_string(l)))
			return l;
	std::fprintf(stderr, "faultline fuzz: bad FL_BUDDY_LEVEL '%s'\n", FL_BUDDY_LEVEL);
	std::exit(2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const fl::libarena::buddy_level level = build_level();
	const fl::libarena::BuddyProgram p = fl::libarena::decode_buddy_program(data, size, level);
	const fl::libarena::BuddyVerdict v = fl::libarena::run_buddy_program(p);
	if (v.ok)
		return 0;
	std::fprintf(stderr, "faultline: verdict: violation at op %zu: %s\n%s", v.op + 1, v.what.c_str(),
		     fl::libarena::format_buddy_program(p).c_str());
	std::abort();
}
