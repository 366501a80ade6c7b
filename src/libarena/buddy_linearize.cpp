// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_linearize.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <string_view>

#include "base/coverage.h"
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

// The elements of the orders: the ops (ids 0..n-1, their program indices),
// then the handlers (or their calls apart) that ran between ops (n + e:
// BuddyVerdict::between[e]).
struct Elements {
	const BuddyProgram &p;
	const BuddyVerdict &v;
	size_t n() const { return p.ops.size(); }
	int cpu(size_t id) const { return p.ops[id < n() ? id : v.between[id - n()].after].cpu; }
	const std::string &seen(size_t id) const { return id < n() ? v.results[id] : v.between[id - n()].result; }
	std::string text(size_t id) const
	{
		if (id < n())
			return "op " + std::to_string(id + 1) + " " + op_text(p.ops[id]);
		const BuddyVerdict::Between &b = v.between[id - n()];
		const std::string nmi = "the NMI after op " + std::to_string(b.after + 1) + " (armed by op " +
					std::to_string(b.armed_by + 1) + ")";
		if (b.call < 0)
			return nmi;
		return "call " + std::to_string(b.call + 1) + " (" + op_text(p.ops[b.armed_by].body[size_t(b.call)]) + ") of " + nmi;
	}
	// In the closest order's list.
	std::string brief(size_t id) const
	{
		if (id < n())
			return "op " + std::to_string(id + 1);
		const BuddyVerdict::Between &b = v.between[id - n()];
		return "(NMI after op " + std::to_string(b.after + 1) +
		       (b.call < 0 ? std::string() : ", call " + std::to_string(b.call + 1)) + ")";
	}
};

// Where in `order` element k's result is settled: an NMI armed by op k (at=)
// may fire inside its CPU's next element, an op; the prefix pruning needs the
// position whose prefix decides it.
size_t settled(const Elements &el, const std::vector<size_t> &order, size_t k)
{
	if (order[k] >= el.n() || !starts_with(el.seen(order[k]), "armed"))
		return k;
	for (size_t j = k + 1; j < order.size(); j++)
		if (el.cpu(order[j]) == el.cpu(order[k]))
			return j;
	return k;
}

std::atomic<bool> g_shortcuts{true};

// The elements in the order they began in the concurrent run (or ended
// in: `by_end`), as far as the search's orders allow: each CPU's order
// kept (a handler after its op, though it may end first), the groups in
// turn, and real-time order, which holds by construction but for those
// handlers and is checked (empty if broken).
std::vector<size_t> span_order(const Elements &el, const OrderSearch &search, bool by_end)
{
	auto at = [&](size_t id) {
		const std::pair<u64, u64> &span = id < el.n() ? el.v.spans[id] : el.v.between[id - el.n()].span;
		return by_end ? span.second : span.first;
	};
	std::vector<size_t> order, next(search.threads.size());  // per CPU: its next element
	while (true) {
		size_t best = SIZE_MAX, from = 0;
		for (size_t t = 0; t < search.threads.size(); t++) {
			if (next[t] == search.threads[t].size())
				continue;
			const size_t id = search.threads[t][next[t]];
			if (best == SIZE_MAX || std::pair(search.group[id], at(id)) < std::pair(search.group[best], at(best)))
				best = id, from = t;
		}
		if (best == SIZE_MAX)
			break;
		order.push_back(best);
		next[from]++;
	}
	for (size_t i = 0; i < order.size() && !search.spans.empty(); i++)
		for (size_t j = i + 1; j < order.size(); j++)
			if (search.spans[order[j]].second < search.spans[order[i]].first)
				return {};
	return order;
}

// One search of the orders of a run's elements: its outcome, whether a
// candidate missed a placed handler's place, and the report of a run no
// order explains.
struct Searched {
	OrderResult::Kind kind = OrderResult::linearizable;
	uint64_t orders = 0;
	size_t cap = 0;
	bool missed = false;
	size_t op = 0;
	std::string what;
};

Searched search_orders_of(const BuddyProgram &p, const BuddyVerdict &v, bool real_time)
{
	const std::vector<BuddyOp> &ops = p.ops;
	const Elements el{p, v};
	const size_t n = ops.size(), m = v.between.size();
	OrderSearch search;
	// A join is a barrier: every op of a group comes before any of the next.
	std::vector<size_t> group;
	for (size_t id = 0, g = 0; id < n; id++) {
		while (g < p.joins.size() && p.joins[g] <= id)
			g++;
		group.push_back(g);
	}
	// A candidate is a whole sequential allocator run (0.4 ms on average
	// under ASan over a grown buddy-series corpus, from a restored arena;
	// tens of ms before that, when 5,000 of them made one fuzz input run
	// over a minute). Past 300 the run is counted as not checked, as over
	// any cap.
	search.cap = 300;
	// Each CPU's ops in program order, each followed by the handlers that
	// came after it.
	for (size_t id = 0; id < n; id++) {
		if (search.threads.size() <= size_t(ops[id].cpu))
			search.threads.resize(size_t(ops[id].cpu) + 1);
		search.threads[ops[id].cpu].push_back(id);
		for (size_t e = 0; e < m; e++)
			if (v.between[e].after == id)
				search.threads[ops[id].cpu].push_back(n + e);
	}
	for (size_t e = 0; e < m; e++)
		group.push_back(group[v.between[e].after]);
	search.group = std::move(group);
	// The search starts from the order the elements first held the buddy
	// lock in (BuddyVerdict::locked), each element that never held it where
	// it ended: an op that waited for the lock, or ran an NMI handler
	// across other CPUs' ops, ends far past where what it did took effect,
	// and from the completion order the search went the long way round
	// (over the 1,780 inputs of a grown buddy-series corpus: 17,483
	// candidates replayed in its searches, 26 runs over the cap; from this
	// order: 702, 1). Never an element before one that ended before it
	// began, unless `real_time` is off.
	search.spans = v.spans;
	for (const auto &b : v.between)
		search.spans.push_back(b.span);
	for (size_t id = 0; id < search.spans.size(); id++) {
		// in half ticks: held after event t, before event t + 1
		const u64 locked = id < n ? v.locked[id] : v.between[id - n].locked;
		search.rank.push_back(size_t(locked ? 2 * locked + 1 : 2 * std::min<u64>(search.spans[id].second, UINT64_MAX / 4)));
	}
	if (!real_time)
		search.spans.clear();

	BuddyProgram q;
	q.level = p.level;
	q.ops.reserve(n);
	BuddyPins pins;
	pins.fails = v.fails;
	pins.placed = v.placed;
	// A candidate where a placed handler missed its place (its op took
	// another path there) is not an order that explains the run; if no
	// order does, the run is not checked rather than reported.
	bool missed = false;
	for (const auto &b : v.between)
		pins.nmis.push_back({b.armed_by, ops[b.after].cpu, b.call});
	const bool shortcuts = g_shortcuts;
	std::vector<size_t> position;  // per order position: the candidate op's, or the handler's
	std::vector<size_t> at;                             // per position k: where element k is settled
	std::vector<std::pair<size_t, size_t>> by_settled;  // (at[k], k), in that order
	// One candidate: where its first settled difference is (kMatch: none),
	// which element's, and what it gave there.
	struct Replayed {
		size_t bad = kMatch, bad_k = 0;
		std::string got;
	};
	// The candidates share prefixes: each resumes where the last one run
	// was after the elements they share (BuddyCandidates).
	BuddyCandidates candidates(q, pins);
	std::vector<size_t> last;  // the order of the last candidate run
	auto replay = [&](const std::vector<size_t> &order) {
		q.ops.clear();
		pins.orig.clear();
		pins.refs.clear();
		pins.skipped.clear();
		pins.fire_after.clear();
		position.clear();
		for (size_t id : order) {
			if (id >= n) {  // always after its op (the threads' order)
				pins.fire_after.back().push_back(id - n);
				position.push_back(id - n);
				continue;
			}
			const std::string &seen = v.results[id];
			position.push_back(q.ops.size());
			pins.skipped.push_back(skipped(seen) ? seen : std::string());
			q.ops.push_back(ops[id]);
			pins.orig.push_back(id);
			pins.refs.push_back(v.refs[id]);
			pins.fire_after.emplace_back();
		}
		auto result_of = [&](const BuddyVerdict &w, size_t k) -> const std::string & {
			return order[k] < n ? w.results[position[k]] : w.between[position[k]].result;
		};
		// The run stops once an element settled in the positions run so far
		// differs: a result only grows, and is complete where it is settled,
		// so the first settled difference is the one the whole run would
		// give (BuddyLinearize.ShortcutsGiveTheVerdictsOfThePlainSearch).
		at.resize(order.size());
		for (size_t k = 0; k < order.size(); k++)
			at[k] = settled(el, order, k);
		size_t next = 0;
		if (shortcuts) {
			by_settled.clear();
			for (size_t k = 0; k < order.size(); k++)
				by_settled.emplace_back(at[k], k);
			std::sort(by_settled.begin(), by_settled.end());
			pins.enough = [&](const BuddyVerdict &w, size_t begun) {
				for (; next < by_settled.size() && by_settled[next].first < begun; next++)
					if (result_of(w, by_settled[next].second) != el.seen(order[by_settled[next].second]))
						return true;
				return false;
			};
		}
		const size_t same = size_t(std::mismatch(order.begin(), order.end(), last.begin(), last.end()).first - order.begin());
		last = order;
		const BuddyVerdict w = candidates.run(same);
		pins.enough = nullptr;
		// The first settled difference, and which element's; nothing past a
		// failure of the sequential run's own checks is compared.
		Replayed c;
		const size_t failed = w.ok ? order.size() : std::min(w.failed_step, order.size() - 1);
		for (size_t k = 0; k < order.size(); k++) {
			const std::string &result = result_of(w, k);
			if (at[k] < failed && at[k] < c.bad && result != el.seen(order[k])) {
				c.bad = at[k];
				c.bad_k = k;
				c.got = result;
			}
		}
		if (failed < order.size() && failed < c.bad) {
			c.bad = c.bad_k = failed;
			c.got = "a sequential failure: " + w.what;
		}
		if (w.placed_missed && c.bad == kMatch) {
			c.bad = c.bad_k = order.size() - 1;
			c.got = "a placed NMI's point not reached";
		}
		missed |= w.placed_missed;
		return c;
	};
	// The order the elements began in first: in a run whose ops seldom
	// overlap, an op's effect comes near its start (a lock taken or failed
	// at once, then a switch), so this order is a linearization of most
	// correct runs, where the completion order is not (the grown
	// buddy-series corpus: 1,078 of 1,098 concurrent runs match it,
	// against 614 for the completion order, and 1,542 replays in all
	// against 13,282). Then the order they ended in: where an NMI handler
	// that an op armed ran late inside its CPU's next op, what it found
	// was the state near that op's end (the corpus of a 30-minute
	// campaign, 2026-12-07: of its 1,084 concurrent runs the search gave
	// up on 156 after 300 orders, and on 45 with the two orders first;
	// 19,733 replays in all instead of 57,734). Each is one of the orders
	// the search tries, so a match is the search's verdict; otherwise the
	// search runs as without them, reusing their replays if it comes to
	// the same orders.
	std::vector<std::pair<std::vector<size_t>, Replayed>> first;  // those orders, replayed
	for (const bool by_end : {false, true}) {
		std::vector<size_t> order = shortcuts ? span_order(el, search, by_end) : std::vector<size_t>();
		if (order.empty() || (!first.empty() && first[0].first == order))
			continue;
		Replayed c = replay(order);
		if (c.bad == kMatch)
			return {};
		first.emplace_back(std::move(order), std::move(c));
	}
	std::vector<size_t> closest;
	size_t closest_pos = 0, closest_k = 0;  // where it is settled, the element that differs
	std::string closest_got;
	const OrderResult r = search_orders(search, [&](const std::vector<size_t> &order) -> size_t {
		const auto done = std::find_if(first.begin(), first.end(), [&](const auto &f) { return f.first == order; });
		const Replayed c = done != first.end() ? done->second : replay(order);
		if (c.bad != kMatch && (closest.empty() || c.bad > closest_pos)) {
			closest = order;
			closest_pos = c.bad;
			closest_k = c.bad_k;
			closest_got = c.got;
		}
		return c.bad;
	});
	Searched out{r.kind, r.orders, search.cap, missed};
	if (r.kind != OrderResult::not_linearizable)
		return out;
	std::string what = "not_linearizable: no sequential order of the " + std::to_string(n + m) +
			   (m ? " ops and NMIs" : " ops") + " gives the observed results (" + std::to_string(r.orders) +
			   " orders, " + std::to_string(r.replays) + " replayed after pruning); observed:";
	for (size_t t = 0; t < search.threads.size(); t++)
		for (size_t id : search.threads[t])
			what += "\n    CPU " + std::to_string(t) + ": " + el.text(id) + " -> " + el.seen(id);
	what += "\n  closest order:";
	for (size_t id : closest)
		what += " " + el.brief(id);
	const size_t id = closest[closest_k];
	what += "\n  first difference: " + el.text(id) + ": sequentially -> " + closest_got + ", observed -> " + el.seen(id);
	out.op = id < n ? id : v.between[id - n].after;
	out.what = std::move(what);
	return out;
}

// The run with each handler that came before anything its op did
// (BuddyVerdict::Placed::ahead) an element of its own right before that
// op: after the op that armed it ("armed", its result until then), with
// its own result and span.
BuddyVerdict with_handlers_ahead(const BuddyVerdict &v)
{
	static constexpr std::string_view armed = "armed; ";
	BuddyVerdict w = v;
	w.placed.clear();
	for (const BuddyVerdict::Placed &at : v.placed) {
		std::string &result = w.results[at.armed_by];
		if (!at.ahead || result.rfind(armed, 0) != 0) {
			w.placed.push_back(at);
			continue;
		}
		w.between.push_back({at.armed_by, at.armed_by, result.substr(armed.size()), at.span});
		result.resize(armed.size() - 2);
	}
	return w;
}

}  // namespace

void set_buddy_linearize_shortcuts(bool on) { g_shortcuts = on; }

void check_buddy_linearizable(const BuddyProgram &p, BuddyVerdict &v)
{
	// (the runner's note: a lock failed beside an NMI; buddy_runner.cpp)
	if (!p.concurrent || !v.ok || v.results.size() != p.ops.size() || v.spans.size() != p.ops.size() ||
	    v.locked.size() != p.ops.size() || !v.linearize_note.empty())
		return;
	// A run where other CPUs ran inside an op before its NMI, or beside a
	// new chunk, is not checked if no order explains it, and passes if one
	// does: the search cannot fail it, so it is not run (on a grown
	// buddy-series corpus those runs were a quarter of the concurrent ones
	// and 70 % of the check's time).
	if (v.others_before_nmi) {
		v.linearize_note = "linearizability not checked: other CPUs ran inside an op before its NMI";
		return;
	}
	if (v.growth_overlapped) {
		v.linearize_note = "linearizability not checked: other CPUs ran while one got a new chunk";
		return;
	}
	// A run where a handler at a point inside an op ran across another
	// CPU's op (BuddyVerdict::real_time) may need an order out of real-time
	// order: the candidates run that handler as one step with its op, which
	// the run did not take. Most such runs have an order in it, among far
	// fewer orders (the cap-only corpus of a 30-minute buddy-series
	// campaign: 9 of the 10 such runs the search over each CPU's order gave
	// up on after 300 are decided after 25-145). Where none is found, each
	// CPU's order alone is searched. A match in real-time order is a match
	// without it, so this changes no verdict but a give-up (a shortcut).
	// The candidates replay the allocator: not the Program's edges.
	const CoverageUnobserved unobserved;
	auto search = [&](const BuddyVerdict &w) {
		Searched s = search_orders_of(p, w, w.real_time || g_shortcuts);
		if (s.kind != OrderResult::linearizable && !w.real_time && g_shortcuts)
			s = search_orders_of(p, w, false);
		return s;
	};
	Searched s = search(v);
	// A handler that came before anything its op did is a step of its own
	// before that op as much as a part of it: what other CPUs saw may need
	// either. Inside the op first (every run so far, unchanged); when no
	// order explains the run so, before it. Not the other way round: a
	// handler's free of the object its op is freeing is skipped as that
	// free's double (D2), which only the place inside the op repeats.
	if (s.kind == OrderResult::not_linearizable &&
	    std::any_of(v.placed.begin(), v.placed.end(), [](const BuddyVerdict::Placed &at) { return at.ahead; })) {
		Searched ahead = search(with_handlers_ahead(v));
		if (ahead.kind != OrderResult::not_linearizable)
			s = std::move(ahead);
	}
	switch (s.kind) {
	case OrderResult::linearizable:
		return;
	case OrderResult::too_many:
		v.linearize_note = "linearizability not checked: too many orders (" + std::to_string(s.orders) + ", " +
				   std::to_string(s.cap) + " replayed without a decision)";
		return;
	case OrderResult::not_linearizable:
		if (s.missed) {
			v.linearize_note = "linearizability not checked: a placed NMI's point was not reached in some orders";
			return;
		}
		if (v.others_after_nmi) {
			v.linearize_note = "linearizability not checked: other CPUs ran inside an op after its NMI";
			return;
		}
		break;
	}
	v.ok = false;
	v.op = s.op;
	v.what = std::move(s.what);
}

}  // namespace fl::libarena
