// SPDX-License-Identifier: GPL-2.0-only
#include "check/interleave/linearize.h"

#include <cerrno>

#include "base/order_search.h"
#include "check/execution.h"
#include "check/program_text.h"

namespace fl::interleave {

namespace {

// The sequential specification: the Program with the group's ops in a
// candidate order, run op by op on a fresh machine and compared with the
// observed trace as it goes.
class Spec {
public:
	Spec(const Program &p, const Config &cfg, const Group &g, const Trace &seen)
		: p_(p), cfg_(cfg), g_(g), seen_(seen), q_(p)
	{
		q_.schedule.clear();
		q_.expects.clear();
		for (size_t i = g.begin; i < g.end; i++)
			relaxed_.push_back(busy_freeze(i));
	}

	size_t replay(const std::vector<size_t> &order)
	{
		const size_t n = order.size();
		for (size_t k = 0; k < n; k++) {
			q_.ops[g_.begin + k] = p_.ops[g_.begin + order[k]];
			q_.ops[g_.begin + k].thread = -1;
		}
		Execution e(q_, cfg_);
		for (size_t i = 0; i < g_.begin; i++)
			e.run_op(i);
		for (size_t k = 0; k < n; k++) {
			if (relaxed_[order[k]])
				continue;  // a failed freeze: no effect at any point
			Event ev = e.run_op(g_.begin + k);
			if (!(ev == seen_.events[g_.begin + order[k]]))
				return differs(order, k, g_.begin + order[k], std::move(ev));
		}
		for (size_t i = g_.end; i < p_.ops.size(); i++) {
			Event ev = e.run_op(i);
			if (!(ev == seen_.events[i]))
				return differs(order, n, i, std::move(ev));
		}
		return kMatch;
	}

	// The history and the closest order tried, for the report.
	std::string history(const OrderResult &r) const
	{
		std::string s = "no sequential order of the group's " + std::to_string(g_.end - g_.begin) +
				" ops gives the observed results (" + std::to_string(r.orders) + " orders, " +
				std::to_string(r.replays) + " replayed after pruning); observed:";
		for (int t = 0; t < g_.threads; t++)
			for (size_t i = g_.begin; i < g_.end; i++)
				if (p_.ops[i].thread == t)
					s += "\n    T" + std::to_string(t) + ": op " + std::to_string(i + 1) + " " +
					     format_event(p_, p_.ops[i], seen_.events[i]);
		s += "\n  closest order:";
		for (size_t id : closest_order_)
			s += " op " + std::to_string(g_.begin + id + 1) + " (T" +
			     std::to_string(p_.ops[g_.begin + id].thread) + ")";
		const Op &op = p_.ops[closest_op_];
		s += std::string("\n  first difference") + (closest_pos_ == closest_order_.size() ? " (after the group)" : "") +
		     ": op " + std::to_string(closest_op_ + 1) + " " + format_op(p_, op) + ": sequentially -> " +
		     format_result(op, closest_event_) + ", observed -> " + format_result(op, seen_.events[closest_op_]);
		return s;
	}
	size_t closest_op() const { return closest_op_; }

private:
	// map_freeze returns -EBUSY while a writer is in flight, which no
	// sequential order shows: map_update_elem is write-active for its
	// whole call (since "bpf: Fix toctou on read-only map's constant
	// scalar tracking"), and bpf_map_mmap raises write-active before
	// ->map_mmap and drops it again if that fails. The kernel allows it
	// (the caller retries), so such a freeze, when another thread of the
	// group updates or mmaps, counts as a failed freeze: no effect,
	// linearizable anywhere. A freeze that returned 0 is never relaxed.
	// Beside another freeze, too: map_freeze checks the fd's permission
	// (map_get_sys_perms, which loses FMODE_CAN_WRITE once the map is
	// frozen) before it takes freeze_mutex, so the loser of two concurrent
	// freezes gets -EBUSY from the frozen re-check under the mutex, where
	// every sequential order gives it -EPERM (found by the swarm on the
	// fixed kernel: a parent and its forked child both freezing).
	bool busy_freeze(size_t i) const
	{
		const Op &op = p_.ops[i];
		if (op.kind != OpKind::freeze || seen_.events[i].ret != -EBUSY)
			return false;
		for (size_t j = g_.begin; j < g_.end; j++)
			if (p_.ops[j].thread != op.thread &&
			    (p_.ops[j].kind == OpKind::update || p_.ops[j].kind == OpKind::mmap ||
			     p_.ops[j].kind == OpKind::freeze))
				return true;
		return false;
	}

	size_t differs(const std::vector<size_t> &order, size_t pos, size_t op, Event got)
	{
		if (closest_order_.empty() || pos > closest_pos_) {
			closest_order_ = order;
			closest_pos_ = pos;
			closest_op_ = op;
			closest_event_ = std::move(got);
		}
		return pos;
	}

	const Program &p_;
	Config cfg_;
	Group g_;
	const Trace &seen_;
	Program q_;
	std::vector<bool> relaxed_;  // per group op: a busy freeze (busy_freeze)
	std::vector<size_t> closest_order_;
	size_t closest_pos_ = 0, closest_op_ = 0;
	Event closest_event_;
};

}  // namespace

LinearizeResult check_linearizable(const Program &p, const Config &cfg, const Group &g, const Trace &trace,
				   const std::vector<size_t> &completion, uint64_t cap)
{
	LinearizeResult out;
	if (g.empty() || trace.events.size() != p.ops.size())
		return out;  // no group, or the run stopped early (another finding)
	OrderSearch search;
	search.cap = cap;
	search.threads.resize(size_t(g.threads));
	for (size_t i = g.begin; i < g.end; i++)
		search.threads[size_t(p.ops[i].thread)].push_back(i - g.begin);
	search.rank.assign(g.end - g.begin, g.end - g.begin);
	for (size_t k = 0; k < completion.size(); k++)
		search.rank[completion[k] - g.begin] = k;
	Spec spec(p, cfg, g, trace);
	const OrderResult r = search_orders(search, [&](const std::vector<size_t> &order) { return spec.replay(order); });
	out.replays = r.replays;
	switch (r.kind) {
	case OrderResult::linearizable:
		break;
	case OrderResult::too_many:
		out.note = "linearizability not checked: too many orders (" + std::to_string(r.orders) + ", " +
			   std::to_string(cap) + " replayed without a decision)";
		break;
	case OrderResult::not_linearizable:
		out.violation = Violation{Invariant::not_linearizable, spec.history(r)};
		out.op = spec.closest_op();
		break;
	}
	return out;
}

}  // namespace fl::interleave
