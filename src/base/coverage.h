// SPDX-License-Identifier: GPL-2.0-only
// FL_NO_COVERAGE: a function of the machine's own bookkeeping (the shim
// containers behind the port's page tables and struct pages, the invariant
// checker's page list) that the fuzzers' coverage leaves out, like every
// file fuzz/coverage.allowlist leaves out. Its edges and comparisons say
// nothing about the kernel path, yet they ran once per PTE: the eager `pre`
// reference's remap_vmalloc_range() paid a libFuzzer trace-cmp callback for
// every comparison of every table lookup. An inline function needs the mark
// in its own right: the linker keeps one copy of it, and it is the
// instrumented one from a port file even where an uninstrumented file (the
// checker) calls it. And it is never inlined: instrumentation runs after
// inlining, so a copy inlined into a port function is instrumented as part
// of it. Hence only on entry points that take no callback (a callback is
// port code, and would lose its coverage inlined into one). Sanitizers
// (ASan, UBSan) stay on. Only clang's own sancov (-fsanitize=fuzzer,
// libFuzzer) reads the attribute, so only there is it set: AFL++'s PCGUARD
// pass (Debian's, with clang 14) instruments these functions all the same
// (a counter per edge; comparisons only in its CMPLOG twin), and there a
// noinline would cost calls for nothing.
#pragma once

#if defined(__clang__)
#if __has_feature(coverage_sanitizer)
#define FL_NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))
#endif
#endif
#if !defined(FL_NO_COVERAGE)
#define FL_NO_COVERAGE
#endif
