// SPDX-License-Identifier: GPL-2.0-only
// The explorer (explore.h) and the hooks symbolic/word.h and
// symbolic/containers.h call: one Session and at most one Explorer are
// current per thread.
#include "smt/port/explore.h"
#include "smt/port/cost.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <unordered_set>

#include "symbolic/containers.h"

namespace fl::sym {

namespace {

// Z3's deterministic work budgets: a branch that takes more is explored
// (both ways); a loop check or a concrete value that takes more ends its
// path unfinished
constexpr unsigned kBranch = 2'000'000, kExact = 20'000'000, kIncremental = 400'000;
constexpr unsigned kFreshChecks = 16;

thread_local Session *g_session = nullptr;
thread_local Explorer *g_explorer = nullptr;
thread_local Node *g_live = nullptr;
thread_local uint64_t g_serial = 0;
thread_local const void *g_stack_top = nullptr;
std::atomic<uint64_t> g_sessions{0};

// A thrown PathEnd ends the path it happened on.
struct PathEnd {
	Path::Status status;
	std::string why;
};

Explorer &explorer()
{
	if (!g_explorer)
		throw std::logic_error("symbolic port code ran outside an exploration");
	return *g_explorer;
}

struct ExplorerScope {
	explicit ExplorerScope(Explorer *e) : prev(g_explorer) { g_explorer = e; }
	~ExplorerScope() { g_explorer = prev; }
	Explorer *prev;
};

bool same(const Val &a, const Val &b)
{
	if (a.c != b.c || a.a.size() != b.a.size())
		return false;
	for (size_t i = 0; i < a.a.size(); i++)
		if (a.a[i].coeff != b.a[i].coeff || !z3::eq(a.a[i].e, b.a[i].e))
			return false;
	return true;
}

}  // namespace

// --- Session ---

z3::check_result check_portfolio(z3::solver &s, unsigned rlimit, unsigned timeout_ms)
{
	// The older core (2) first, on a doubling budget up to rlimit: a try
	// that runs out keeps what the solver learned, and the next try often
	// answers at once (a v3 window disjunct: unknown after 0.45 s at
	// rlimit/8, then unsat in 14 ms), where one long try wandered on. Its
	// answers depend on the budget only, not on the machine.
	constexpr unsigned kFirstShare = 64, kGuardRatio = 4;
	auto try_core = [&](unsigned core, unsigned budget, unsigned timeout) {
		z3::params p(s.ctx());
		p.set("rlimit", budget);
		p.set("arith.solver", core);
		p.set("timeout", timeout);
		s.set(p);
		return timed_check(s);
	};
	auto t0 = std::chrono::steady_clock::now();
	for (unsigned budget = std::max(rlimit / kFirstShare, 1u);; budget = std::min(2 * budget, rlimit)) {
		if (z3::check_result r = try_core(2, budget, timeout_ms); r != z3::unknown)
			return r;
		if (budget == rlimit)
			break;
	}
	// Then the newer core (6), which decides some queries in milliseconds
	// where the older one wanders, but does not always stop at its rlimit:
	// its try carries a wall-clock guard of kGuardRatio times what the
	// older core took for the same budget (a loaded machine slows both
	// alike, so what the guard cuts does not follow the load; a fixed
	// 200 ms guard once saw a 198 ms answer). Only "unknown" can depend on
	// time; an unknown branch is explored both ways.
	auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
	count_guarded_try();
	return try_core(6, rlimit, std::min<unsigned>(timeout_ms, std::max<unsigned>(kGuardRatio * spent.count(), 20)));
}

Session &session()
{
	if (!g_session)
		throw std::logic_error("no symbolic session");
	return *g_session;
}

Session::Session() : id(++g_sessions) {}

Session::Scope::Scope(Session &s) : prev(g_session) { g_session = &s; }
Session::Scope::~Scope() { g_session = prev; }

z3::expr Session::var(const std::string &name, unsigned bits)
{
	z3::expr v = c.int_const(name.c_str());
	domain.push_back(v >= 0 && v <= int_of(pow2(bits) - 1));
	return v;
}

z3::expr Session::product(const Factor &x, const Factor &y)
{
	unsigned ix = x.e.id(), iy = y.e.id();
	std::pair<unsigned, unsigned> key{std::min(ix, iy), std::max(ix, iy)};
	auto it = products_.find(key);
	if (it != products_.end())
		return it->second;
	// one variable per pair of terms: linear queries; the exact product is
	// what the counterexample re-solve uses. What the abstraction keeps of
	// x * y, all linear in p, x and y: the ranges' corners (x*lo_y <= p <=
	// x*hi_y, and the same for y) and the alignment 2^(tz_x + tz_y).
	z3::expr p = c.int_const(("prod_" + std::to_string(products_.size())).c_str());
	auto n = [&](u128 v) { return int_of(std::min(v, pow2(64))); };
	z3::expr facts = p >= 0 && p >= x.e * n(y.lo) && p >= y.e * n(x.lo) && p <= x.e * n(y.hi) && p <= y.e * n(x.hi);
	if (unsigned tz = std::min(x.tz + y.tz, 64u))  /* p = 2^tz * k: no mod term */
		facts = facts && p == int_of(pow2(tz)) * c.int_const(("prodk_" + std::to_string(products_.size())).c_str());
	// and monotonicity against the products before that share a factor
	// (array_map_alloc's rounded max_entries against map.max_entries)
	for (const auto &[k, q] : products_) {
		for (auto [mine, other] : {std::pair{x, y}, std::pair{y, x}}) {
			if (k.first != mine.e.id() && k.second != mine.e.id())
				continue;
			const z3::expr &w = factors_.at(k.first == mine.e.id() ? k.second : k.first);  /* q = mine * w */
			facts = facts && z3::implies(other.e <= w, p <= q) && z3::implies(w <= other.e, q <= p);
		}
	}
	defs.push_back(facts);
	def_of_[p.id()] = defs.size() - 1;
	keep_.push_back(p);
	factors_.emplace(ix, x.e);
	factors_.emplace(iy, y.e);
	keep_.push_back(x.e);
	keep_.push_back(y.e);
	products_.emplace(key, p);
	return p;
}

z3::expr Session::purify(const z3::expr &f)
{
	auto hit = purified_.find(f.id());
	if (hit != purified_.end())
		return hit->second;
	z3::expr out = f;
	if (f.is_app() && f.num_args() > 0) {
		z3::expr_vector args(c);
		for (unsigned i = 0; i < f.num_args(); i++)
			args.push_back(purify(f.arg(i)));
		Z3_decl_kind k = f.decl().decl_kind();
		if ((k == Z3_OP_MOD || k == Z3_OP_IDIV || k == Z3_OP_DIV) && args[1].is_numeral()) {
			auto key = std::make_pair(args[0].id(), args[1].id());
			auto it = divmod_.find(key);
			if (it == divmod_.end()) {
				std::string n = std::to_string(divmod_.size());
				z3::expr q = c.int_const(("q!" + n).c_str()), r = c.int_const(("r!" + n).c_str());
				defs.push_back(args[0] == args[1] * q + r && r >= 0 && r < args[1]);
				def_of_[q.id()] = def_of_[r.id()] = defs.size() - 1;
				keep_.push_back(q);
				keep_.push_back(r);
				keep_.push_back(args[0]);
				keep_.push_back(args[1]);
				it = divmod_.emplace(key, std::make_pair(q, r)).first;
			}
			out = k == Z3_OP_MOD ? it->second.second : it->second.first;
		} else {
			out = f.decl()(args);
		}
	}
	keep_.push_back(f);
	purified_.emplace(f.id(), out);
	return out;
}

const std::vector<unsigned> &Session::consts(const z3::expr &e)
{
	auto it = consts_.find(e.id());
	if (it != consts_.end())
		return it->second;
	std::vector<unsigned> out;
	if (e.is_const() && !e.is_numeral()) {
		out.push_back(e.id());
	} else if (e.is_app()) {
		for (unsigned i = 0; i < e.num_args(); i++) {
			const std::vector<unsigned> &sub = consts(e.arg(i));
			out.insert(out.end(), sub.begin(), sub.end());
		}
		std::sort(out.begin(), out.end());
		out.erase(std::unique(out.begin(), out.end()), out.end());
	}
	keep_.push_back(e);
	return consts_.emplace(e.id(), std::move(out)).first->second;
}

std::vector<size_t> Session::defs_for(const z3::expr &e, std::unordered_set<size_t> &have)
{
	std::vector<size_t> out;
	std::vector<unsigned> todo = consts(e);
	while (!todo.empty()) {
		unsigned v = todo.back();
		todo.pop_back();
		auto it = def_of_.find(v);
		if (it == def_of_.end() || !have.insert(it->second).second)
			continue;
		out.push_back(it->second);
		const std::vector<unsigned> &more = consts(defs[it->second]);
		todo.insert(todo.end(), more.begin(), more.end());
	}
	return out;
}

std::vector<z3::expr> Session::slice(const std::vector<z3::expr> &from, const std::vector<z3::expr> &roots)
{
	std::vector<z3::expr> conjuncts;
	std::function<void(const z3::expr &)> split = [&](const z3::expr &e) {
		if (e.is_app() && e.decl().decl_kind() == Z3_OP_AND)
			for (unsigned i = 0; i < e.num_args(); i++)
				split(e.arg(i));
		else if (!e.is_true())
			conjuncts.push_back(e);
	};
	for (const z3::expr &e : from)
		split(e);
	std::unordered_set<unsigned> reached;
	for (const z3::expr &r : roots)
		for (unsigned v : consts(r))
			reached.insert(v);
	std::vector<bool> taken(conjuncts.size(), false);
	for (bool grew = true; grew;) {  /* to a fixpoint: few rounds, the chains are short */
		grew = false;
		for (size_t i = 0; i < conjuncts.size(); i++) {
			if (taken[i])
				continue;
			const std::vector<unsigned> &vs = consts(conjuncts[i]);
			if (std::none_of(vs.begin(), vs.end(), [&](unsigned v) { return reached.count(v); }))
				continue;
			taken[i] = grew = true;
			reached.insert(vs.begin(), vs.end());
		}
	}
	std::vector<z3::expr> out;
	for (size_t i = 0; i < conjuncts.size(); i++)
		if (taken[i])
			out.push_back(conjuncts[i]);
	return out;
}

z3::expr Session::domain_formula() const
{
	z3::expr_vector v(const_cast<z3::context &>(c));
	for (const z3::expr &d : domain)
		v.push_back(d);
	return z3::mk_and(v);
}

// --- the hooks ---

z3::context &ctx() { return session().c; }

Node::Node(Val *v, unsigned n) : val(v), bits(n), serial(++g_serial), session(g_session ? g_session->id : 0)
{
	next = g_live;
	if (g_live)
		g_live->prev = this;
	g_live = this;
}

Node::~Node()
{
	if (prev)
		prev->next = next;
	else
		g_live = next;
	if (next)
		next->prev = prev;
}

Node *live_words() { return g_live; }

[[gnu::noinline]] bool decide(const z3::expr &cond)
{
	return explorer().decide(cond, __builtin_return_address(0));
}

uint64_t concretize(const z3::expr &e) { return explorer().concretize(e); }

std::optional<int> wrap_shift(const z3::expr &e, unsigned n)
{
	if (!g_explorer || !g_session)
		return std::nullopt;
	return g_explorer->wrap_shift(e, n);
}

z3::expr product(const Factor &x, const Factor &y)
{
	return g_explorer && g_explorer->exact_products ? x.e * y.e : session().product(x, y);
}

void bug(const char *file, int line)
{
	throw PathEnd{Path::bug, std::string("BUG_ON at ") + file + ":" + std::to_string(line)};
}

void unsupported(const char *what) { throw PathEnd{Path::cut, std::string("unsupported: ") + what}; }

bool prior_pte(const z3::expr &) { return explorer().prior_pte(); }

void saw(Event e) { explorer().saw(std::move(e)); }

// --- the explorer ---

std::string Explorer::fresh(const char *what) { return name_ + "!" + what + std::to_string(fresh_++); }

z3::expr Explorer::pc() const
{
	z3::expr_vector v(session().c);
	for (const z3::expr &d : pc_)
		v.push_back(d);
	return z3::mk_and(v);
}

// f purified, with the definitions its abstraction variables need
// (transitively) added to the solver first, in the current scope
// (start_run adds them again at the base). Only those: the session holds
// every exploration's and row's definitions, and with all of them in the
// incremental solver the table's branch checks took 40 % longer.
// A single check calls it before its push: the pop would drop them.
z3::expr Explorer::purified(const z3::expr &f)
{
	z3::expr p = session().purify(f);
	for (size_t i : session().defs_for(p, defs_in_)) {
		solver_->add(session().defs[i]);
		if (scopes_)
			defs_scoped_.push_back(i);
	}
	return p;
}

void Explorer::assume(const z3::expr &f)
{
	pc_.push_back(f);
	z3::expr p = purified(f);
	solver_->push();
	scopes_++;
	solver_->add(p);
}

// unknown explores it: an infeasible path only costs time, and the row's
// query (one solver call over every path) decides what was feasible
bool Explorer::feasible(const z3::expr &f, unsigned budget, std::optional<z3::model> *model)
{
	solver_calls++;
	z3::expr pf = purified(f);
	solver_->push();
	solver_->add(pf);
	z3::check_result r = check_now(budget);
	if (model && r == z3::sat && incremental_sat_)
		model->emplace(solver_->get_model());
	solver_->pop();
	return r != z3::unsat;  /* unknown: explore it (an infeasible path only costs time) */
}

// cond's value in the witness model, if that model still satisfies every
// condition the path took since it was found (a loop's fresh variables
// may not: then none, and the branch gets its solver calls)
std::optional<bool> Explorer::witnessed(const z3::expr &cond)
{
	if (!witness_)
		return std::nullopt;
	for (; witness_pc_ < pc_.size(); witness_pc_++)
		if (!witness_->eval(pc_[witness_pc_], true).is_true()) {
			witness_.reset();
			return std::nullopt;
		}
	z3::expr v = witness_->eval(cond, true);
	if (!v.is_true() && !v.is_false())
		return std::nullopt;
	return v.is_true();
}

// The incremental solver with a small budget: it decides most branches in
// microseconds, but now and then it wanders on mod-heavy ones that a fresh
// solver, checked once (Z3 then preprocesses for linear integer
// arithmetic), decides at once.
// The path's constraints (and f) decided in a fresh Z3 context, parsed from
// their SMT-LIB text, as the z3 command would: Z3's heuristics follow term
// numbering, and in the long-lived context of a row some of these checks
// took seconds that take milliseconds re-parsed (docs/proofs.md). probe:
// its value in the model, where sat.
z3::check_result Explorer::check_now(unsigned rlimit, const z3::expr *probe, uint64_t *value)
{
	incremental_sat_ = false;
	if (!probe) {  /* most checks: the incremental solver, on a small budget */
		z3::check_result r = timed_check(*solver_);
		incremental_sat_ = r == z3::sat;
		if (r != z3::unknown)
			return r;
	}
	// the checks below take up to seconds each: an exploration that needs
	// more than kFreshChecks of them ends its paths unfinished from there
	// (deterministic; a row that needs its paths is then not proved)
	if (++fresh_checks > kFreshChecks)
		throw PathEnd{Path::cut, "explorer: out of budget (" + std::to_string(kFreshChecks) + " fresh solver checks)"};
	z3::solver text(session().c);
	std::vector<z3::expr> all, roots(pc_.begin(), pc_.end());
	for (const z3::expr &a : solver_->assertions())
		all.push_back(a);
	if (probe)
		all.push_back(session().c.int_const("fl!probe") == session().purify(*probe));
	roots.push_back(all.back());  /* the fork's condition, or the probe */
	for (const z3::expr &a : session().slice(all, roots))
		text.add(a);
	CostScope cost(Cost::fresh);
	z3::context fresh;
	z3::solver s(fresh);
	s.add(fresh.parse_string(text.to_smt2().c_str()));
	z3::check_result r = check_portfolio(s, rlimit);
	if (probe && r == z3::sat) {
		z3::expr v = s.get_model().eval(fresh.int_const("fl!probe"), true);
		if (!v.is_numeral())
			return z3::unknown;
		*value = v.get_numeral_uint64();
	}
	return r;
}

void Explorer::start_run()
{
	runs++;
	pos_ = 0;
	fresh_ = 0;
	g_serial = 0;
	pc_.clear();
	events_.clear();
	visits_.clear();
	last_.clear();
	last_trip_.clear();
	symbolized_.reset();
	active_.reset();
	pending_check_.reset();
	last_dir_.clear();
	witness_.reset();
	if (!solver_) {
		solver_.emplace(session().c);
		z3::params p(session().c);
		p.set("rlimit", kIncremental);
		solver_->set(p);
		solver_->add(session().domain_formula());
	}
	// back to the definitions, which hold on every path: they stay
	solver_->pop(scopes_);
	scopes_ = 0;
	for (size_t i : defs_scoped_)
		solver_->add(session().defs[i]);
	defs_scoped_.clear();
}

bool Explorer::on_stack(const void *p, const void *here)
{
	return p > here && p < g_stack_top;
}

void Explorer::start(std::function<void()> body)
{
	body_ = std::move(body);
	todo_ = {Job{}};
}

// One job of the depth-first walk: its decisions replayed, then extended
// until the run ends (a restart runs the same decisions again with the
// loop plan it found).
std::optional<Path> Explorer::next()
{
	if (todo_.empty())
		return std::nullopt;
	ExplorerScope scope(this);
	CostScope cost(Cost::branch);
	ExploreTimer timed(name_);
	char top;
	struct StackTop {
		const void *outer = g_stack_top;
		~StackTop() { g_stack_top = outer; }
	} restore;
	g_stack_top = &top;  /* every Word the runs put on the stack lies below */
	prefix_ = std::move(todo_.back().prefix);
	plans_ = std::move(todo_.back().plans);
	todo_.pop_back();
	for (;;) {
		start_run();
		size_t domain_before = session().domain.size();
		Path p;
		try {
			body_();
			p.status = Path::done;
		} catch (const Restart &) {
			session().domain.erase(session().domain.begin() + (long)domain_before, session().domain.end());
			continue;  /* the same decisions again, with the new plan */
		} catch (const PathEnd &e) {
			p.status = e.status;
			p.why = e.why;
		}
		p.cond = pc();
		p.events = std::move(events_);
		return p;
	}
}

void Explorer::run_all(const std::function<void()> &body, const std::function<void(Path)> &finish)
{
	start(body);
	while (std::optional<Path> p = next())
		finish(std::move(*p));
}

bool Explorer::decide(z3::expr cond, const void *site)
{
	if (pos_ >= max_decisions_)
		throw PathEnd{Path::cut, "more than " + std::to_string(max_decisions_) + " decisions"};
	loop_head(cond, site);
	bool d = choose(cond);
	narrow(cond, d);
	if (active_ && site == active_->site && pending_check_) {
		// the generic visit: an exit goes on; going on again is subsumed,
		// once the next trip is known not to wrap. Where it may, the path
		// is cut (forking on the wrap, the other way running the next
		// trips as they are, was exact, but v3 64 4k direct then took more
		// than 6 minutes of CPU where the cut took 3)
		if (d == last_dir_[site]) {
			if (valid(*pending_check_))
				throw PathEnd{Path::subsumed, ""};
			throw PathEnd{Path::cut, "loop: a carried value may wrap in a later trip"};
		}
		pending_check_.reset();
		active_.reset();
		return d;
	}
	after_decision(cond, site, d);
	return d;
}

// The decision on cond: the prefix's, or (new) each feasible way, the
// other one left to a later run; then on the path.
bool Explorer::choose(const z3::expr &cond)
{
	bool d;
	if (pos_ < prefix_.size()) {
		d = prefix_[pos_];
	} else {
		// a way the path's witness model takes is feasible without a
		// solver call; the model of the way taken witnesses the next branch
		z3::expr s = cond.simplify();
		std::optional<bool> known = s.is_true() || s.is_false() ? std::nullopt : witnessed(cond);
		const int w = known ? int(*known) : -1;  /* the witness's way, -1: none */
		std::optional<z3::model> mt, mf;
		bool t = s.is_true() || w == 1 || (!s.is_false() && feasible(cond, kBranch, &mt));
		bool f = s.is_false() || w == 0 || (!s.is_true() && feasible(!cond, kBranch, &mf));
		if (!t && !f)  /* a branch explored on an unknown before: not a path */
			throw PathEnd{Path::subsumed, "infeasible"};
		if (w != int(t)) {
			witness_ = t ? std::move(mt) : std::move(mf);
			witness_pc_ = pc_.size() + 1;  /* the condition assumed below holds in it */
		}
		if (t && f) {
			forks++;
			Job alt{prefix_, plans_};
			alt.prefix.push_back(false);
			todo_.push_back(std::move(alt));
		}
		d = t;
		prefix_.push_back(d);
	}
	pos_++;
	assume(d ? cond : !cond);
	return d;
}

// A branch on (x < n), (n < x), (x == n) with x an atom of the port's
// values and n a number: the bound the path now knows goes onto x in every
// live Word, so what the port computes from it next needs no wrap it cannot
// do (symbolic/word.h: the bounds decide where C's mod 2^n is written).
void Explorer::narrow(const z3::expr &cond, bool taken)
{
	z3::expr c = cond;
	if (c.is_app() && c.decl().decl_kind() == Z3_OP_NOT) {
		c = c.arg(0);
		taken = !taken;
	}
	if (!c.is_app() || c.num_args() != 2)
		return;
	Z3_decl_kind kind = c.decl().decl_kind();
	if (kind != Z3_OP_LT && kind != Z3_OP_EQ)
		return;
	bool num_left = c.arg(0).is_numeral(), num_right = c.arg(1).is_numeral();
	if (!num_left && !num_right) {
		if (kind == Z3_OP_LT)  /* x < y, or y <= x: one side's bound onto the other */
			narrow_pair(taken ? c.arg(0) : c.arg(1), taken ? c.arg(1) : c.arg(0), taken ? 1 : 0);
		return;
	}
	if (num_left && num_right)
		return;
	z3::expr x = num_left ? c.arg(1) : c.arg(0);
	std::string digits = (num_left ? c.arg(0) : c.arg(1)).get_decimal_string(0);
	if (digits.empty() || digits[0] == '-')
		return;
	u128 n = 0;
	for (char ch : digits)
		n = n * 10 + (u128)(ch - '0');
	u128 lo = 0, hi = ~(u128)0;
	if (kind == Z3_OP_EQ) {
		if (taken)
			lo = hi = n;
		else if (n == 0)
			lo = 1;
		else
			return;
	} else if (num_left) {  /* n < x */
		if (taken)
			lo = n + 1;
		else
			hi = n;
	} else {  /* x < n */
		if (!taken)
			lo = n;
		else if (n == 0)
			return;
		else
			hi = n - 1;
	}
	bound(x, lo, hi);
}

// What the live Words know of a term: the bounds of an atom that is it.
std::optional<std::pair<u128, u128>> Explorer::known(const z3::expr &x) const
{
	for (Node *w = live_words(); w; w = w->next)
		if (w->session == session().id)
			for (const Atom &t : w->val->a)
				if (z3::eq(t.e, x))
					return std::make_pair(t.lo, t.hi);
	return std::nullopt;
}

// x + gap <= y (gap 1: x < y; 0: x <= y), both atoms
void Explorer::narrow_pair(const z3::expr &x, const z3::expr &y, unsigned gap)
{
	auto bx = known(x), by = known(y);
	if (!bx || !by)
		return;
	if (by->second >= gap)
		bound(x, 0, by->second - gap);
	bound(y, bx->first + gap, ~(u128)0);
}

// x in [lo, hi] on this path: onto every live Word that has x as an atom
void Explorer::bound(const z3::expr &x, u128 lo, u128 hi)
{
	for (Node *w = live_words(); w; w = w->next) {
		if (w->session != session().id)
			continue;
		Val &v = *w->val;
		for (Atom &t : v.a)
			if (z3::eq(t.e, x)) {
				t.lo = std::max(t.lo, lo);
				t.hi = std::min(t.hi, hi);
				if (v.a.size() == 1 && t.coeff == 1 && v.c >= 0) {  /* the value is x + c */
					v.lo = std::max(v.lo, t.lo + (u128)v.c);
					v.hi = std::min(v.hi, t.hi + (u128)v.c);
				}
			}
	}
}

uint64_t Explorer::concretize(const z3::expr &e)
{
	z3::expr s = e.simplify();
	if (s.is_numeral())
		return s.get_numeral_uint64();
	solver_calls++;
	uint64_t v = 0;
	if (check_now(kExact, &e, &v) != z3::sat)
		throw PathEnd{Path::cut, "solver: no model for a concrete value"};
	if (!valid(e == int_of(v)))
		throw PathEnd{Path::cut, "a symbolic value used as a number the path does not force"};
	return v;
}

// The wrap's amount the path forces, decided on the incremental solver's
// small budget (unknown: the mod stays), once per path condition (by its
// terms' ids): a run replaying the decisions computes the same terms.
std::optional<int> Explorer::wrap_shift(const z3::expr &e, unsigned n)
{
	if (!solver_)
		return std::nullopt;
	/* the width is part of the key: a term that does not wrap mod 2^64 may wrap mod 2^32 */
	std::tuple<std::vector<unsigned>, unsigned, unsigned> key{{}, e.id(), n};
	for (const z3::expr &f : pc_)
		std::get<0>(key).push_back(f.id());
	auto hit = wraps_.find(key);
	if (hit != wraps_.end())
		return hit->second;
	std::optional<int> out;
	z3::expr top = int_of(pow2(n));
	auto in = [&](int k) {
		z3::expr lo = k < 0 ? -int_of((u128)-k * pow2(n)) : int_of((u128)k * pow2(n));
		return e >= lo && e < lo + top;
	};
	uint64_t witness_k = 0;
	bool got = false;
	solver_calls++;
	z3::expr outside0 = purified(!in(0));  /* before the push: its definitions stay */
	solver_->push();
	solver_->add(outside0);
	z3::check_result r = timed_check(*solver_);
	if (r == z3::unsat) {
		out = 0;
	} else if (r == z3::sat) {
		z3::expr v = solver_->get_model().eval(session().purify(e), true);
		std::string d = v.is_numeral() ? v.get_decimal_string(0) : "";
		if (!d.empty()) {
			bool neg = d[0] == '-';
			u128 a = 0;
			for (char ch : d.substr(neg ? 1 : 0))
				a = a * 10 + (u128)(ch - '0');
			/* floor(v / 2^n) */
			i128 k = neg ? -(i128)((a + pow2(n) - 1) / pow2(n)) : (i128)(a / pow2(n));
			if (k >= -2 && k <= 2) {
				witness_k = (uint64_t)(int64_t)k;
				got = true;
			}
		}
	}
	solver_->pop();
	if (!out && got) {
		int k = (int)(int64_t)witness_k;
		solver_calls++;
		z3::expr outside_k = purified(!in(k));
		solver_->push();
		solver_->add(outside_k);
		if (timed_check(*solver_) == z3::unsat)
			out = k;
		solver_->pop();
	}
	keep_.push_back(e);
	keep_.insert(keep_.end(), pc_.begin(), pc_.end());
	wraps_.emplace(std::move(key), out);
	return out;
}

bool Explorer::prior_pte()
{
	if (!session().prior_ptes)
		return false;
	static const char site = 0;  /* one branch site for every such lookup */
	return decide(session().c.bool_const(fresh("pte").c_str()), &site);
}

Node *Explorer::live(uint64_t serial) const
{
	for (Node *n = live_words(); n; n = n->next)
		if (n->serial == serial && n->session == session().id)
			return n;
	return nullptr;
}

std::vector<Explorer::Saved> Explorer::snapshot() const
{
	std::vector<Saved> out;
	for (Node *n = live_words(); n; n = n->next)
		if (n->session == session().id)
			out.push_back({n, n->serial, *n->val});
	return out;
}

// after - before mod 2^bits when it is one constant, read off the forms
// (wrapped ones through their inner forms): the same atoms, constants that
// differ. Anything else is not a translation (no solver call: a loop head
// is looked for at every branch).
std::optional<uint64_t> Explorer::delta(const Val &before, const Val &after, unsigned bits)
{
	// a value wrapped to this width is its inner form, mod 2^bits
	auto unwrapped = [&](const Val &v) -> const Val & {
		if (v.a.size() == 1 && v.c == 0 && v.a[0].coeff == 1 && v.a[0].inner && v.a[0].wrapped == bits)
			return *v.a[0].inner;
		return v;
	};
	const Val &b = unwrapped(before), &a = unwrapped(after);
	if (a.a.size() != b.a.size())
		return std::nullopt;
	for (size_t i = 0; i < a.a.size(); i++)
		if (a.a[i].coeff != b.a[i].coeff || !z3::eq(a.a[i].e, b.a[i].e))
			return std::nullopt;
	return (uint64_t)(a.c - b.c) & mask(bits);
}

// Before a decision at `site`: the generic visit of an accelerated loop, or
// the discovery of a loop head (then the run restarts with a plan).
void Explorer::loop_head(const z3::expr &cond, const void *site)
{
	unsigned visit = ++visits_[site];
	(void)cond;
	if (active_) {
		if (site != active_->site)
			return;  /* one accelerated loop per path */
		generic_visit();
		return;
	}
	for (const Plan &plan : plans_)
		if (plan.site == site)
			return;  /* planned: after_decision acts on it */
	std::vector<Saved> now = snapshot();
	auto last = last_.find(site);
	if (last == last_.end()) {
		last_[site] = std::move(now);
		return;
	}
	// a loop head: every live Word on the stack is the object it was at
	// the last visit (the same activation), and those that changed moved
	// by constants
	std::unordered_set<uint64_t> before;
	for (const Saved &w : last->second)
		before.insert(w.serial);
	char here;
	bool same_activation = std::all_of(now.begin(), now.end(), [&](const Saved &w) {
		return before.count(w.serial) || !on_stack(w.node, &here);
	});
	Plan plan{site, visit - 1, {}, {}, last_dir_[site]};
	if (same_activation) {
		std::map<uint64_t, const Saved *> old;
		for (const Saved &w : last->second)
			old[w.serial] = &w;
		for (const Saved &w : now) {
			auto o = old.find(w.serial);
			if (o == old.end() || same(o->second->val, w.val))
				continue;
			std::optional<uint64_t> d = delta(o->second->val, w.val, w.node->bits);
			if (!d) {
				plan.carried.clear();
				break;
			}
			plan.carried.push_back(w.serial);
			plan.delta.push_back(*d);
		}
	}
	// and the trip before moved the same Words by the same amounts: two
	// visits alone may be two calls of one helper in the same frame, with
	// a flag set between them (v3's fault path: vm_flags), no loop at all
	auto trip = std::make_pair(plan.carried, plan.delta);
	auto before_trip = last_trip_.find(site);
	bool confirmed = !plan.carried.empty() && before_trip != last_trip_.end() && before_trip->second == trip;
	if (!confirmed) {
		last_trip_[site] = std::move(trip);
		last->second = std::move(now);
		return;
	}
	plans_.push_back(std::move(plan));
	throw Restart{};
}

// After a decision at `site`: a planned loop's first visit makes the carried
// Words fresh full-range atoms v (equal to their values), its second turns
// them into x, the state of any later trip.
void Explorer::after_decision(const z3::expr &cond, const void *site, bool taken)
{
	last_dir_[site] = taken;
	if (active_)
		return;
	for (const Plan &plan : plans_) {
		if (plan.site != site)
			continue;
		unsigned visit = visits_[site];
		if (visit == plan.visit && taken == plan.dir) {
			Symbolized z{&plan, {}, {}};
			for (uint64_t serial : plan.carried) {
				Node *n = live(serial);
				if (!n)
					throw PathEnd{Path::cut, "loop: a carried value went away"};
				z3::expr v = session().c.int_const(fresh("at").c_str());
				assume(v == n->val->expr());
				*n->val = term(v, 0, pow2(n->bits) - 1);  /* no bound: nothing folds on it */
				z.v.push_back(v);
				z.bits.push_back(n->bits);
			}
			symbolized_ = std::move(z);
		} else if (visit == plan.visit + 1 && taken == plan.dir && symbolized_ && symbolized_->plan == &plan) {
			havoc(cond, site, plan);
		}
		return;
	}
}

// value_t at this visit is v + s (mod 2^n); x = v + (m + 1) * s, m >= 0, is
// the state at the visit m trips later, whose decision went the same way:
// cond with v replaced by x - s (mod 2^n). The Int form (no wrap) holds at
// m = 0 (checked) and, trip by trip, by generic_visit's check.
void Explorer::havoc(const z3::expr &cond, const void *site, const Plan &plan)
{
	const Symbolized &z = *symbolized_;
	z3::expr m = session().c.int_const(fresh("trip").c_str());
	assume(m >= 0);
	Active a{site, plan.carried, {}, {}};
	z3::expr_vector from(session().c), to(session().c);
	std::vector<z3::expr> next;
	for (size_t i = 0; i < plan.carried.size(); i++) {
		Node *n = live(plan.carried[i]);
		if (!n)
			throw PathEnd{Path::cut, "loop: a carried value went away"};
		z3::expr mod = int_of(pow2(z.bits[i]));
		/* the delta as a signed step: a trip adds s (mod 2^n), |s| < 2^(n-1) */
		i128 s = (u128)plan.delta[i] < pow2(z.bits[i] - 1) ? (i128)plan.delta[i]
								     : (i128)plan.delta[i] - (i128)pow2(z.bits[i]);
		z3::expr sv = s < 0 ? -int_of((u128)-s) : int_of((u128)s);
		const z3::expr &v = z.v[i];
		if (!valid(z3::mod(n->val->expr() - v - sv, mod) == 0))
			throw PathEnd{Path::cut, "loop: the second trip moved a value by another amount"};
		if (!valid(v + sv >= 0 && v + sv < mod))
			throw PathEnd{Path::cut, "loop: a carried value wraps in the first trip"};
		z3::expr x = session().c.int_const(fresh("loop").c_str());
		assume(x == v + (m + 1) * sv && x >= 0 && x < mod);
		from.push_back(v);
		to.push_back(z3::mod(x - sv, mod));
		*n->val = term(x, 0, pow2(z.bits[i]) - 1);
		a.x.push_back(x);
		a.step.push_back(sv);
	}
	// the decision at the visit m trips later went the same way
	z3::expr later = z3::expr(cond).substitute(from, to);
	assume(plan.dir ? later : !later);
	active_ = std::move(a);
	accelerated++;
}

// The generic trip is over: it moved each x by its step (mod 2^n), and if
// the loop goes on, no carried value leaves [0, 2^n) as an integer: then
// the Int form of havoc admits every real trip. The path ends: every later
// trip is this one with a larger m.
void Explorer::generic_visit()
{
	z3::expr_vector in_range(session().c);
	for (size_t i = 0; i < active_->carried.size(); i++) {
		Node *n = live(active_->carried[i]);
		if (!n)
			throw PathEnd{Path::cut, "loop: a carried value went away"};
		z3::expr mod = int_of(pow2(n->bits));
		const z3::expr &x = active_->x[i], &s = active_->step[i];
		if (!valid(z3::mod(n->val->expr() - x - s, mod) == 0))
			throw PathEnd{Path::cut, "loop: the generic trip moved a value by another amount"};
		in_range.push_back(x + s + s >= 0 && x + s + s < mod);
	}
	pending_check_ = z3::mk_and(in_range);
}

}  // namespace fl::sym
