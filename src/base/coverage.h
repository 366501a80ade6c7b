// SPDX-License-Identifier: GPL-2.0-only
// FL_NO_COVERAGE: a function of the machine's own bookkeeping (the shim
// containers behind the port's page tables and struct pages, the invariant
// checker's page list) that the fuzzers' coverage leaves out, as
// fuzz/coverage.allowlist leaves out whole files: its edges and comparisons
// say nothing about the kernel path, yet the eager `pre` reference ran them,
// a libFuzzer trace-cmp callback each, for every PTE it inserts.
// - Inline functions need the mark too: the linker keeps one copy, the
//   instrumented one from a port file, even where the checker calls it.
// - Never inlined: sancov runs after inlining, so a copy inlined into a port
//   function would be instrumented with it. Hence only on functions that
//   take no callback (port code inlined into one would lose its coverage).
// - Only where clang's own sancov reads it (-fsanitize=fuzzer, libFuzzer):
//   AFL++'s PCGUARD pass (Debian's, clang 14) instruments these functions
//   all the same, and there noinline would cost calls for nothing.
// Sanitizers (ASan, UBSan) stay on everywhere.
#pragma once

// FL_NO_COVERAGE_INLINE: always inlined, for helpers whose only callers are
// FL_NO_COVERAGE functions (an out-of-line call at each of them cost more
// than the helper itself).
#if defined(__clang__)
#if __has_feature(coverage_sanitizer)
#define FL_NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))
#define FL_NO_COVERAGE_INLINE __attribute__((no_sanitize("coverage"), always_inline)) inline
#endif
#endif
#if !defined(FL_NO_COVERAGE)
#define FL_NO_COVERAGE
#define FL_NO_COVERAGE_INLINE inline
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

// The fuzzers' edge counters, where a fuzz build has them (weak: null in
// every other build). libFuzzer's inline 8-bit counters lie between the
// linker's __start_/__stop___sancov_cntrs; AFL++ keeps its map at
// __afl_area_ptr, __afl_map_size bytes long, of which its edges use the
// first __afl_final_loc + 1 (outside afl-fuzz the map is 2 MB).
extern "C" {
extern uint8_t __start___sancov_cntrs[] __attribute__((weak));
extern uint8_t __stop___sancov_cntrs[] __attribute__((weak));
extern uint8_t *__afl_area_ptr __attribute__((weak));
extern uint32_t __afl_map_size __attribute__((weak));
extern uint32_t __afl_final_loc __attribute__((weak));
}

namespace fl {

// A scope whose edges the fuzzers do not see: the counters are saved on
// entry and put back on exit. For a checker that replays the run's own
// code (the linearizability search runs candidate orders through the
// allocator and the port the Program ran): the fuzzers count a PC's hits
// in buckets (1, 2, 3, 4-7, ... 128+), so every replay lifted the run's
// counters into higher buckets - features that measure how hard the check
// worked, not what the Program did, and inputs kept for them (inputs that
// make the check work harder). Loading a grown buddy-series corpus
// (1,549 inputs) saw 2,990 PCs and 16,200 features and kept 1,126 inputs;
// with the replays unobserved, 2,463, 12,047 and 851: 527 PCs only a
// candidate order reached (#37). Comparisons inside still reach
// libFuzzer's table of recent compares: mutation hints, not features.
// The counters are the process's: a thread running beside the scope would
// lose what it counted meanwhile (the fuzz targets run one thread).
class CoverageUnobserved {
public:
	CoverageUnobserved()
	{
		const uint8_t *begin = __start___sancov_cntrs, *end = __stop___sancov_cntrs;
		if (begin && end > begin)
			counters_.assign(begin, end);
		if (&__afl_area_ptr && __afl_area_ptr && &__afl_map_size)
			afl_.assign(__afl_area_ptr, __afl_area_ptr + afl_edges());
	}
	~CoverageUnobserved()
	{
		if (!counters_.empty())
			std::memcpy(__start___sancov_cntrs, counters_.data(), counters_.size());
		if (!afl_.empty())
			std::memcpy(__afl_area_ptr, afl_.data(), afl_.size());
	}
	CoverageUnobserved(const CoverageUnobserved &) = delete;
	CoverageUnobserved &operator=(const CoverageUnobserved &) = delete;

private:
	// The bytes of AFL++'s map its edges use.
	static uint32_t afl_edges()
	{
		if (!&__afl_final_loc || !__afl_final_loc)
			return __afl_map_size;
		return std::min(__afl_map_size, __afl_final_loc + 1);
	}

	std::vector<uint8_t> counters_, afl_;
};

}  // namespace fl
