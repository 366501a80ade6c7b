// SPDX-License-Identifier: GPL-2.0-only
// Not kernel: the integer types of the symbolic build (FL_SYMBOLIC). The
// port's u8/u32/u64/ulong/pgoff_t become Word<8|32|64>: a C unsigned integer
// of that width whose value is either a number or an exact Z3 Int term in
// [0, 2^N). Every C operation wraps as C's does (mod 2^N, only where the
// operands' bounds say it can wrap), mixed widths follow C's usual
// arithmetic conversions, and a comparison yields a SymBool. Converting a
// SymBool (or a Word in an `if`) to bool is where the explorer forks
// (explore.h): the port's text runs unchanged, once per feasible path.
//
// Why Int terms and not bit-vectors: the obligations are sums, shifts by
// constants and comparisons of 64-bit values, which the arithmetic solver
// decides in milliseconds after purify-arith, while bit-blasted 64-bit
// adders took seconds per query (docs/proofs.md).
#pragma once

#include <z3++.h>

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

namespace fl::sym {

using u128 = unsigned __int128;

// --- the explorer's hooks (explore.cpp) ---
z3::context &ctx();
// A branch on a symbolic condition: which way this run goes. Called (never
// inlined) from the port's own code, so its return address names the
// branch: the explorer's loop heads are told apart by it.
bool decide(const z3::expr &cond);
// A symbolic value used where C needs a number (an array index, a size):
// its value if the path forces one, else the path cannot be explored.
uint64_t concretize(const z3::expr &e);
// A factor of a product: its term, its range, its trailing zero bits.
struct Factor {
	z3::expr e;
	u128 lo, hi;
	unsigned tz;
};
// x * y of two symbolic values: exact (nonlinear) or, in an abstracting
// run, one fresh variable per pair of terms, bound by what the factors'
// ranges and alignments imply (explore.h).
z3::expr product(const Factor &x, const Factor &y);
// The port hit BUG_ON: the path ends there.
[[noreturn]] void bug(const char *file, int line);
[[noreturn]] void unsupported(const char *what);
// C's wrap of e to n bits, where the bounds cannot rule it out: the
// amount k * 2^n the path's condition forces e - k * 2^n into [0, 2^n)
// with (k = 0: no wrap at all), if the explorer can tell it at once;
// nullopt: the wrap is written as a mod
std::optional<int> wrap_shift(const z3::expr &e, unsigned n);

using i128 = __int128;

// An opaque term of a value (a variable, a mod/div the encoding had to write,
// a product variable, an if-then-else) with what is known of it.
struct Val;
struct Atom {
	z3::expr e;
	i128 coeff;      // its multiple in the value
	u128 lo, hi;     // e's value lies in [lo, hi]
	unsigned tz;     // e is a multiple of 2^tz
	// e = inner mod 2^wrapped, C's wrap (wrapped 0: e is not one): a later
	// wrap to the same width reduces inner instead, one mod, not nested ones
	std::shared_ptr<const Val> inner = nullptr;
	unsigned wrapped = 0;
};

// One value: a linear form sum(coeff * atom) + c over exact integers, and
// bounds for the whole. Sums, differences and multiples stay linear forms,
// so the port's (base + off) - base is off and round_down(base + 0xef0,
// PAGE_SIZE) is base when base is a page multiple; C's `mod 2^n` is written
// (as a new atom) only where the bounds say the value may leave [0, 2^n).
struct Val {
	std::vector<Atom> a;  // empty: the number c
	i128 c = 0;
	u128 lo = 0, hi = 0;  // the value lies in [lo, hi]
	bool sym() const { return !a.empty(); }
	uint64_t k() const { return (uint64_t)c; }  // the number, when !sym()
	z3::expr expr() const;
};

// Every live Word is on one list, so the explorer can find the state a
// loop carries (explore.cpp: loop heads). serial tells objects apart that
// one address held at different times (a callee's parameter, call by call).
struct Node {
	Node *prev = nullptr, *next = nullptr;
	Val *val;
	unsigned bits;
	uint64_t serial;
	uint64_t session;  // the Session (Z3 context) it was made in
	Node(Val *v, unsigned n);
	Node(const Node &) = delete;
	Node &operator=(const Node &) = delete;
	~Node();
};
Node *live_words();  // the list's first node

inline u128 pow2(unsigned n) { return (u128)1 << n; }
inline uint64_t mask(unsigned n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }
z3::expr int_of(u128 v);  // a numeral, also above 2^64
inline Val num(uint64_t k, unsigned n) { return {{}, (i128)(k & mask(n)), k & mask(n), k & mask(n)}; }
inline Val term(const z3::expr &e, u128 lo, u128 hi, unsigned tz = 0) { return {{Atom{e, 1, lo, hi, tz}}, 0, lo, hi}; }
// reduce mod 2^n where the bound says the value may not fit
Val wrap(const Val &v, unsigned n);

Val add(const Val &a, const Val &b, unsigned n);
Val sub(const Val &a, const Val &b, unsigned n);
Val mul(const Val &a, const Val &b, unsigned n);
Val div(const Val &a, const Val &b, unsigned n);
Val mod(const Val &a, const Val &b, unsigned n);
Val band(const Val &a, const Val &b, unsigned n);
Val bor(const Val &a, const Val &b, unsigned n);
Val bxor(const Val &a, const Val &b, unsigned n);
Val bnot(const Val &a, unsigned n);
Val shl(const Val &a, const Val &s, unsigned n);
Val shr(const Val &a, const Val &s, unsigned n);

class SymBool;
SymBool cmp_eq(const Val &a, const Val &b);
SymBool cmp_lt(const Val &a, const Val &b);

// A C truth value: a bool, or a Z3 Bool.
class SymBool {
public:
	SymBool(bool b) : b_(b) {}
	explicit SymBool(const z3::expr &e) : e_(e) {}
	// an `if`, `?:`, `&&`, `||`, a bool variable, a return: the fork
	[[gnu::always_inline]] operator bool() const { return e_ ? decide(*e_) : b_; }
	SymBool operator!() const { return e_ ? SymBool(!*e_) : SymBool(!b_); }
	z3::expr expr() const { return e_ ? *e_ : ctx().bool_val(b_); }
	bool sym() const { return e_.has_value(); }

private:
	std::optional<z3::expr> e_;
	bool b_ = false;
};

template <unsigned N> class Word : Node {
public:
	static_assert(N == 8 || N == 16 || N == 32 || N == 64);
	Val v;

	Word() : Node(&v, N), v(num(0, N)) {}
	Word(const Val &x) : Node(&v, N), v(wrap(x, N)) {}
	template <std::integral I> Word(I x) : Node(&v, N), v(num((uint64_t)x, N)) {}
	// C converts between unsigned types implicitly: widen, or truncate
	template <unsigned M> Word(const Word<M> &o) : Node(&v, N), v(wrap(o.v, N)) {}
	Word(const Word &o) : Node(&v, N), v(o.v) {}
	Word &operator=(const Word &o)
	{
		v = o.v;
		return *this;
	}

	// a variable of this width (its range is the explorer's to assert)
	static Word var(const z3::expr &e) { return Word(term(e, 0, pow2(N) - 1)); }
	bool sym() const { return v.sym(); }
	z3::expr expr() const { return v.expr(); }

	// a number where C wants one (array index, size_t argument, switch)
	operator uint64_t() const { return v.sym() ? concretize(v.expr()) : v.k(); }
	// `if (x)`, `while (n)`: the fork on x != 0
	[[gnu::always_inline]] explicit operator bool() const { return SymBool(!cmp_eq(v, num(0, N))); }
	SymBool operator!() const { return cmp_eq(v, num(0, N)); }
	Word operator~() const { return Word(bnot(v, N)); }
	Word operator-() const { return Word(sub(num(0, N), v, N)); }
	Word operator+() const { return *this; }

	Word &operator++() { return *this = Word(add(v, num(1, N), N)); }
	Word &operator--() { return *this = Word(sub(v, num(1, N), N)); }
	Word operator++(int) { Word old = *this; ++*this; return old; }
	Word operator--(int) { Word old = *this; --*this; return old; }
};

// What the port's cost counters (base/stats.h) are in the symbolic build:
// anything may be counted or stored, nothing is kept.
struct sink {
	sink() = default;
	template <class T> sink(const T &) {}
	template <class T> sink &operator=(const T &) { return *this; }
	template <class T> sink &operator+=(const T &) { return *this; }
	sink &operator++() { return *this; }
	sink operator++(int) { return *this; }
};

// the plain integer of a Word's width (symbolic constants: kernel.h KCONST)
template <class T> struct number_of { using type = T; };
template <> struct number_of<Word<32>> { using type = uint32_t; };
template <> struct number_of<Word<64>> { using type = uint64_t; };
template <class T> using number_t = typename number_of<T>::type;

template <class T> struct is_word : std::false_type {};
template <unsigned N> struct is_word<Word<N>> : std::true_type {};
template <class T>
concept word = is_word<std::remove_cvref_t<T>>::value;
template <class T>
concept literal = std::integral<T> && !std::same_as<T, bool>;

// C's usual arithmetic conversions between the unsigned Word types and a
// literal: the wider operand's width (int literals take the Word's width)
// (0 for any other type: clang names an operator's return type before it
// checks the operands' constraint, so this must not be a hard error)
template <class A> struct bits_of { static constexpr unsigned v = 0; };
template <unsigned N> struct bits_of<Word<N>> { static constexpr unsigned v = N; };
template <literal I> struct bits_of<I> { static constexpr unsigned v = sizeof(I) > 4 ? 64 : 32; };
template <class A, class B>
constexpr unsigned common_bits = bits_of<std::remove_cvref_t<A>>::v > bits_of<std::remove_cvref_t<B>>::v
					 ? bits_of<std::remove_cvref_t<A>>::v
					 : bits_of<std::remove_cvref_t<B>>::v;
template <unsigned N> Val val_of(const Word<N> &w) { return w.v; }
template <literal I> Val val_of(I x) { return num((uint64_t)x, 64); }

template <class A, class B>
concept operands = (word<A> && (word<B> || literal<B>)) || (literal<A> && word<B>);

#define FL_SYM_ARITH(OP, FN)                                                               \
	template <class A, class B>                                                         \
		requires operands<A, B>                                                     \
	Word<common_bits<A, B>> operator OP(const A &a, const B &b)                        \
	{                                                                                   \
		constexpr unsigned n = common_bits<A, B>;                                   \
		return Word<n>(FN(wrap(val_of(a), n), wrap(val_of(b), n), n));              \
	}
FL_SYM_ARITH(+, add)
FL_SYM_ARITH(-, sub)
FL_SYM_ARITH(*, mul)
FL_SYM_ARITH(/, div)
FL_SYM_ARITH(%, mod)
FL_SYM_ARITH(&, band)
FL_SYM_ARITH(|, bor)
FL_SYM_ARITH(^, bxor)
#undef FL_SYM_ARITH

// shifts: the left operand's (promoted) type
template <class A, class B>
	requires operands<A, B>
Word<bits_of<std::remove_cvref_t<A>>::v> operator<<(const A &a, const B &s)
{
	constexpr unsigned n = bits_of<std::remove_cvref_t<A>>::v;
	return Word<n>(shl(wrap(val_of(a), n), val_of(s), n));
}
template <class A, class B>
	requires operands<A, B>
Word<bits_of<std::remove_cvref_t<A>>::v> operator>>(const A &a, const B &s)
{
	constexpr unsigned n = bits_of<std::remove_cvref_t<A>>::v;
	return Word<n>(shr(wrap(val_of(a), n), val_of(s), n));
}

#define FL_SYM_CMP(OP, EXPR)                                                               \
	template <class A, class B>                                                         \
		requires operands<A, B>                                                     \
	SymBool operator OP(const A &a, const B &b)                                        \
	{                                                                                   \
		constexpr unsigned n = common_bits<A, B>;                                   \
		const Val x = wrap(val_of(a), n), y = wrap(val_of(b), n);                   \
		return EXPR;                                                                \
	}
FL_SYM_CMP(==, cmp_eq(x, y))
FL_SYM_CMP(!=, !cmp_eq(x, y))
FL_SYM_CMP(<, cmp_lt(x, y))
FL_SYM_CMP(>, cmp_lt(y, x))
FL_SYM_CMP(<=, !cmp_lt(y, x))
FL_SYM_CMP(>=, !cmp_lt(x, y))
#undef FL_SYM_CMP

#define FL_SYM_ASSIGN(OP)                                                                  \
	template <unsigned N, class B>                                                      \
		requires(word<B> || literal<B>)                                              \
	Word<N> &operator OP##=(Word<N> & a, const B & b)                                  \
	{                                                                                   \
		return a = Word<N>(a OP b);                                                 \
	}
FL_SYM_ASSIGN(+)
FL_SYM_ASSIGN(-)
FL_SYM_ASSIGN(*)
FL_SYM_ASSIGN(/)
FL_SYM_ASSIGN(%)
FL_SYM_ASSIGN(&)
FL_SYM_ASSIGN(|)
FL_SYM_ASSIGN(^)
FL_SYM_ASSIGN(<<)
FL_SYM_ASSIGN(>>)
#undef FL_SYM_ASSIGN

// include/linux/minmax.h over Words: one term (an if-then-else), not a fork
// per call, so do_fault_around's clamps stay one path
Val vmin(const Val &a, const Val &b);
Val vmax(const Val &a, const Val &b);
template <unsigned N> Word<N> min(const Word<N> &a, const Word<N> &b) { return Word<N>(vmin(a.v, b.v)); }
template <unsigned N> Word<N> max(const Word<N> &a, const Word<N> &b) { return Word<N>(vmax(a.v, b.v)); }
template <unsigned N> Word<N> min3(const Word<N> &a, const Word<N> &b, const Word<N> &c)
{
	return min(min(a, b), c);
}

// include/asm-generic/bitops/fls64.h fls_long: 1-based index of the last
// set bit, as a chain over the bits
Val fls_of(const Val &x, unsigned n);
template <unsigned N> Word<32> fls_long(const Word<N> &l) { return Word<32>(fls_of(l.v, N)); }

// include/linux/overflow.h, the kernel's macros over Words
template <unsigned N, class S> bool check_shl_overflow(const Word<N> &a, S s, Word<N> *d)
{
	Word<64> a_full = a;
	unsigned int to_shift = (unsigned int)s < 8 * (N / 8) ? (unsigned int)s : 0;
	*d = Word<N>(a_full << to_shift);
	return to_shift != (unsigned int)s || (*d >> to_shift) != a;
}
template <unsigned N> bool check_add_overflow(const Word<N> &a, const Word<N> &b, Word<N> *d)
{
	*d = a + b;
	return SymBool(cmp_lt(d->v, a.v));
}

}  // namespace fl::sym

// unordered_map / map keys: by value where the path forces one
template <unsigned N> struct std::hash<fl::sym::Word<N>> {
	size_t operator()(const fl::sym::Word<N> &w) const { return std::hash<uint64_t>()((uint64_t)w); }
};
template <unsigned N> struct std::equal_to<fl::sym::Word<N>> {
	bool operator()(const fl::sym::Word<N> &a, const fl::sym::Word<N> &b) const { return a == b; }
};
template <unsigned N> struct std::less<fl::sym::Word<N>> {
	bool operator()(const fl::sym::Word<N> &a, const fl::sym::Word<N> &b) const { return a < b; }
};
