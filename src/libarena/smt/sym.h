// SPDX-License-Identifier: GPL-2.0-only
// C unsigned integers as Z3 bit-vectors of the same width, so that the
// allocator's own index arithmetic (libarena/buddy_index.h, templated over
// a word family) runs symbolically: bv<8>, bv<32>, bv<64> are u8, u32, u64.
// Arithmetic wraps as C's does (bit-vector + - * << are mod 2^N), mixed
// widths zero-extend to the wider operand (C's usual conversions between
// unsigned types), a cast truncates or zero-extends, and an integer
// literal takes the other operand's width (every literal in the port's
// arithmetic fits it; C would widen a u8 to int first, but each such
// expression is truncated back to u8 before it is compared).
//
// Branches: a symbolic condition in an `if`, `?:` or `while` forks. The
// Paths explorer re-runs the obligation once per sequence of decisions
// (depth first), each run recording its path condition, so the port's
// control flow stays as written. Bit-vectors, not the Int encoding of
// smt/uint.h: these obligations are XOR, masks and fls, which are native
// to bit-vectors and decide in milliseconds.
#pragma once

#include <z3++.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

namespace fl::libarena::smt {

// The context every symbolic value lives in (one per process).
z3::context &ctx();

// The explorer: decide() is where a branch on a symbolic condition forks.
class Paths {
public:
	struct Path {
		z3::expr cond;    // the decisions taken, as one Bool
		z3::expr result;  // what the run returned (a Bool: the property)
	};
	// Every path of body(); a run's result is body's return value.
	static std::vector<Path> explore(const std::function<z3::expr()> &body);
	static bool decide(const z3::expr &c);

private:
	std::vector<bool> trace_;
	size_t pos_ = 0;
	std::vector<z3::expr> conds_;
};

struct sbool {
	z3::expr e;
	explicit operator bool() const { return Paths::decide(e); }
	sbool operator!() const { return {!e}; }
};
inline sbool operator&&(const sbool &a, const sbool &b) { return {a.e && b.e}; }
inline sbool operator||(const sbool &a, const sbool &b) { return {a.e || b.e}; }

template <unsigned N>
struct bv {
	z3::expr e;

	bv() : e(ctx().bv_val(0, N)) {}  // an uninitialised local: a defined 0
	bv(const z3::expr &x) : e(x) {}
	bv(uint64_t v) : e(ctx().bv_val(v, N)) {}  // a literal: this width
	template <unsigned M>
	explicit bv(const bv<M> &o) : e(M == N ? o.e : M > N ? o.e.extract(N - 1, 0) : z3::zext(o.e, M < N ? N - M : 0))
	{
	}
	explicit operator bool() const { return Paths::decide(e != ctx().bv_val(0, N)); }

	bv &operator&=(const bv &o) { e = e & o.e; return *this; }
	bv &operator|=(const bv &o) { e = e | o.e; return *this; }
	bv &operator^=(const bv &o) { e = e ^ o.e; return *this; }
	bv &operator+=(const bv &o) { e = e + o.e; return *this; }
	bv &operator-=(const bv &o) { e = e - o.e; return *this; }
	bv &operator++() { e = e + ctx().bv_val(1, N); return *this; }
	bv &operator--() { e = e - ctx().bv_val(1, N); return *this; }
	bv operator++(int) { bv old = *this; ++*this; return old; }
	bv operator--(int) { bv old = *this; --*this; return old; }
	bv operator~() const { return {~e}; }
};

template <unsigned N, unsigned M>
using bv_common = bv<(N > M ? N : M)>;
template <class I>
concept literal = std::is_integral_v<I>;

#define FL_SYM_BINOP(OP, EXPR)                                                                   \
	template <unsigned N, unsigned M>                                                         \
	bv_common<N, M> operator OP(const bv<N> &a, const bv<M> &b)                               \
	{                                                                                         \
		const z3::expr x = bv_common<N, M>(a).e, y = bv_common<N, M>(b).e;                \
		return {EXPR};                                                                    \
	}                                                                                         \
	template <unsigned N, literal I>                                                          \
	bv<N> operator OP(const bv<N> &a, I b) { return a OP bv<N>(uint64_t(b)); }                \
	template <unsigned N, literal I>                                                          \
	bv<N> operator OP(I a, const bv<N> &b) { return bv<N>(uint64_t(a)) OP b; }
FL_SYM_BINOP(+, x + y)
FL_SYM_BINOP(-, x - y)
FL_SYM_BINOP(*, x * y)
FL_SYM_BINOP(/, z3::udiv(x, y))
FL_SYM_BINOP(%, z3::urem(x, y))
FL_SYM_BINOP(&, x & y)
FL_SYM_BINOP(|, x | y)
FL_SYM_BINOP(^, x ^ y)
#undef FL_SYM_BINOP

#define FL_SYM_CMP(OP, EXPR)                                                                     \
	template <unsigned N, unsigned M>                                                         \
	sbool operator OP(const bv<N> &a, const bv<M> &b)                                         \
	{                                                                                         \
		const z3::expr x = bv_common<N, M>(a).e, y = bv_common<N, M>(b).e;                \
		return {EXPR};                                                                    \
	}                                                                                         \
	template <unsigned N, literal I>                                                          \
	sbool operator OP(const bv<N> &a, I b) { return a OP bv<N>(uint64_t(b)); }
FL_SYM_CMP(==, x == y)
FL_SYM_CMP(!=, x != y)
FL_SYM_CMP(<, z3::ult(x, y))
FL_SYM_CMP(<=, z3::ule(x, y))
FL_SYM_CMP(>, z3::ugt(x, y))
FL_SYM_CMP(>=, z3::uge(x, y))
#undef FL_SYM_CMP

// Shifts: the result has the left operand's width (C, after promotion of
// the narrow types the port never shifts past their width).
template <unsigned N, unsigned M>
bv<N> operator<<(const bv<N> &a, const bv<M> &n) { return {z3::shl(a.e, bv<N>(n).e)}; }
template <unsigned N, unsigned M>
bv<N> operator>>(const bv<N> &a, const bv<M> &n) { return {z3::lshr(a.e, bv<N>(n).e)}; }
template <unsigned N, literal I>
bv<N> operator<<(const bv<N> &a, I n) { return a << bv<N>(uint64_t(n)); }
template <unsigned N, literal I>
bv<N> operator>>(const bv<N> &a, I n) { return a >> bv<N>(uint64_t(n)); }

// src/common.bpf.c: arena_fls (1-based; 0 for 0) as a chain of bit tests.
bv<64> arena_fls_of(const bv<64> &x);

// The symbolic word family buddy_index.h is instantiated with.
struct sym_words {
	using u8 = bv<8>;
	using u32 = bv<32>;
	using u64 = bv<64>;
};

// A fresh variable of width N.
template <unsigned N>
bv<N> var(const char *name) { return {ctx().bv_const(name, N)}; }

}  // namespace fl::libarena::smt
