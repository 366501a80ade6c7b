// SPDX-License-Identifier: GPL-2.0-only
// The port's integers as Z3 terms (issue 16). Sym<W> is a W-bit C unsigned
// integer: a concrete value (folded like C folds it) or an exact Int term in
// [0, 2^W) built with uint.h's encoding (x mod 2^W where C wraps). Every
// conversion of a symbolic comparison to bool (an `if`, `&&`, `?:`, a
// `return a < b` from a bool function) is a branch: the Explorer picks a
// side, records it in the path condition, and runs the function again for
// the other side (explore()). So a function compiled over Sym computes, per
// feasible path, its outputs as terms under that path's condition.
//
// C's rules kept: mixed widths convert to the wider (u32 + u64 -> u64; an
// int literal takes the other operand's width), narrowing assignment wraps,
// shifts keep the left operand's type, comparisons are unsigned. A signed
// operand wider than the Sym (C would compare signed) does not compile.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace fl::smt::sym {

// A path the explorer abandons: infeasible (cannot happen), or too deep.
struct PathCut {
	std::string why;
};
// A symbolic value where the port needs a number (an array index, a
// container key): the analysed functions must not do that.
struct NotConcrete : std::runtime_error {
	using std::runtime_error::runtime_error;
};

class Explorer;
Explorer &cur();  // the exploration in progress on this thread

using u128 = unsigned __int128;
z3::context &ctx();
// a term and an upper bound on its value (from the operands' bounds: a sum
// that cannot reach 2^W needs no `mod`, which keeps the solver's work down)
int add_term(const z3::expr &e, u128 hi);
const z3::expr &term(int id);
u128 term_hi(int id);
bool decide(const z3::expr &cond);  // a branch on a symbolic condition
z3::expr two_pow(unsigned n);
// a * b for two symbolic values: exact, or (Explorer::abstract_products)
// a fresh variable per operand pair, which the caller binds by facts
z3::expr product(const z3::expr &a, const z3::expr &b, unsigned bits);
bool cur_abstracts_products();

template <class I>
constexpr unsigned ibits = sizeof(I) <= 4 ? 32 : 64;  // C's integer promotion

template <unsigned W>
struct Sym {
	static_assert(W == 32 || W == 64);
	static constexpr uint64_t kMask = W == 64 ? ~0ull : 0xffffffffull;
	uint64_t k = 0;  // the value, when t < 0
	int t = -1;      // else the Int term's index (Explorer's table)

	constexpr Sym() = default;
	template <class I>
		requires std::is_integral_v<I>
	constexpr Sym(I v) : k((uint64_t)v & kMask)
	{
	}
	template <unsigned V>
		requires(V != W)
	constexpr Sym(Sym<V> o)
	{
		if (o.t < 0)
			k = o.k & kMask;
		else if (o.hi() <= kTop)  /* widening, or a narrowing that keeps the value */
			t = o.t;
		else
			t = add_term(z3::mod(term(o.t), two_pow(W)), kTop);
	}
	enum class Case : uint64_t {};

	static constexpr u128 kTop = ((u128)1 << W) - 1;
	static Sym of(const z3::expr &e, u128 hi = kTop)  // e an Int in [0, hi], hi <= 2^W - 1
	{
		Sym s;
		if (e.is_numeral()) {
			uint64_t v;
			if (e.is_numeral_u64(v)) {
				s.k = v;
				return s;
			}
		}
		s.t = add_term(e, hi);
		return s;
	}
	constexpr bool concrete() const { return t < 0; }
	u128 hi() const { return t < 0 ? (u128)k : term_hi(t); }
	z3::expr e() const { return t < 0 ? ctx().int_val(k) : term(t); }
	constexpr uint64_t value() const
	{
		if (t >= 0)
			throw NotConcrete("a symbolic value is used as a number");
		return k;
	}
	// a nonzero test (if (x), return x & FLAG from a bool function)
	template <class B>
		requires std::is_same_v<B, bool>
	constexpr operator B() const
	{
		return t < 0 ? k != 0 : decide(term(t) != 0);
	}
	// an index or size the host needs (unique_ptr<u8[]>::operator[], memcpy)
	template <class T>
		requires(std::is_same_v<T, unsigned long> || std::is_same_v<T, long>)
	constexpr operator T() const
	{
		return (T)value();
	}
	template <class I>
		requires(std::is_integral_v<I> && !std::is_same_v<I, bool> &&
			 !std::is_same_v<I, unsigned long> && !std::is_same_v<I, long>)
	explicit constexpr operator I() const
	{
		return (I)value();
	}
	constexpr Sym &operator+=(Sym o);
	constexpr Sym &operator-=(Sym o);
	constexpr Sym &operator|=(Sym o);
	constexpr Sym &operator&=(Sym o);
	constexpr Sym &operator<<=(unsigned n);
	constexpr Sym &operator>>=(unsigned n);
	constexpr Sym &operator++() { return *this += Sym(1); }
	constexpr Sym operator++(int)
	{
		Sym old = *this;
		*this += Sym(1);
		return old;
	}
};

// A comparison's result: concrete, or a Bool term that branches when used.
struct SymBool {
	int8_t k = -1;  // 0/1 when concrete
	int t = -1;
	template <class B>
		requires std::is_same_v<B, bool>
	constexpr operator B() const
	{
		return k >= 0 ? k != 0 : decide(term(t));
	}
};

namespace detail {

template <class A>
struct width_of;
template <unsigned W>
struct width_of<Sym<W>> {
	static constexpr unsigned value = W;
};
template <class I>
	requires std::is_integral_v<I>
struct width_of<I> {
	static constexpr unsigned value = ibits<I>;
};
template <class T>
constexpr bool is_sym = false;
template <unsigned W>
constexpr bool is_sym<Sym<W>> = true;
template <class A, class B>
concept operands = (is_sym<A> || is_sym<B>)&&(is_sym<A> || std::is_integral_v<A>)&&(
	is_sym<B> || std::is_integral_v<B>);
template <class A, class B>
constexpr unsigned rwidth = width_of<A>::value > width_of<B>::value ? width_of<A>::value : width_of<B>::value;
template <class A, class B>
constexpr void check_signed()
{
	if constexpr (!is_sym<A>)
		static_assert(!(std::is_signed_v<A> && ibits<A> > width_of<B>::value),
			      "a signed operand wider than the unsigned one: C compares signed, not modelled");
	if constexpr (!is_sym<B>)
		static_assert(!(std::is_signed_v<B> && ibits<B> > width_of<A>::value),
			      "a signed operand wider than the unsigned one: C compares signed, not modelled");
}
template <unsigned R, class A>
constexpr Sym<R> conv(const A &a)
{
	return Sym<R>(a);
}

z3::expr bitop(char op, const z3::expr &a, const z3::expr &b, unsigned bits);
z3::expr shift_by(bool left, const z3::expr &a, const z3::expr &n, unsigned bits);
inline z3::expr wrap(const z3::expr &e, unsigned bits) { return z3::mod(e, two_pow(bits)); }
// e, whose value is at most hi: reduced mod 2^R only if it can reach 2^R
template <unsigned R>
Sym<R> mk(const z3::expr &e, u128 hi)
{
	if (hi > Sym<R>::kTop)
		return Sym<R>::of(wrap(e, R));
	return Sym<R>::of(e, hi);
}
inline u128 min128(u128 a, u128 b) { return a < b ? a : b; }
inline SymBool boolean(const z3::expr &e)
{
	SymBool b;
	if (e.is_true())
		b.k = 1;
	else if (e.is_false())
		b.k = 0;
	else
		b.t = add_term(e, 1);
	return b;
}
// x & m and x | m for the masks the port's helpers build (ALIGN,
// PAGE_ALIGNED, round_up/down): linear mod terms; otherwise bit-vectors
template <unsigned W>
Sym<W> and_mask(const Sym<W> &x, uint64_t m)
{
	uint64_t low = m + 1;  // m = 2^n - 1
	if (m == Sym<W>::kMask)
		return x;
	if (m == 0)
		return Sym<W>(0);
	if ((low & m) == 0) {
		unsigned n = __builtin_ctzll(low);
		if (x.hi() <= m)
			return x;
		return Sym<W>::of(z3::mod(x.e(), two_pow(n)), m);
	}
	uint64_t inv = ~m & Sym<W>::kMask;  // m = ~(2^n - 1)
	if (((inv + 1) & inv) == 0) {
		unsigned n = __builtin_ctzll(inv + 1);
		return Sym<W>::of(x.e() - z3::mod(x.e(), two_pow(n)), x.hi());
	}
	return Sym<W>::of(bitop('&', x.e(), Sym<W>(m).e(), W), min128(x.hi(), m));
}
template <unsigned W>
Sym<W> or_mask(const Sym<W> &x, uint64_t m)
{
	if (m == 0)
		return x;
	if (((m + 1) & m) == 0) {  // m = 2^n - 1
		unsigned n = m == Sym<W>::kMask ? W : __builtin_ctzll(m + 1);
		return Sym<W>::of(x.e() - z3::mod(x.e(), two_pow(n)) + Sym<W>(m).e(), x.hi() | m);
	}
	return Sym<W>::of(bitop('|', x.e(), Sym<W>(m).e(), W));
}

// x + 0, x - 0, x * 1, x | 0, x ^ 0 (and 0 + x, 1 * x, ...): no term
template <unsigned R>
std::optional<Sym<R>> identity(char op, const Sym<R> &a, const Sym<R> &b)
{
	auto is = [](const Sym<R> &x, uint64_t v) { return x.concrete() && x.k == v; };
	switch (op) {
	case '+': case '|': case '^':
		if (is(b, 0))
			return a;
		if (is(a, 0))
			return b;
		break;
	case '-':
		if (is(b, 0))
			return a;
		break;
	case '*':
		if (is(b, 1))
			return a;
		if (is(a, 1))
			return b;
		if (is(a, 0) || is(b, 0))
			return Sym<R>(0);
		break;
	}
	return std::nullopt;
}
// an unsigned comparison with 0 that is decided: x >= 0, x < 0, 0 <= x, 0 > x
template <unsigned R>
int8_t against_zero(const char *op, const Sym<R> &a, const Sym<R> &b)
{
	std::string o = op;
	bool bz = b.concrete() && b.k == 0, az = a.concrete() && a.k == 0;
	if (bz && o == ">=")
		return 1;
	if (bz && o == "<")
		return 0;
	if (az && o == "<=")
		return 1;
	if (az && o == ">")
		return 0;
	return -1;
}

}  // namespace detail

#define FL_SYM_BINOP(OP, CONCRETE, SYMBOLIC)                                                  \
	template <class A, class B>                                                           \
		requires detail::operands<A, B>                                               \
	constexpr Sym<detail::rwidth<A, B>> operator OP(const A &a_, const B &b_)             \
	{                                                                                     \
		detail::check_signed<A, B>();                                                 \
		constexpr unsigned R = detail::rwidth<A, B>;                                  \
		Sym<R> a = detail::conv<R>(a_), b = detail::conv<R>(b_);                      \
		if (a.concrete() && b.concrete())                                             \
			return Sym<R>((CONCRETE) & Sym<R>::kMask);                            \
		if (auto same = detail::identity(#OP[0], a, b))                              \
			return *same;                                                         \
		return SYMBOLIC;                                                              \
	}

FL_SYM_BINOP(+, a.k + b.k, detail::mk<R>(a.e() + b.e(), a.hi() + b.hi()))
FL_SYM_BINOP(-, a.k - b.k, Sym<R>::of(detail::wrap(a.e() - b.e(), R)))
FL_SYM_BINOP(*, a.k * b.k,
	     a.concrete() || b.concrete() || !cur_abstracts_products()
		     ? detail::mk<R>(a.e() * b.e(), a.hi() * b.hi())
		     : Sym<R>::of(product(a.e(), b.e(), R)))
FL_SYM_BINOP(/, b.k ? a.k / b.k : throw NotConcrete("division by zero"), Sym<R>::of(a.e() / b.e(), a.hi()))
FL_SYM_BINOP(%, b.k ? a.k % b.k : throw NotConcrete("division by zero"),
	     Sym<R>::of(z3::mod(a.e(), b.e()), b.concrete() && b.k ? detail::min128(a.hi(), b.k - 1) : a.hi()))
FL_SYM_BINOP(&, a.k &b.k,
	     b.concrete()   ? detail::and_mask(a, b.k)
	     : a.concrete() ? detail::and_mask(b, a.k)
			    : Sym<R>::of(detail::bitop('&', a.e(), b.e(), R)))
FL_SYM_BINOP(|, a.k | b.k,
	     b.concrete()   ? detail::or_mask(a, b.k)
	     : a.concrete() ? detail::or_mask(b, a.k)
			    : Sym<R>::of(detail::bitop('|', a.e(), b.e(), R)))
FL_SYM_BINOP(^, a.k ^ b.k, Sym<R>::of(detail::bitop('^', a.e(), b.e(), R)))
#undef FL_SYM_BINOP

#define FL_SYM_CMP(OP)                                                                        \
	template <class A, class B>                                                           \
		requires detail::operands<A, B>                                               \
	constexpr SymBool operator OP(const A &a_, const B &b_)                               \
	{                                                                                     \
		detail::check_signed<A, B>();                                                 \
		constexpr unsigned R = detail::rwidth<A, B>;                                  \
		Sym<R> a = detail::conv<R>(a_), b = detail::conv<R>(b_);                      \
		if (a.concrete() && b.concrete())                                             \
			return SymBool{(int8_t)(a.k OP b.k), -1};                             \
		if (int8_t known = detail::against_zero(#OP, a, b); known >= 0)              \
			return SymBool{known, -1};                                            \
		return detail::boolean(a.e() OP b.e());                                       \
	}
FL_SYM_CMP(==)
FL_SYM_CMP(!=)
FL_SYM_CMP(<)
FL_SYM_CMP(<=)
FL_SYM_CMP(>)
FL_SYM_CMP(>=)
#undef FL_SYM_CMP

// shifts: the result has the (promoted) left operand's type
template <unsigned W, class N>
	requires std::is_integral_v<N>
constexpr Sym<W> operator<<(const Sym<W> &a, N n)
{
	if ((uint64_t)n >= W)
		throw NotConcrete("shift by the width or more (undefined in C)");
	if (a.concrete())
		return Sym<W>((a.k << n) & Sym<W>::kMask);
	if (n == 0)
		return a;
	return detail::mk<W>(a.e() * two_pow((unsigned)n), a.hi() << n);
}
template <unsigned W, class N>
	requires std::is_integral_v<N>
constexpr Sym<W> operator>>(const Sym<W> &a, N n)
{
	if ((uint64_t)n >= W)
		throw NotConcrete("shift by the width or more (undefined in C)");
	if (a.concrete())
		return Sym<W>(a.k >> n);
	if (n == 0)
		return a;
	return Sym<W>::of(a.e() / two_pow((unsigned)n), a.hi() >> n);
}
template <class A, unsigned V>
	requires(detail::is_sym<A> || std::is_integral_v<A>)
constexpr auto operator<<(const A &a_, const Sym<V> &n)
{
	constexpr unsigned W = detail::width_of<A>::value;
	Sym<W> a(a_);
	if (n.concrete())
		return a << n.k;
	return Sym<W>::of(detail::shift_by(true, a.e(), n.e(), W));
}
template <class A, unsigned V>
	requires(detail::is_sym<A> || std::is_integral_v<A>)
constexpr auto operator>>(const A &a_, const Sym<V> &n)
{
	constexpr unsigned W = detail::width_of<A>::value;
	Sym<W> a(a_);
	if (n.concrete())
		return a >> n.k;
	return Sym<W>::of(detail::shift_by(false, a.e(), n.e(), W));
}
template <unsigned W>
constexpr Sym<W> operator~(const Sym<W> &a)
{
	if (a.concrete())
		return Sym<W>(~a.k & Sym<W>::kMask);
	return Sym<W>::of(two_pow(W) - 1 - a.e());
}
template <unsigned W>
constexpr Sym<W> operator-(const Sym<W> &a)
{
	return Sym<W>(0) - a;
}
template <unsigned W>
constexpr SymBool operator!(const Sym<W> &a)
{
	return a == 0;
}

template <unsigned W>
constexpr Sym<W> &Sym<W>::operator+=(Sym o) { return *this = *this + o; }
template <unsigned W>
constexpr Sym<W> &Sym<W>::operator-=(Sym o) { return *this = *this - o; }
template <unsigned W>
constexpr Sym<W> &Sym<W>::operator|=(Sym o) { return *this = *this | o; }
template <unsigned W>
constexpr Sym<W> &Sym<W>::operator&=(Sym o) { return *this = *this & o; }
template <unsigned W>
constexpr Sym<W> &Sym<W>::operator<<=(unsigned n) { return *this = *this << n; }
template <unsigned W>
constexpr Sym<W> &Sym<W>::operator>>=(unsigned n) { return *this = *this >> n; }

// include/asm-generic/bitops/fls64.h fls_long and include/linux/overflow.h:
// compiler builtins and arch instructions in the kernel, terms here.
template <unsigned W>
Sym<32> fls_long(Sym<W> l)
{
	if (l.concrete())
		return Sym<32>(l.k ? 64 - __builtin_clzll(l.k) : 0);
	z3::expr x = l.e(), r = ctx().int_val(0);
	for (unsigned n = 1; n <= W; n++)  /* fls = n iff 2^(n-1) <= x */
		r = z3::ite(x >= two_pow(n - 1), ctx().int_val(n), r);
	return Sym<32>::of(r, W);
}
template <unsigned W, class S>
bool check_shl_overflow(Sym<W> a, S s, Sym<W> *d)
{
	unsigned to_shift = (uint64_t)s < W ? (unsigned)s : 0;
	*d = a << to_shift;
	return to_shift != (uint64_t)s || (*d >> to_shift) != a;
}
template <unsigned W>
bool check_add_overflow(Sym<W> a, Sym<W> b, Sym<W> *d)
{
	*d = a + b;
	if (a.concrete() && b.concrete())
		return a.k + b.k > Sym<W>::kMask;
	return decide(a.e() + b.e() >= two_pow(W));
}

// Runs `run` once per path: every symbolic branch is taken both ways. With
// `check_feasible`, a side is taken only if the solver finds it feasible
// under the path so far and `facts` (the variables' ranges and what the
// caller assumes anyway); without, an infeasible path still runs, and its
// unsatisfiable condition drops it from every formula built from the paths
// (the analysed functions' loops are bounded by their stubs, so every path
// ends).
class Explorer {
public:
	explicit Explorer(z3::context &c);
	~Explorer();
	Explorer(const Explorer &) = delete;
	Explorer &operator=(const Explorer &) = delete;

	z3::context &c;
	std::vector<z3::expr> facts;  // assumed on every path
	bool abstract_products = false;
	bool check_feasible = false;
	std::map<std::pair<unsigned, unsigned>, z3::expr> products;  // by operand ids

	z3::expr var(const std::string &name, unsigned bits);  // ranged Int, in facts
	// the path condition of every feasible path, in order, and per path
	// what `run` returned
	template <class R>
	std::vector<std::pair<z3::expr, R>> explore(const std::function<R()> &run)
	{
		std::vector<std::pair<z3::expr, R>> out;
		trail_.clear();
		do {
			pos_ = 0;
			pc_.clear();
			try {
				R r = run();
				out.emplace_back(path(), std::move(r));
			} catch (const PathCut &) {
				/* infeasible or too deep: no path */
			}
		} while (next());
		return out;
	}
	z3::expr path() const;  // the current path condition
	bool decide(const z3::expr &cond);
	int add_term(const z3::expr &e, u128 hi);
	const z3::expr &term(int id) const { return terms_[id]; }
	u128 term_hi(int id) const { return his_[id]; }
	unsigned paths_checked = 0, feasibility_checks = 0;

private:
	struct Decision {
		bool taken, other_open;
	};
	bool feasible(const z3::expr &cond);
	bool next();
	std::vector<z3::expr> terms_, pc_;
	std::vector<u128> his_;
	std::vector<Decision> trail_;
	size_t pos_ = 0;
	z3::solver solver_;
	Explorer *outer_;
};

// (a1 ? t1 : (a2 ? t2 : ...)) over explored paths: the path conditions are
// disjoint and cover every input, so the last one needs no test
template <class R, class F>
z3::expr join(const std::vector<std::pair<z3::expr, R>> &paths, F value, const z3::expr &none)
{
	z3::expr out = none;
	for (size_t i = paths.size(); i-- > 0;)
		out = i + 1 == paths.size() ? value(paths[i].second) : z3::ite(paths[i].first, value(paths[i].second), out);
	return out;
}
// OR over paths of (path condition && pred(result))
template <class R, class F>
z3::expr any_path(z3::context &c, const std::vector<std::pair<z3::expr, R>> &paths, F pred)
{
	std::optional<z3::expr> out;
	for (auto &[cond, r] : paths) {
		z3::expr p = pred(r);
		if (p.is_false())
			continue;
		z3::expr term = p.is_true() ? cond : cond && p;
		out = out ? *out || term : term;
	}
	return out ? *out : c.bool_val(false);
}

}  // namespace fl::smt::sym

// containers keyed by a symbolic integer (vm_struct::pages): hash the value
// or the term id; equal keys compare through a branch
template <unsigned W>
struct std::hash<fl::smt::sym::Sym<W>> {
	size_t operator()(const fl::smt::sym::Sym<W> &s) const { return s.t < 0 ? s.k : ~(size_t)s.t; }
};
