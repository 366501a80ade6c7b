// SPDX-License-Identifier: GPL-2.0-only
// The explorer behind the symbolic build: runs a piece of the port once per
// feasible path (depth first over the branches on symbolic conditions, a
// solver call at each new fork) and hands back each path's condition, the
// PTEs the port installed on it and what the run returned.
//
// Loops whose trip count is symbolic (remap_vmalloc_range_partial's remap
// loop, v3's ->map_pages window) are accelerated at a loop head: a branch
// visited again in the same activation (every live Word is the same object
// as at the visit before) where the Words that changed moved by constants.
// The run restarts with those Words made symbolic at the earlier visit; at
// the later one they become fresh variables x = (earlier value + m * delta)
// for a fresh m >= 1, standing for any later trip. One generic trip runs,
// and at the next visit the explorer checks that it moved x by the same
// deltas and ends the path (subsumed: every later trip is that trip with a
// larger m) where no carried value wraps in the next trip; where one may
// (v3's window at vm_pgoff near ULONG_MAX) the path is cut. A loop head is
// a branch whose last two trips moved the same Words by the same amounts
// (two visits alone may be two calls of one helper).
//
// A C wrap (symbolic/word.h) the Words' bounds cannot rule out asks the
// path's condition first (wrap_shift): where it forces the value into
// [0, 2^n) (or one period off), the value stays a linear form without the
// mod, which keeps the window's clamps and the checks after them small. The conditions of the trips in between are dropped, an
// over-approximation: a proof stays a proof, and every counterexample is
// replayed on the concrete port (smt/replay.cpp).
#pragma once

#include <z3++.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "symbolic/word.h"

namespace fl::sym {

// One Z3 context with what every exploration in it shares: the input
// variables and their ranges, one variable per product of two terms (the
// same pair, the same variable, in every exploration: linear queries).
// Install it (Session::Scope) before any Word is built.
class Session {
public:
	Session();
	Session(const Session &) = delete;
	const uint64_t id;  // tells its Words from those of Sessions gone (symbolic/word.h Node)
	bool prior_ptes = false;  // page tables may hold PTEs the run did not install
	z3::context c;
	std::vector<z3::expr> domain;  // every variable's range, every abstraction's bound

	z3::expr var(const std::string &name, unsigned bits);  // in [0, 2^bits)
	z3::expr product(const Factor &x, const Factor &y);  // abstract
	z3::expr domain_formula() const;

	// The formula with every mod/div by a number replaced by a remainder
	// (quotient) variable, defined once for the session in `defs`
	// (t = m * q + r, 0 <= r < m): plain linear arithmetic, which Z3's
	// incremental core decides quickly, where mod terms made one branch
	// check take a quarter of a second (docs/proofs.md).
	z3::expr purify(const z3::expr &f);
	std::vector<z3::expr> defs;
	// the sat models of the rows' checks in this session, the newest last:
	// a later check whose every assertion one of them satisfies is sat
	// without a solver call (smt/main.cpp check_part)
	std::vector<z3::model> models;

	// The assertions a query needs: the conjuncts of `from` that share a
	// variable, transitively, with `roots`. A Session holds every
	// exploration of a setting; one level's branch or one path's disjunct
	// does not need the others' definitions, and Z3's heuristics wander
	// more with them (a loop check at v3's window went unknown after
	// pre's remap loop had been explored in the same session).
	std::vector<z3::expr> slice(const std::vector<z3::expr> &from, const std::vector<z3::expr> &roots);

	// The definitions (indices into defs) e's abstraction variables need,
	// transitively, that `have` does not hold yet; added to it
	std::vector<size_t> defs_for(const z3::expr &e, std::unordered_set<size_t> &have);

	struct Scope {
		explicit Scope(Session &s);
		~Scope();
		Session *prev;
	};

private:
	std::map<std::pair<unsigned, unsigned>, z3::expr> products_;  // by the factors' AST ids
	std::map<unsigned, z3::expr> factors_;                          // their terms, by id
	std::map<unsigned, z3::expr> purified_;                       // by AST id
	std::map<std::pair<unsigned, unsigned>, std::pair<z3::expr, z3::expr>> divmod_;  // (t, m) -> (q, r)
	std::map<unsigned, std::vector<unsigned>> consts_;  // an AST's variables (by id), by AST id
	std::map<unsigned, size_t> def_of_;                 // an abstraction variable's definition, by its id
	const std::vector<unsigned> &consts(const z3::expr &e);
	std::vector<z3::expr> keep_;  // the ASTs the maps' ids name stay alive
};

Session &session();

// s.check() within a deterministic budget: Z3 4.8's older arithmetic core
// on a doubling budget (restarts that keep what it learned), then the newer
// one, which decides some queries the older one wanders on, as a last
// resort (the table never reaches it); timeout_ms: a wall-clock guard on
// each try
z3::check_result check_portfolio(z3::solver &s, unsigned rlimit, unsigned timeout_ms = UINT32_MAX);

// What a run saw the port do, in order: a PTE installed (user address, the
// page's area id or -1 for the direct map, its index there), an
// f_op->mmap call (the VMA it got and what it returned), or the user fault
// the row takes (its address: a path cut later still says where it was).
struct Event {
	enum Kind { install, mmap, fault } kind;
	z3::expr a;  // install: the user address; mmap: vm_pgoff; fault: the address
	z3::expr b;  // install: the page index; mmap: vm_start
	z3::expr c;  // mmap: vm_end
	int area = -1;
	int ret = 0;  // mmap's return value
};

struct Path {
	enum Status { done, subsumed, bug, cut };
	Path() : cond(session().c) {}
	Status status = done;
	z3::expr cond;              // this path's decisions and loop facts
	std::vector<Event> events;  // in order
	std::string why;            // bug, cut: where and why
};

// the current explorer's Explorer::saw (for the world's probes)
void saw(Event e);

class Explorer {
public:
	// name: prefixes the explorer's own variables, so two explorations
	// can share one query without sharing loop variables
	// exact_products: x * y of two terms stays x * y (nonlinear), else one
	// variable per pair (Session::product)
	explicit Explorer(std::string name, bool exact_products = false, unsigned max_decisions = 4000)
	    : exact_products(exact_products), name_(std::move(name)), max_decisions_(max_decisions)
	{
	}
	const bool exact_products;
	Explorer(const Explorer &) = delete;

	template <class R> struct Result {
		std::vector<Path> paths;
		std::vector<std::optional<R>> out;  // done paths: what body returned
	};
	// body once per feasible path
	template <class R> Result<R> explore(const std::function<R()> &body)
	{
		Result<R> r;
		std::optional<R> last;
		run_all([&]() { last.emplace(body()); }, [&](Path p) {
			r.paths.push_back(std::move(p));
			r.out.push_back(std::move(last));
			last.reset();
		});
		return r;
	}
	unsigned forks = 0, solver_calls = 0, accelerated = 0, runs = 0, fresh_checks = 0;

	// The paths one at a time, for a caller that may stop early (a
	// counterexample found): start, then next() until it says none is
	// left. The body's Words must not outlive a run.
	void start(std::function<void()> body);
	std::optional<Path> next();

	// the hooks of symbolic/word.h and symbolic/containers.h
	bool decide(z3::expr cond, const void *site);
	uint64_t concretize(const z3::expr &e);
	bool prior_pte();
	std::optional<int> wrap_shift(const z3::expr &e, unsigned n);
	void saw(Event e) { events_.push_back(std::move(e)); }

private:
	struct Saved {
		Node *node;
		uint64_t serial;
		Val val;
	};
	struct Plan {  // a loop head: after visit `visit` of `site`, decided `dir`
		const void *site;
		unsigned visit;
		std::vector<uint64_t> carried;  // serials of the Words the loop carries
		std::vector<uint64_t> delta;    // what a trip adds to each (mod 2^n)
		bool dir;                       // the decision that goes on looping
	};
	struct Symbolized {  // the carried Words' values at the plan's visit
		const Plan *plan;
		std::vector<z3::expr> v;
		std::vector<unsigned> bits;
	};
	struct Active {  // the accelerated loop of this run
		const void *site;
		std::vector<uint64_t> carried;
		std::vector<z3::expr> x;     // the generic state
		std::vector<z3::expr> step;  // signed trip deltas
	};
	struct Restart {};

	void run_all(const std::function<void()> &body, const std::function<void(Path)> &finish);
	void start_run();
	bool choose(const z3::expr &cond);
	bool feasible(const z3::expr &f, unsigned budget = 20'000'000, std::optional<z3::model> *model = nullptr);
	std::optional<bool> witnessed(const z3::expr &cond);
	bool valid(const z3::expr &f) { return !feasible(!f); }
	void assume(const z3::expr &f);
	z3::expr purified(const z3::expr &f);
	z3::check_result check_now(unsigned rlimit, const z3::expr *probe = nullptr, uint64_t *value = nullptr);
	z3::expr pc() const;
	std::string fresh(const char *what);
	Node *live(uint64_t serial) const;
	std::vector<Saved> snapshot() const;
	std::optional<uint64_t> delta(const Val &before, const Val &after, unsigned bits);
	void loop_head(const z3::expr &cond, const void *site);
	void after_decision(const z3::expr &cond, const void *site, bool taken);
	void havoc(const z3::expr &cond, const void *site, const Plan &plan);
	void generic_visit();
	static bool on_stack(const void *p, const void *here);
	void narrow(const z3::expr &cond, bool taken);
	void narrow_pair(const z3::expr &x, const z3::expr &y, unsigned gap);
	std::optional<std::pair<u128, u128>> known(const z3::expr &x) const;
	void bound(const z3::expr &x, u128 lo, u128 hi);

	std::string name_;
	unsigned max_decisions_;
	std::function<void()> body_;
	struct Job {
		std::vector<bool> prefix;  // the decisions to replay
		std::vector<Plan> plans;   // the loop heads found on the way
	};
	std::vector<bool> prefix_;  // the decisions this run replays, then extends
	std::vector<Job> todo_;
	size_t pos_ = 0;
	unsigned fresh_ = 0;
	std::vector<z3::expr> pc_;
	std::vector<Event> events_;
	std::optional<z3::solver> solver_;  // incremental, for the whole exploration
	bool incremental_sat_ = false;      // check_now's answer was the incremental solver's sat
	// per run: a model of the path's first witness_pc_ conditions (and the
	// domain), from a branch check that was sat: a branch it decides needs
	// no solver call that way
	std::optional<z3::model> witness_;
	size_t witness_pc_ = 0;
	size_t scopes_ = 0;
	std::unordered_set<size_t> defs_in_;  // the session's definitions in solver_
	std::vector<size_t> defs_scoped_;     // of those, added inside the path's scopes (start_run keeps them)
	std::map<const void *, unsigned> visits_;               // per run
	std::map<const void *, std::vector<Saved>> last_;       // per run
	// per run: the Words the last trip moved (serials) and by how much
	std::map<const void *, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> last_trip_;
	std::vector<Plan> plans_;                               // per job
	std::optional<Symbolized> symbolized_;                  // per run
	std::optional<Active> active_;                          // per run
	std::optional<z3::expr> pending_check_;                 // per run: the generic visit's
	std::map<const void *, bool> last_dir_;                 // per run
	// wrap_shift's answers by (the path condition's terms, the term)
	// by (the path condition's term ids, the term's id, the width n)
	std::map<std::tuple<std::vector<unsigned>, unsigned, unsigned>, std::optional<int>> wraps_;
	std::vector<z3::expr> keep_;  // the terms wraps_ names by id
};

}  // namespace fl::sym
