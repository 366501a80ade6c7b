// SPDX-License-Identifier: GPL-2.0-only
// Kernel-shaped base definitions for the port: integer types, page geometry,
// errnos and the arithmetic helpers the ported code uses. Compiled once per
// unsigned-long width: FL_BITS=32 puts everything in fl::arch32, FL_BITS=64
// in fl::arch64. Where FL_BITS is the host's own width, `ulong` is the real
// `unsigned long` (the -m32 build runs the 32-bit port natively).
#pragma once

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>

#include "base/config.h"

#if !defined(FL_BITS) || (FL_BITS != 32 && FL_BITS != 64)
#error "compile the kernel port with -DFL_BITS=32 or -DFL_BITS=64"
#endif

#if defined(FL_SYMBOLIC)  /* the symbolic build links beside the concrete one */
#define FL_ARCH_NS FL_SYM_ARCH_NS(FL_BITS)
#define FL_SYM_ARCH_NS(b) FL_SYM_ARCH_NS_(b)
#define FL_SYM_ARCH_NS_(b) sym_arch##b
#elif FL_BITS == 32
#define FL_ARCH_NS arch32
#else
#define FL_ARCH_NS arch64
#endif

#if defined(FL_SYMBOLIC)
#include "symbolic/word.h"
#endif

namespace fl::FL_ARCH_NS {

#if defined(FL_SYMBOLIC)
// The symbolic build (smt/port/): the same widths as exact Z3 terms.
typedef ::fl::sym::Word<FL_BITS> ulong;
typedef ::fl::sym::Word<32> u32;
typedef ::fl::sym::Word<64> u64;
using ::fl::sym::min;
using ::fl::sym::max;
using ::fl::sym::min3;
#elif FL_BITS == __SIZEOF_LONG__ * 8
typedef unsigned long ulong;
#elif FL_BITS == 32
typedef uint32_t ulong;
#else
typedef uint64_t ulong;
#endif
#if !defined(FL_SYMBOLIC)
typedef uint32_t u32;
typedef uint64_t u64;
#endif
typedef uint8_t u8;  /* bytes are data, never symbolic */
// A kernel constant of an integer typedef (flags, sizes): in the symbolic
// build the plain integer of that width, since a constant is never symbolic
#if defined(FL_SYMBOLIC)
#define KCONST(T) constexpr ::fl::sym::number_t<T>
#else
#define KCONST(T) constexpr T
#endif
typedef int64_t s64;
typedef long long loff_t;
typedef ulong pgoff_t;
// The kernel's size_t is as wide as its unsigned long; shadow ::size_t here.
typedef ulong size_t;
typedef ulong vm_flags_t;
typedef unsigned int fmode_t;
typedef unsigned int vm_fault_t;

#define BITS_PER_LONG FL_BITS
#undef ULONG_MAX  /* the port's width, not the host's */
#define ULONG_MAX ((ulong)~(ulong)0)
#define SIZE_MAX_K ULONG_MAX  /* size_t is unsigned long wide in the kernel */
#define INT_MAX_K 0x7fffffff

// The running kernel's compile-time knobs. The port reads them through the
// usual macros; the machine points `kcfg` at its own config on every entry,
// so two machines (eager and lazy) can run in lockstep on one thread.
struct kernel_config {
	unsigned int page_shift;
	bool bypass_spec_v1;
	Door door;
	Patch patch;
	Historic historic;  /* a historical bug level (interleave tests), normally none */
	ArenaFix arena;
};
extern thread_local constinit const kernel_config *kcfg;  /* constinit: no per-use init check */

#define PAGE_SHIFT (kcfg->page_shift)
#define PAGE_SIZE ((ulong)1 << PAGE_SHIFT)
#define PAGE_MASK (~(PAGE_SIZE - 1))
// PTRS_PER_PTE: one page of PTEs (8-byte PTEs on 64-bit, 4-byte on i386 non-PAE).
#define PTRS_PER_PTE (PAGE_SIZE / (BITS_PER_LONG / 8))

// include/linux/align.h: ALIGN keeps the type of its first argument.
template <class T, class A> constexpr T ALIGN(T x, A a) { return (x + ((T)a - 1)) & ~((T)a - 1); }
template <class T, class A> constexpr T ALIGN_DOWN(T x, A a) { return x & ~((T)a - 1); }
template <class T> inline T PAGE_ALIGN(T addr) { return ALIGN(addr, PAGE_SIZE); }
template <class T> inline bool PAGE_ALIGNED(T addr) { return (addr & ((T)PAGE_SIZE - 1)) == 0; }
template <class T> inline T offset_in_page(T p) { return p & ~(T)PAGE_MASK; }
template <class T, class A> constexpr T round_up(T x, A a) { return ((x - 1) | ((T)a - 1)) + 1; }
template <class T, class A> constexpr T round_down(T x, A a) { return x & ~((T)a - 1); }
template <class T> constexpr T min(T a, T b) { return a < b ? a : b; }
template <class T> constexpr T max(T a, T b) { return a > b ? a : b; }
template <class T> constexpr T min3(T a, T b, T c) { return min(min(a, b), c); }

#if defined(FL_SYMBOLIC)
using ::fl::sym::fls_long;  /* symbolic/word.h: the same helpers over Words */
using ::fl::sym::check_shl_overflow;
using ::fl::sym::check_add_overflow;
#else
// include/asm-generic/bitops/fls64.h + fls_long: 1-based index of the last set bit.
inline unsigned int fls_long(ulong l)
{
	return l ? 64 - __builtin_clzll((unsigned long long)l) : 0;
}

// include/linux/overflow.h
template <class T, class S> inline bool check_shl_overflow(T a, S s, T *d)
{
	unsigned long long a_full = a;
	unsigned int to_shift = s < 8 * sizeof(*d) ? s : 0;
	*d = (T)(a_full << to_shift);
	return to_shift != s || (*d >> to_shift) != a;
}
template <class T> inline bool check_add_overflow(T a, T b, T *d)
{
	return __builtin_add_overflow(a, b, d);
}
#endif

// include/linux/err.h, for functions that return an address or -errno.
#define MAX_ERRNO 4095
inline bool IS_ERR_VALUE(ulong x) { return x >= (ulong)-MAX_ERRNO; }

template <class T> T *ERR_PTR(long error) { return reinterpret_cast<T *>((uintptr_t)(intptr_t)error); }
inline bool IS_ERR(const void *ptr) { return (uintptr_t)ptr >= (uintptr_t)-MAX_ERRNO; }
inline long PTR_ERR(const void *ptr) { return (long)(intptr_t)ptr; }

#define ENOTSUPP 524  /* kernel-internal, reaches user space from bpf_map_mmap */

#if defined(FL_SYMBOLIC)
#define BUG_ON(cond) do { if (cond) ::fl::sym::bug(__FILE__, __LINE__); } while (0)  /* the path ends */
#else
#define BUG_ON(cond) do { if (cond) __builtin_trap(); } while (0)
#endif
#define WARN_ON_ONCE(cond) (cond)  /* the port has no warn-once state: the condition */
#define SZ_4G ((u64)1 << 32)

}  // namespace fl::FL_ARCH_NS
