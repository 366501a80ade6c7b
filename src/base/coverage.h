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

#if defined(__clang__)
#if __has_feature(coverage_sanitizer)
#define FL_NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))
#endif
#endif
#if !defined(FL_NO_COVERAGE)
#define FL_NO_COVERAGE
#endif
