// SPDX-License-Identifier: GPL-2.0-only
// Fuzz target `arena`: bytes -> an arena Program (src/check/arena_program_binary.h,
// with the arena kfuncs) -> run on the build's configuration, whose sixth
// part names the arena's historical level ("pre/arch64/4k/anon/mask/fork_uaf").
// Aborts, naming the invariant, on any violation (use_after_free from the
// port's KASAN, a PTE left on a freed arena page, ...). A fresh machine per run.
#include <cstdio>
#include <cstdlib>

#include "check/arena_program_binary.h"
#include "check/execution.h"
#include "check/program_text.h"
#include "fuzz_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fl::Program p = fl::decode_arena_program(data, size, true);
	fl::Execution e(p, fl::fuzz::build_config());
	while (!e.done())
		e.step();
	if (!e.violation())
		return 0;
	std::fprintf(stderr, "faultline: verdict: violation %s at op %zu (%s): %s\n%s",
		     fl::to_string(e.violation().what), e.violation_op() + 1,
		     fl::fuzz::build_config().name().c_str(), e.violation().detail.c_str(),
		     fl::format_program(p).c_str());
	std::abort();
}
