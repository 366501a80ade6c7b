// SPDX-License-Identifier: GPL-2.0-only
// The Explorer (sym.h): the term table, branch decisions and their replay.
#include "smt/port/sym.h"

#include "smt/uint.h"

namespace fl::smt::sym {

namespace {
thread_local Explorer *g_cur = nullptr;
constexpr size_t kMaxDepth = 200;  // decisions per path; the stubs bound the loops
}  // namespace

Explorer &cur()
{
	if (!g_cur)
		throw std::logic_error("symbolic port code run outside an Explorer");
	return *g_cur;
}
z3::context &ctx() { return cur().c; }
int add_term(const z3::expr &e, u128 hi) { return cur().add_term(e, hi); }
const z3::expr &term(int id) { return cur().term(id); }
u128 term_hi(int id) { return cur().term_hi(id); }
bool cur_abstracts_products() { return cur().abstract_products; }
bool decide(const z3::expr &cond) { return cur().decide(cond); }
z3::expr two_pow(unsigned n) { return two_to(ctx(), n); }

z3::expr product(const z3::expr &a, const z3::expr &b, unsigned bits)
{
	Explorer &x = cur();
	auto key = std::make_pair(a.id(), b.id());
	auto it = x.products.find(key);
	if (it != x.products.end())
		return it->second;
	z3::expr v = x.var("product" + std::to_string(x.products.size()), bits);
	x.products.emplace(key, v);
	return v;
}

namespace detail {

z3::expr bitop(char op, const z3::expr &a, const z3::expr &b, unsigned bits)
{
	z3::expr x = z3::int2bv(bits, a), y = z3::int2bv(bits, b);
	z3::expr r = op == '&' ? (x & y) : op == '|' ? (x | y) : (x ^ y);
	return z3::bv2int(r, false);
}

z3::expr shift_by(bool left, const z3::expr &a, const z3::expr &n, unsigned bits)
{
	/* n >= bits is undefined in C: the last case stands for it (the
	 * analysed code never shifts that far: fls_long(u32) <= 32) */
	z3::expr r = left ? wrap(a * two_pow(bits - 1), bits) : a / two_pow(bits - 1);
	for (unsigned i = bits - 1; i-- > 0;)
		r = z3::ite(n == (int)i, left ? wrap(a * two_pow(i), bits) : a / two_pow(i), r);
	return r;
}

}  // namespace detail

Explorer::Explorer(z3::context &ctx_) : c(ctx_), solver_(ctx_), outer_(g_cur)
{
	z3::params p(c);
	p.set("rlimit", 2'000'000u);
	solver_.set(p);
	g_cur = this;
}

Explorer::~Explorer() { g_cur = outer_; }

z3::expr Explorer::var(const std::string &name, unsigned bits)
{
	z3::expr v = c.int_const(name.c_str());
	facts.push_back(v >= 0 && v < two_to(c, bits));
	return v;
}

int Explorer::add_term(const z3::expr &e, u128 hi)
{
	terms_.push_back(e);
	his_.push_back(hi);
	return (int)terms_.size() - 1;
}

z3::expr Explorer::path() const
{
	if (pc_.empty())
		return c.bool_val(true);
	z3::expr out = pc_[0];
	for (size_t i = 1; i < pc_.size(); i++)
		out = out && pc_[i];
	return out;
}

bool Explorer::feasible(const z3::expr &cond)
{
	feasibility_checks++;
	solver_.push();
	for (const z3::expr &f : facts)
		solver_.add(f);
	for (const z3::expr &e : pc_)
		solver_.add(e);
	solver_.add(cond);
	bool ok = solver_.check() != z3::unsat;
	solver_.pop();
	return ok;
}

bool Explorer::decide(const z3::expr &cond)
{
	if (pos_ < trail_.size()) {
		bool v = trail_[pos_++].taken;
		pc_.push_back(v ? cond : !cond);
		return v;
	}
	if (trail_.size() >= kMaxDepth)
		throw PathCut{"too many branches"};
	bool t = true, f = true;
	if (check_feasible) {
		t = feasible(cond);
		f = feasible(!cond);
		if (!t && !f)
			throw PathCut{"infeasible"};
	}
	trail_.push_back({t, t && f});
	pos_++;
	pc_.push_back(t ? cond : !cond);
	return t;
}

bool Explorer::next()
{
	paths_checked++;
	while (!trail_.empty() && !trail_.back().other_open)
		trail_.pop_back();
	if (trail_.empty())
		return false;
	trail_.back() = {!trail_.back().taken, false};
	return true;
}

}  // namespace fl::smt::sym
