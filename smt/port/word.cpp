// SPDX-License-Identifier: GPL-2.0-only
// The C operations of symbolic/word.h on linear forms over Z3 Int atoms.
// Every result is exact: sums, differences and multiples by numbers are
// computed on the forms (equal atoms cancel), and C's wrap mod 2^n becomes
// a new atom only where the bounds say the value may leave [0, 2^n). A
// comparison is decided by the bounds of the difference of its sides where
// they can, else it is the difference compared with 0: the terms the solver
// sees stay as small as hand-written ones.
#include <algorithm>
#include <bit>
#include <string>

#include "symbolic/word.h"

namespace fl::sym {

namespace {

constexpr u128 kHuge = ~(u128)0 >> 2;  // "unbounded", far from overflow in sums

u128 cap(u128 v) { return v > kHuge ? kHuge : v; }
unsigned ctz(u128 k)
{
	if (!k)
		return 127;
	unsigned n = 0;
	while (!(k & 1)) {
		k >>= 1;
		n++;
	}
	return n;
}
u128 uabs(i128 v) { return v < 0 ? (u128)-v : (u128)v; }
unsigned bitlen(u128 hi)
{
	unsigned n = 0;
	while (n < 127 && (hi >> n))
		n++;
	return n;
}
// 2^j - 1 == m (within n bits): j, else -1
int low_mask_bits(uint64_t m, unsigned n)
{
	if (m == mask(n))
		return (int)n;
	return (m & (m + 1)) == 0 ? (int)std::countr_one(m) : -1;
}
z3::expr int_of_signed(i128 v) { return v < 0 ? -int_of((u128)-v) : int_of((u128)v); }

// the form's own bounds, from its atoms'
struct Range {
	i128 lo, hi;
};
Range range(const Val &v)
{
	i128 lo = v.c, hi = v.c;
	for (const Atom &t : v.a) {
		i128 l = (i128)cap(t.lo), h = (i128)cap(t.hi);
		if (t.coeff >= 0) {
			lo += t.coeff * l;
			hi += t.coeff * h;
		} else {
			lo += t.coeff * h;
			hi += t.coeff * l;
		}
	}
	return {lo, hi};
}
// trailing zero bits every atom's part has (the constant not included)
unsigned atoms_tz(const Val &v)
{
	unsigned tz = 127;
	for (const Atom &t : v.a)
		tz = std::min(tz, t.tz + ctz(uabs(t.coeff)));
	return tz;
}
unsigned tz_of(const Val &v) { return std::min(atoms_tz(v), ctz(uabs(v.c))); }

// a + s * b as a form, equal atoms merged; bounds left to the caller
Val combine(const Val &a, const Val &b, i128 s)
{
	Val r{a.a, a.c + s * b.c, 0, 0};
	for (const Atom &t : b.a) {
		auto it = std::find_if(r.a.begin(), r.a.end(), [&](const Atom &x) { return z3::eq(x.e, t.e); });
		if (it == r.a.end()) {
			r.a.push_back(t);
			r.a.back().coeff *= s;
		} else if ((it->coeff += s * t.coeff) == 0) {
			r.a.erase(it);
		}
	}
	return r;
}
Val scaled(const Val &v, i128 s)
{
	Val r = v;
	r.c *= s;
	for (Atom &t : r.a)
		t.coeff *= s;
	return r;
}

// v with bounds: the tighter of its atoms' and [lo, hi]; then C's wrap
Val bounded(Val v, i128 lo, i128 hi, unsigned n)
{
	Range r = range(v);
	lo = std::max(lo, r.lo);
	hi = std::min(hi, r.hi);
	if (!v.sym())
		return num((uint64_t)v.c, n);
	if (lo >= 0 && hi < (i128)pow2(n)) {
		v.lo = (u128)lo;
		v.hi = (u128)hi;
		return v;
	}
	// (A mod 2^n) * k + B = A * k + B (mod 2^n): reduce the inner forms
	Val flat{{}, v.c, 0, 0};
	bool unwrapped = false;
	for (const Atom &t : v.a) {
		if (t.inner && t.wrapped == n) {
			flat = combine(flat, scaled(*t.inner, t.coeff), 1);
			unwrapped = true;
		} else {
			flat = combine(flat, Val{{t}, 0, 0, 0}, 1);
		}
	}
	if (unwrapped) {
		Range f = range(flat);
		if (!flat.sym())
			return num((uint64_t)flat.c, n);
		if (f.lo >= 0 && f.hi < (i128)pow2(n)) {
			flat.lo = (u128)f.lo;
			flat.hi = (u128)f.hi;
			return flat;
		}
		v = flat;
	}
	// the path may force the wrap's amount: then the value is a form
	// again (no mod), which keeps the solver's queries linear and small
	if (std::optional<int> k = wrap_shift(v.expr(), n)) {
		Val f = combine(v, num(0, n), 1);
		f.c -= (i128)*k * (i128)pow2(n);
		Range fr = range(f);
		f.lo = (u128)std::max<i128>(fr.lo, 0);
		f.hi = (u128)std::min<i128>(fr.hi, (i128)pow2(n) - 1);
		if (f.lo <= f.hi)
			return f;
	}
	Val out = term(z3::mod(v.expr(), int_of(pow2(n))), 0, pow2(n) - 1, std::min(tz_of(v), n));
	out.a[0].inner = std::make_shared<const Val>(v);
	out.a[0].wrapped = n;
	return out;
}

}  // namespace

z3::expr Val::expr() const
{
	z3::expr out = ctx().int_val(0);
	bool first = true;
	for (const Atom &t : a) {
		z3::expr x = t.coeff == 1 ? t.e : t.coeff == -1 ? -t.e : int_of_signed(t.coeff) * t.e;
		out = first ? x : out + x;
		first = false;
	}
	if (first)
		return int_of_signed(c);
	return c ? out + int_of_signed(c) : out;
}

z3::expr int_of(u128 v)
{
	if (v <= UINT64_MAX)
		return ctx().int_val((uint64_t)v);
	std::string s;
	do {
		s.insert(s.begin(), char('0' + (int)(v % 10)));
		v /= 10;
	} while (v);
	return ctx().int_val(s.c_str());
}

Val wrap(const Val &v, unsigned n)
{
	if (!v.sym())
		return num((uint64_t)v.c, n);
	if (v.hi < pow2(n))
		return v;
	return bounded(v, (i128)v.lo, (i128)cap(v.hi), n);
}

Val add(const Val &a, const Val &b, unsigned n)
{
	return bounded(combine(a, b, 1), (i128)(a.lo + b.lo), (i128)cap(cap(a.hi) + cap(b.hi)), n);
}

Val sub(const Val &a, const Val &b, unsigned n)
{
	return bounded(combine(a, b, -1), (i128)a.lo - (i128)cap(b.hi), (i128)cap(a.hi) - (i128)b.lo, n);
}

Val mul(const Val &a, const Val &b, unsigned n)
{
	if (!a.sym() && !b.sym())
		return num((uint64_t)(a.c * b.c), n);
	if (!a.sym())
		return mul(b, a, n);
	if (!b.sym()) {
		if (b.c == 0)
			return num(0, n);
		i128 s = b.c;
		return bounded(scaled(a, s), (i128)cap(a.lo) * s, (i128)cap(a.hi) * s, n);
	}
	u128 hi = cap(std::min(a.hi, pow2(64)) * std::min(b.hi, pow2(64)));
	Factor x{a.expr(), a.lo, a.hi, tz_of(a)}, y{b.expr(), b.lo, b.hi, tz_of(b)};
	return wrap(term(product(x, y), 0, hi, std::min(x.tz + y.tz, 127u)), n);
}

Val div(const Val &a, const Val &b, unsigned n)
{
	if (b.sym())
		unsupported("division by a symbolic value");
	if (b.c == 0)
		unsupported("division by zero");
	if (!a.sym())
		return num((uint64_t)a.c / (uint64_t)b.c, n);
	i128 d = b.c;
	if (d == 1)
		return a;
	// (d * S + c) / d = S + floor(c / d) when d divides every coefficient
	if (std::all_of(a.a.begin(), a.a.end(), [&](const Atom &t) { return t.coeff % d == 0; })) {
		Val r = a;
		for (Atom &t : r.a)
			t.coeff /= d;
		r.c = a.c >= 0 ? a.c / d : -((-a.c + d - 1) / d);
		return bounded(r, (i128)(a.lo / (u128)d), (i128)(cap(a.hi) / (u128)d), n);
	}
	unsigned tz = std::has_single_bit((uint64_t)d) && tz_of(a) > ctz((u128)d) ? tz_of(a) - ctz((u128)d) : 0;
	return term(a.expr() / ctx().int_val((uint64_t)d), a.lo / (u128)d, cap(a.hi) / (u128)d, tz);
}

Val mod(const Val &a, const Val &b, unsigned n)
{
	(void)n;
	if (b.sym())
		unsupported("remainder by a symbolic value");
	if (b.c == 0)
		unsupported("remainder by zero");
	uint64_t d = (uint64_t)b.c;
	if (!a.sym())
		return num((uint64_t)a.c % d, 64);
	if (a.hi < d)
		return a;
	// every atom's part a multiple of d: the constant's remainder
	if (std::all_of(a.a.begin(), a.a.end(), [&](const Atom &t) {
		    return t.coeff % (i128)d == 0 || (std::has_single_bit(d) && t.tz + ctz(uabs(t.coeff)) >= ctz(d));
	    }))
		return num((uint64_t)(((a.c % (i128)d) + (i128)d) % (i128)d), 64);
	return term(z3::mod(a.expr(), ctx().int_val(d)), 0, d - 1, 0);
}

Val band(const Val &a, const Val &b, unsigned n)
{
	if (!a.sym() && !b.sym())
		return num((uint64_t)a.c & (uint64_t)b.c, n);
	if (a.sym() && b.sym())
		unsupported("& of two symbolic values");
	const Val &x = a.sym() ? a : b;
	uint64_t m = (uint64_t)(a.sym() ? b : a).c & mask(n);
	if (m == 0)
		return num(0, n);
	if (m == mask(n))
		return x;
	int j = low_mask_bits(m, n);
	if (j >= 0)  /* x & (2^j - 1) */
		return mod(x, num(1ull << j, 64), n);
	int low = low_mask_bits(~m & mask(n), n);
	if (low >= 0) {  /* x & ~(2^low - 1): x - x mod 2^low, in [0, x] */
		Val r = combine(x, mod(x, num(1ull << low, 64), n), -1);
		if (!r.sym() || atoms_tz(r) >= (unsigned)low)
			return bounded(r, 0, (i128)cap(x.hi), n);
		// one atom, aligned: what is compared with it next narrows it
		u128 lo = x.lo >= ((u128)1 << low) ? x.lo - ((u128)1 << low) + 1 : 0;
		return term(r.expr(), lo, x.hi, (unsigned)low);
	}
	/* a mask whose bits are all above the value's bound or below its alignment */
	if (x.hi < ((u128)1 << std::countr_zero(m)) || tz_of(x) >= bitlen(m))
		return num(0, n);
	unsupported("& with a mask that is not 2^j - 1 or its complement");
}

Val bor(const Val &a, const Val &b, unsigned n)
{
	if (!a.sym() && !b.sym())
		return num((uint64_t)a.c | (uint64_t)b.c, n);
	// disjoint bits: a sum (a << 32 | b with b < 2^32)
	if (tz_of(a) >= bitlen(b.hi) || tz_of(b) >= bitlen(a.hi))
		return add(a, b, n);
	if (a.sym() && b.sym())
		unsupported("| of two symbolic values with overlapping bits");
	const Val &x = a.sym() ? a : b;
	uint64_t m = (uint64_t)(a.sym() ? b : a).c & mask(n);
	int j = low_mask_bits(m, n);
	if (j >= 0)  /* x | (2^j - 1) = (x & ~(2^j - 1)) + 2^j - 1 */
		return add(band(x, num(~mask(j), 64), n), num(mask(j), 64), n);
	unsupported("| with a mask that is not 2^j - 1");
}

Val bxor(const Val &a, const Val &b, unsigned n)
{
	if (!a.sym() && !b.sym())
		return num((uint64_t)a.c ^ (uint64_t)b.c, n);
	unsupported("^ of a symbolic value");
}

Val bnot(const Val &a, unsigned n)
{
	return sub(num(mask(n), 64), a, n);  /* ~x = 2^n - 1 - x, never below 0 */
}

Val shl(const Val &a, const Val &s, unsigned n)
{
	if (!s.sym()) {
		if ((uint64_t)s.c >= n)
			unsupported("shift by the width or more (undefined in C)");
		return mul(a, num(1ull << s.c, 64), n);
	}
	/* a symbolic amount (1ULL << fls_long(x)): one case per possible value */
	u128 top = s.hi < n ? s.hi : n - 1;
	z3::expr amount = s.expr(), out = ctx().int_val(0);
	u128 hi = 0;
	for (u128 i = top + 1; i-- > 0;) {
		Val v = shl(a, num((uint64_t)i, 64), n);
		hi = std::max(hi, v.hi);
		out = i == top ? v.expr() : z3::ite(amount == ctx().int_val((uint64_t)i), v.expr(), out);
	}
	return term(out, 0, hi, 0);
}

Val shr(const Val &a, const Val &s, unsigned n)
{
	if (s.sym())
		unsupported(">> by a symbolic amount");
	if ((uint64_t)s.c >= n)
		unsupported("shift by the width or more (undefined in C)");
	return div(a, num(1ull << s.c, 64), n);
}

// a == b and a < b through d = a - b, exact: its bounds decide, or the
// solver sees d compared with a number
SymBool cmp_eq(const Val &a, const Val &b)
{
	Val d = combine(a, b, -1);
	Range r = range(d);
	r.lo = std::max(r.lo, (i128)a.lo - (i128)cap(b.hi));
	r.hi = std::min(r.hi, (i128)cap(a.hi) - (i128)b.lo);
	if (r.lo > 0 || r.hi < 0)
		return false;
	if (!d.sym())
		return d.c == 0;
	if (d.a.size() == 1 && d.a[0].coeff == 1)  /* atom == -c */
		return SymBool(d.a[0].e == int_of_signed(-d.c));
	return SymBool(a.expr() == b.expr());
}

SymBool cmp_lt(const Val &a, const Val &b)
{
	Val d = combine(a, b, -1);
	Range r = range(d);
	r.lo = std::max(r.lo, (i128)a.lo - (i128)cap(b.hi));
	r.hi = std::min(r.hi, (i128)cap(a.hi) - (i128)b.lo);
	if (r.hi < 0)
		return true;
	if (r.lo >= 0)
		return false;
	if (d.a.size() == 1 && (d.a[0].coeff == 1 || d.a[0].coeff == -1)) {
		/* atom < -c, or -atom < -c: c < atom */
		const Atom &t = d.a[0];
		return SymBool(t.coeff == 1 ? t.e < int_of_signed(-d.c) : int_of_signed(d.c) < t.e);
	}
	return SymBool(a.expr() < b.expr());
}

Val vmin(const Val &a, const Val &b)
{
	if (a.hi <= b.lo)
		return a;
	if (b.hi <= a.lo)
		return b;
	return term(z3::ite(a.expr() < b.expr(), a.expr(), b.expr()), std::min(a.lo, b.lo), std::min(a.hi, b.hi),
		    std::min(tz_of(a), tz_of(b)));
}

Val vmax(const Val &a, const Val &b)
{
	if (a.lo >= b.hi)
		return a;
	if (b.lo >= a.hi)
		return b;
	return term(z3::ite(a.expr() > b.expr(), a.expr(), b.expr()), std::max(a.lo, b.lo), std::max(a.hi, b.hi),
		    std::min(tz_of(a), tz_of(b)));
}

Val fls_of(const Val &x, unsigned n)
{
	if (!x.sym())
		return num(x.c ? 64 - (uint64_t)std::countl_zero((uint64_t)x.c) : 0, 32);
	// fls(x) = i iff 2^(i-1) <= x < 2^i
	z3::expr e = x.expr(), out = ctx().int_val(0);
	for (unsigned i = 1; i <= n; i++)
		out = z3::ite(e >= int_of(pow2(i - 1)), ctx().int_val(i), out);
	return term(out, 0, n, 0);
}

}  // namespace fl::sym
