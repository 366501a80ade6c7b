// SPDX-License-Identifier: GPL-2.0-only
// The symbolic words' context, the path explorer and arena_fls.
#include "libarena/smt/sym.h"

#include <stdexcept>

namespace fl::libarena::smt {

namespace {
thread_local Paths *g_paths = nullptr;
constexpr size_t kMaxPaths = 1u << 12;  // the port's index functions have a handful each
}  // namespace

z3::context &ctx()
{
	static z3::context c;
	return c;
}

std::vector<Paths::Path> Paths::explore(const std::function<z3::expr()> &body)
{
	std::vector<Path> out;
	Paths p;
	Paths *outer = g_paths;
	g_paths = &p;
	std::vector<bool> prefix;
	for (;;) {
		p.trace_ = prefix;
		p.pos_ = 0;
		p.conds_.clear();
		z3::expr result = body();
		z3::expr_vector cs(ctx());
		for (const z3::expr &c : p.conds_)
			cs.push_back(c);
		out.push_back({cs.empty() ? ctx().bool_val(true) : z3::mk_and(cs), result});
		if (out.size() > kMaxPaths) {
			g_paths = outer;
			throw std::runtime_error("more than 4096 paths: a loop on a symbolic bound?");
		}
		// depth first: flip the last decision not yet taken both ways
		std::vector<bool> &t = p.trace_;
		t.resize(p.pos_);
		while (!t.empty() && t.back())
			t.pop_back();
		if (t.empty())
			break;
		t.back() = true;
		prefix = t;
	}
	g_paths = outer;
	return out;
}

bool Paths::decide(const z3::expr &c)
{
	if (!g_paths)
		throw std::logic_error("a branch on a symbolic value outside Paths::explore");
	Paths &p = *g_paths;
	if (p.pos_ == p.trace_.size())
		p.trace_.push_back(false);
	const bool d = p.trace_[p.pos_++];
	p.conds_.push_back(d ? c : !c);
	return d;
}

bv<64> arena_fls_of(const bv<64> &x)
{
	z3::expr r = ctx().bv_val(0, 64);
	for (unsigned i = 0; i < 64; i++)  // the highest set bit wins: built from the bottom up
		r = z3::ite(x.e.extract(i, i) == ctx().bv_val(1, 1), ctx().bv_val(i + 1, 64), r);
	return {r};
}

}  // namespace fl::libarena::smt
