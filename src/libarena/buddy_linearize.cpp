// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_linearize.h"

#include <optional>

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

// The op as the sequential specification runs it, or nullopt when the
// concurrent run skipped it (it had no effect). The concurrent runner has
// rules of its own (a stale, interior or unaligned pointer is never freed,
// reinit and drain wait until the other CPUs are done): what it left out
// is left out of the candidates too, else they would all differ there.
std::optional<BuddyOp> spec_op(BuddyOp op, const std::string &seen)
{
	if (starts_with(seen, "skipped"))
		return std::nullopt;
	auto not_live = [](const Target &t) { return t.kind != Target::live && t.kind != Target::null; };
	if (op.kind == BuddyOp::nmi_free && not_live(op.target))
		return std::nullopt;
	if (op.kind == BuddyOp::free && op.has_nmi && not_live(op.nmi_target))
		op.has_nmi = false;
	if (op.kind == BuddyOp::free_bulk)
		for (Target &t : op.targets)
			if (not_live(t))
				t = Target{};
	return op;
}

}  // namespace

void check_buddy_linearizable(const BuddyProgram &p, BuddyVerdict &v)
{
	if (!p.concurrent || !v.ok || v.results.size() != p.ops.size())
		return;
	// The ops the candidates run (ids 0..n-1) and the program op each is.
	std::vector<BuddyOp> ops;
	std::vector<size_t> index;
	for (size_t i = 0; i < p.ops.size(); i++)
		if (std::optional<BuddyOp> op = spec_op(p.ops[i], v.results[i])) {
			ops.push_back(*op);
			index.push_back(i);
		}
	OrderSearch search;
	for (size_t id = 0; id < ops.size(); id++) {
		if (search.threads.size() <= ops[id].cpu)
			search.threads.resize(size_t(ops[id].cpu) + 1);
		search.threads[ops[id].cpu].push_back(id);
	}
	std::vector<size_t> rank_of(p.ops.size(), p.ops.size());
	for (size_t k = 0; k < v.completion.size(); k++)
		if (v.completion[k] < rank_of.size())
			rank_of[v.completion[k]] = k;
	for (size_t i : index)
		search.rank.push_back(rank_of[i]);

	BuddyProgram q;
	q.level = p.level;
	BuddyPins pins;
	std::vector<size_t> closest;
	size_t closest_pos = 0;
	std::string closest_got;
	const OrderResult r = search_orders(search, [&](const std::vector<size_t> &order) -> size_t {
		q.ops.clear();
		pins.orig.clear();
		pins.refs.clear();
		for (size_t id : order) {
			q.ops.push_back(ops[id]);
			pins.orig.push_back(index[id]);
			pins.refs.push_back(v.refs[index[id]]);
		}
		const BuddyVerdict w = run_buddy_program(q, pins);
		size_t bad = kMatch;
		std::string got;
		for (size_t k = 0; k < order.size() && bad == kMatch; k++) {
			if (!w.ok && w.op <= k) {
				bad = k;
				got = "a sequential failure: " + w.what;
			} else if (w.results[k] != v.results[index[order[k]]]) {
				bad = k;
				got = w.results[k];
			}
		}
		if (bad != kMatch && (closest.empty() || bad > closest_pos)) {
			closest = order;
			closest_pos = bad;
			closest_got = got;
		}
		return bad;
	});
	switch (r.kind) {
	case OrderResult::linearizable:
		return;
	case OrderResult::too_many:
		v.linearize_note = "linearizability not checked: too many orders (more than " + std::to_string(search.cap) + ")";
		return;
	case OrderResult::not_linearizable:
		break;
	}
	std::string what = "not_linearizable: no sequential order of the " + std::to_string(ops.size()) +
			   " ops gives the observed results (" + std::to_string(r.orders) + " orders, " +
			   std::to_string(r.replays) + " replayed after pruning); observed:";
	for (size_t t = 0; t < search.threads.size(); t++)
		for (size_t id : search.threads[t])
			what += "\n    CPU " + std::to_string(t) + ": op " + std::to_string(index[id] + 1) + " " +
				op_text(p.ops[index[id]]) + " -> " +
				v.results[index[id]];
	what += "\n  closest order:";
	for (size_t id : closest)
		what += " op " + std::to_string(index[id] + 1);
	const size_t op = index[closest[closest_pos]];
	what += "\n  first difference: op " + std::to_string(op + 1) + " " + op_text(p.ops[op]) + ": sequentially -> " + closest_got +
		", observed -> " + v.results[op];
	v.ok = false;
	v.op = op;
	v.what = std::move(what);
}

}  // namespace fl::libarena
