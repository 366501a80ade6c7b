// SPDX-License-Identifier: GPL-2.0-only
// C unsigned integers of a given width as exact Z3 integers: a value is an
// Int in [0, 2^bits), and every operation that wraps in C (+, -, <<) is
// reduced mod 2^bits, exactly as the C expression computes it. Properties
// compare the Ints themselves, which cannot wrap: the "exactly-widened
// values" of issue 5 come for free.
//
// Why not bit-vectors: the same formulas over QF_BV took 0.2-5 s per query
// (bit-blasting chains of 64-bit adders and comparators; the table took
// over 3 minutes with 17 rows timing out); as linear integer arithmetic
// with mod/div by constants, decided by Z3's arithmetic solver after
// purify-arith (kmodel.h kTactic), most take milliseconds. The encoding is
// exact, not an abstraction: x mod 2^w is what unsigned C arithmetic
// computes, so a model of one is a model of the other.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fl::smt {

struct UInt {
	z3::expr v;     // the value, an Int in [0, 2^bits)
	unsigned bits;  // the C type's width: 32 (u32, 32-bit unsigned long), 64
};

// 2^n as an Int numeral (n <= 64 here; z3 takes big numerals as decimal text)
inline z3::expr two_to(z3::context &c, unsigned n)
{
	unsigned __int128 x = (unsigned __int128)1 << n;
	std::string s;
	do {
		s.insert(s.begin(), char('0' + (int)(x % 10)));
		x /= 10;
	} while (x);
	return c.int_val(s.c_str());
}

inline z3::expr wrap(const z3::expr &e, unsigned bits) { return z3::mod(e, two_to(e.ctx(), bits)); }

// constants and variables; a variable's range constraint goes to `ranges`
inline UInt uconst(z3::context &c, uint64_t v, unsigned bits)
{
	return {c.int_val(v), bits};
}
inline UInt uvar(z3::context &c, const char *name, unsigned bits, std::vector<z3::expr> &ranges)
{
	z3::expr v = c.int_const(name);
	ranges.push_back(v >= 0 && v < two_to(c, bits));
	return {v, bits};
}

// C arithmetic: both operands already converted to the same type
inline UInt operator+(const UInt &a, const UInt &b) { return {wrap(a.v + b.v, a.bits), a.bits}; }
inline UInt operator-(const UInt &a, const UInt &b) { return {wrap(a.v - b.v, a.bits), a.bits}; }
inline UInt operator+(const UInt &a, uint64_t b) { return a + uconst(a.v.ctx(), b, a.bits); }
inline UInt operator-(const UInt &a, uint64_t b) { return a - uconst(a.v.ctx(), b, a.bits); }
inline UInt operator<<(const UInt &a, unsigned n) { return {wrap(a.v * two_to(a.v.ctx(), n), a.bits), a.bits}; }
inline UInt operator>>(const UInt &a, unsigned n) { return {a.v / two_to(a.v.ctx(), n), a.bits};  /* Int division rounds down */ }
// x & (2^n - 1) and x & ~(2^n - 1)
inline UInt low_bits(const UInt &a, unsigned n) { return {z3::mod(a.v, two_to(a.v.ctx(), n)), a.bits}; }
inline UInt clear_low_bits(const UInt &a, unsigned n) { return {a.v - z3::mod(a.v, two_to(a.v.ctx(), n)), a.bits}; }
// conversions: (u64) of a narrower value keeps it; a narrowing cast wraps
inline UInt to_width(const UInt &a, unsigned bits)
{
	return bits >= a.bits ? UInt{a.v, bits} : UInt{wrap(a.v, bits), bits};
}
inline z3::expr ult(const UInt &a, const UInt &b) { return a.v < b.v; }
inline z3::expr ule(const UInt &a, const UInt &b) { return a.v <= b.v; }
inline z3::expr operator==(const UInt &a, const UInt &b) { return a.v == b.v; }
inline z3::expr operator!=(const UInt &a, const UInt &b) { return a.v != b.v; }
inline UInt umax(const UInt &a, const UInt &b) { return {z3::ite(a.v >= b.v, a.v, b.v), a.bits}; }
inline UInt umin(const UInt &a, const UInt &b) { return {z3::ite(a.v <= b.v, a.v, b.v), a.bits}; }

}  // namespace fl::smt
