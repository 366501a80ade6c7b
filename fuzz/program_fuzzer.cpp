// SPDX-License-Identifier: GPL-2.0-only
// Fuzz target `program`: bytes -> Program (the binary decoding) -> run on the
// build's configuration in lockstep with `pre` at the same width, page size
// and door. Aborts, naming the invariant, on a violation or an unexpected
// difference. No state survives an input (a fresh machine per run).
#include <cstdio>
#include <cstdlib>

#include "check/differential.h"
#include "check/program_binary.h"
#include "check/program_text.h"
#include "fuzz_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fl::Program p = fl::decode_program(data, size);
	fl::RunReport r = fl::run_differential(p, fl::fuzz::build_config());
	if (r.verdict.kind == fl::Verdict::ok)
		return 0;
	std::fprintf(stderr, "faultline: verdict: %s: %s\n%s", r.verdict.str().c_str(), r.verdict.detail.c_str(),
		     fl::format_program(p).c_str());
	std::abort();
}
