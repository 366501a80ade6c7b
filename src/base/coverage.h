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
// (ASan, UBSan) stay on; only clang's sancov (libFuzzer, AFL++'s PCGUARD)
// reads the attribute.
#pragma once

#if defined(__clang__)
#define FL_NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))
#else
#define FL_NO_COVERAGE
#endif
