// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_linearize.h"

#include <algorithm>

#include "base/order_search.h"

namespace fl::libarena {

namespace {

bool starts_with(const std::string &s, const char *p) { return s.rfind(p, 0) == 0; }

std::string op_text(const BuddyOp &op)
{
	BuddyProgram one;
	one.ops = {op};
	std::string text = format_buddy_program(one);
	text = text.substr(text.find('\n') + 1);
	while (!text.empty() && text.back() == '\n')
		text.pop_back();
	return text;
}

// The concurrent runner has rules of its own: a stale, interior or
// unaligned pointer is never freed (the candidates, pinned runs, follow
// that rule too), reinit and drain wait until the other CPUs are done. An
// op it skipped had no effect: the candidates skip it too, in its place
// (an NMI armed before it still comes after it). An op whose lock failed
// runs: the candidates fail the same acquisitions (BuddyVerdict::fails), and
// what it did before its lock failed (a bulk's objects from its cache) is
// part of its effect.
bool skipped(const std::string &seen) { return starts_with(seen, "skipped"); }

// Where in `order` op k's result is settled: an NMI armed by op k (at=)
// fires inside its CPU's next op, or right after op k if it is the CPU's
// last; the prefix pruning needs the position whose prefix decides it.
size_t settled(const std::vector<BuddyOp> &ops, const std::vector<size_t> &order, size_t k, const std::string &seen)
{
	if (!starts_with(seen, "armed"))
		return k;
	for (size_t j = k + 1; j < order.size(); j++)
		if (ops[order[j]].cpu == ops[order[k]].cpu)
			return j;
	return k;
}

}  // namespace

void check_buddy_linearizable(const BuddyProgram &p, BuddyVerdict &v)
{
	// (the runner's note: a lock failed beside an NMI; buddy_runner.cpp)
	if (!p.concurrent || !v.ok || v.results.size() != p.ops.size() || v.spans.size() != p.ops.size() ||
	    !v.linearize_note.empty())
		return;
	const std::vector<BuddyOp> &ops = p.ops;  // op ids are program indices
	OrderSearch search;
	// A join is a barrier: every op of a group comes before any of the next.
	for (size_t id = 0, g = 0; id < ops.size() && !p.joins.empty(); id++) {
		while (g < p.joins.size() && p.joins[g] <= id)
			g++;
		search.group.push_back(g);
	}
	// A candidate is a whole sequential allocator run with every check at
	// every point (tens of ms under ASan): 5,000 of them made one fuzz
	// input run over a minute (a 14-op series Program, libFuzzer's timeout).
	// Past 300 the run is counted as not checked, as over any cap.
	search.cap = 300;
	for (size_t id = 0; id < ops.size(); id++) {
		if (search.threads.size() <= ops[id].cpu)
			search.threads.resize(size_t(ops[id].cpu) + 1);
		search.threads[ops[id].cpu].push_back(id);
	}
	// The completion order first (a linearization of most correct runs),
	// and never an op before one that ended before it began, unless an NMI
	// handler ran across another CPU's op (BuddyVerdict::real_time): then
	// the completion order only.
	search.spans = v.spans;
	if (!v.real_time) {
		for (const auto &span : v.spans)
			search.rank.push_back(size_t(span.second));  // the hint OrderSearch takes from spans
		search.spans.clear();
	}

	BuddyProgram q;
	q.level = p.level;
	BuddyPins pins;
	pins.fails = v.fails;
	std::vector<size_t> closest;
	size_t closest_pos = 0, closest_op = 0;  // where it is settled, the op that differs
	std::string closest_got;
	const OrderResult r = search_orders(search, [&](const std::vector<size_t> &order) -> size_t {
		q.ops.clear();
		pins.orig.clear();
		pins.refs.clear();
		pins.skipped.clear();
		for (size_t id : order) {
			const std::string &seen = v.results[id];
			pins.skipped.push_back(skipped(seen) ? seen : std::string());
			q.ops.push_back(ops[id]);
			pins.orig.push_back(id);
			pins.refs.push_back(v.refs[id]);
		}
		const BuddyVerdict w = run_buddy_program(q, pins);
		// The first settled difference, and which op's; nothing past a
		// failure of the sequential run's own checks is compared.
		size_t bad = kMatch, bad_op = 0;
		std::string got;
		const size_t failed = w.ok ? order.size() : std::min<size_t>(w.op, order.size() - 1);
		for (size_t k = 0; k < order.size(); k++) {
			const std::string &seen = v.results[order[k]];
			const size_t at = settled(ops, order, k, seen);
			if (at < failed && at < bad && w.results[k] != seen) {
				bad = at;
				bad_op = k;
				got = w.results[k];
			}
		}
		if (failed < order.size() && failed < bad) {
			bad = bad_op = failed;
			got = "a sequential failure: " + w.what;
		}
		if (bad != kMatch && (closest.empty() || bad > closest_pos)) {
			closest = order;
			closest_pos = bad;
			closest_op = bad_op;
			closest_got = got;
		}
		return bad;
	});
	switch (r.kind) {
	case OrderResult::linearizable:
		return;
	case OrderResult::too_many:
		v.linearize_note = "linearizability not checked: too many orders (" + std::to_string(r.orders) + ", " +
				   std::to_string(search.cap) + " replayed without a decision)";
		return;
	case OrderResult::not_linearizable:
		break;
	}
	std::string what = "not_linearizable: no sequential order of the " + std::to_string(ops.size()) +
			   " ops gives the observed results (" + std::to_string(r.orders) + " orders, " +
			   std::to_string(r.replays) + " replayed after pruning); observed:";
	for (size_t t = 0; t < search.threads.size(); t++)
		for (size_t id : search.threads[t])
			what += "\n    CPU " + std::to_string(t) + ": op " + std::to_string(id + 1) + " " +
				op_text(p.ops[id]) + " -> " +
				v.results[id];
	what += "\n  closest order:";
	for (size_t id : closest)
		what += " op " + std::to_string(id + 1);
	const size_t op = closest[closest_op];
	what += "\n  first difference: op " + std::to_string(op + 1) + " " + op_text(p.ops[op]) + ": sequentially -> " + closest_got +
		", observed -> " + v.results[op];
	v.ok = false;
	v.op = op;
	v.what = std::move(what);
}

}  // namespace fl::libarena
