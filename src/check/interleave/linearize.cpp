// SPDX-License-Identifier: GPL-2.0-only
#include "check/interleave/linearize.h"

#include <cerrno>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "base/coverage.h"
#include "base/order_search.h"
#include "check/execution.h"
#include "check/program_text.h"

namespace fl::interleave {

namespace {

// The sequential specification: the Program with each group's ops in a
// candidate order, run op by op on a fresh machine and compared with the
// observed trace as it goes. With several groups the orders are chosen a
// group at a time: group k's candidates replay from the state the chosen
// orders of groups 0..k-1 and the sequential ops between them left, and an
// order of group k that matches its own results stands only if some order
// of group k+1 then matches too (a nested search; a whole-history order is
// one order per group, since every op of a group returned before the
// barrier that follows it).
class Spec {
public:
	Spec(const Program &p, const Config &cfg, const std::vector<Group> &groups, const Trace &seen,
	     const std::vector<size_t> &completion, uint64_t cap, const std::vector<Execution::OpAddresses> &used)
		: p_(p), cfg_(cfg), groups_(groups), seen_(seen), completion_(completion), cap_(cap), q_(p)
	{
		// A group op runs with the addresses it used (Execution::OpAddresses):
		// its labels were read when it began, maybe before an op racing it
		// rebound them (an mremap's as=), which no candidate order redoes.
		used_.resize(p.ops.size());
		for (const Group &g : groups)
			for (size_t i = g.begin; i < g.end && i < used.size(); i++)
				used_[i] = used[i];
		q_.schedule.clear();
		q_.expects.clear();
		relaxed_.resize(p.ops.size());
		rss_free_.resize(p.ops.size());
		held_.resize(p.ops.size());
		checked_early_.resize(p.ops.size());
		rebinds_.assign(p.ops.size(), -1);
		for (const Group &g : groups) {
			for (size_t i = g.begin; i < g.end; i++) {
				relaxed_[i] = busy_freeze(g, i) || unbound_beside_its_mapping(g, i) || call_beside_its_exit(g, i) ||
					      unborn_beside_its_fork(g, i);
				if (p.ops[i].kind == OpKind::fork && seen.events[i].ret > 0)  // a skip's ret is 0
					forked_pids_.insert(int(seen.events[i].ret));
			}
			for (size_t i = g.begin; i < g.end; i++) {
				held_[i] = its_file_beside_a_close(g, i);
				checked_early_[i] = its_check_beside_a_freeze(g, i);
			}
			last_binders(g);
		}
		for (const Group &g : groups)
			for (size_t i = g.begin; i < g.end; i++)
				rss_free_[i] = p.ops[i].kind == OpKind::smaps && another_thread_touches_mappings(p, g, p.ops[i].thread);
		for (const Group &g : groups)
			if (two_threads_touch_mappings(p, g)) {
				for (size_t i = g.begin; i < p.ops.size(); i++)
					rss_free_[i] = p.ops[i].kind == OpKind::smaps;
				break;
			}
	}

	// The search over group k's orders, each checked against what follows.
	OrderResult search(size_t k)
	{
		const Group &g = groups_[k];
		OrderSearch search;
		search.cap = cap_ > replays_ ? cap_ - replays_ : 0;
		search.threads.resize(size_t(g.threads));
		for (size_t i = g.begin; i < g.end; i++)
			search.threads[size_t(p_.ops[i].thread)].push_back(i - g.begin);
		search.rank.assign(g.end - g.begin, g.end - g.begin);
		size_t done = 0;
		for (size_t i : completion_)
			if (i >= g.begin && i < g.end)
				search.rank[i - g.begin] = done++;
		const OrderResult r =
			search_orders(search, [&](const std::vector<size_t> &order) { return replay(k, order); });
		if (r.kind == OrderResult::too_many)
			undecided_ = true;
		return r;
	}

	// A MAP_FIXED mmap is not one step for a freeze beside it, in a way no
	// order of whole ops can show, found by the threads fuzz target on the
	// fixed kernel (v2, 2026-12-05, 11 minutes in): mmap_region unmaps what
	// it replaces (do_vmi_munmap, whose ->close drops the old mapping's
	// write-active count; vms_clean_up_area since 6.12) before the new
	// mapping's ->mmap, so another thread's freeze in between succeeds
	// although the old writable mapping was there when the mmap began, and
	// the mmap, waiting on freeze_mutex, then fails with -EPERM with the old
	// mapping gone. Candidates that split such an mmap (its unmap apart from
	// its map) would check it; until then a group of this shape that no
	// order explains is not checked. (An mmap beside another thread's close
	// of the map fd, which took its file when it began and its address much
	// later, was the other shape here; the candidates hold its file now:
	// its_file_beside_a_close.)
	bool mmap_split_beside(size_t i, size_t j) const
	{
		const Op &m = p_.ops[i], &o = p_.ops[j];
		if (m.kind != OpKind::mmap || m.thread == o.thread)
			return false;
		return o.kind == OpKind::freeze && (m.has_at || (m.flags & uapi::MAP_FIXED));
	}
	bool mmap_not_one_step() const
	{
		for (const Group &g : groups_)
			for (size_t i = g.begin; i < g.end; i++)
				for (size_t j = g.begin; j < g.end; j++)
					if (mmap_split_beside(i, j))
						return true;
		return false;
	}

	// The history and the closest order tried, for the report.
	std::string history(const OrderResult &r) const
	{
		size_t n = 0;
		for (const Group &g : groups_)
			n += g.end - g.begin;
		std::string s = "no sequential order of the " +
				(groups_.size() > 1 ? std::to_string(groups_.size()) + " groups' " : std::string("group's ")) +
				std::to_string(n) + " ops gives the observed results (" + std::to_string(r.orders) +
				" orders of the first group, " + std::to_string(replays_) +
				" replayed after pruning); observed:";
		for (size_t k = 0; k < groups_.size(); k++) {
			const Group &g = groups_[k];
			if (groups_.size() > 1)
				s += "\n  group " + std::to_string(k + 1) + ":";
			for (int t = 0; t < g.threads; t++)
				for (size_t i = g.begin; i < g.end; i++)
					if (p_.ops[i].thread == t)
						s += "\n    T" + std::to_string(t) + ": op " + std::to_string(i + 1) + " " +
						     format_event(p_, p_.ops[i], seen_.events[i]);
		}
		s += "\n  closest order:";
		for (size_t i : closest_order_)
			s += " op " + std::to_string(i + 1) + " (T" + std::to_string(p_.ops[i].thread) + ")";
		const Op &op = p_.ops[closest_op_];
		s += std::string("\n  first difference") + (closest_after_ ? " (after the group)" : "") + ": op " +
		     std::to_string(closest_op_ + 1) + " " + format_op(p_, op) + ": sequentially -> " +
		     format_result(op, closest_event_) + ", observed -> " + format_result(op, seen_.events[closest_op_]);
		return s;
	}
	size_t closest_op() const { return closest_op_; }
	uint64_t replays() const { return replays_; }
	bool undecided() const { return undecided_; }

private:
	// Group k's ops in `order` (the earlier groups' slots of q_ hold their
	// chosen orders), replayed from op 0: the position in `order` of the
	// first op whose result differs, order.size() when only what follows
	// the group does, or kMatch.
	size_t replay(size_t k, const std::vector<size_t> &order)
	{
		const Group &g = groups_[k];
		const size_t n = order.size();
		for (size_t j = 0; j < n; j++) {
			q_.ops[g.begin + j] = p_.ops[g.begin + order[j]];
			q_.ops[g.begin + j].thread = -1;
			slot_[g.begin + j] = g.begin + order[j];
		}
		replays_++;
		Execution e(q_, cfg_);
		std::vector<Execution::OpAddresses> pins(q_.ops.size());
		for (size_t i = 0; i < pins.size(); i++)
			pins[i] = used_[slot_.count(i) ? slot_.at(i) : i];
		e.pin_addresses(std::move(pins));
		// Everything before the group is the chosen past: deterministic,
		// already compared, and run as it was chosen: a relaxed (busy)
		// freeze of an earlier group had no effect there, so none here.
		placed_.assign(p_.ops.size(), false);
		holds_.clear();
		unfrozen_.clear();
		pid_as_.clear();
		for (size_t i = 0; i < g.begin; i++) {
			run_in_candidate(e, i);
			if (const Group *past = group_of(i); past && past->end == i + 1)
				bind_as_returned(e, *past);
		}
		for (size_t j = 0; j < n; j++) {
			const size_t orig = g.begin + order[j];
			std::optional<Event> ev = run_in_candidate(e, g.begin + j);
			if (!ev)
				continue;  // relaxed: no effect at any point, no result to match
			if (!same(orig, *ev))
				return differs(k, j, orig, false, std::move(*ev));
		}
		bind_as_returned(e, g);
		const size_t next = k + 1 < groups_.size() ? groups_[k + 1].begin : p_.ops.size();
		for (size_t i = g.end; i < next; i++) {
			Event ev = run_named(e, i, i);
			if (!same(i, ev))
				return differs(k, n, i, true, std::move(ev));
		}
		if (k + 1 == groups_.size())
			return kMatch;
		// The next group from here (a fresh search: its replays rebuild
		// this prefix from q_).
		return search(k + 1).kind == OrderResult::linearizable ? kMatch : n;
	}

	// A label that two ops of the group bound (two threads' mmap B) names,
	// after the group, what the one that returned last in the run bound (a
	// label is bound when its op returns), not the one that took effect
	// last: an mmap takes its address under mmap_write_lock and returns
	// later. The candidate binds it likewise, from that op's result in the
	// candidate (found by the Interleave property on the fixed kernel,
	// every configuration: a store to B after the group faulted on the
	// read-only mapping of the mmap that returned last, while every order
	// bound B to the other; corpora/interleavings/regressions/label_bound_by_the_last_to_return.fl).
	// Which op that is comes from the run, once (last_binders).
	void bind_as_returned(Execution &e, const Group &g) const
	{
		for (size_t qi = g.begin; qi < g.end; qi++)
			if (const int label = rebinds_[slot_.at(qi)]; label >= 0 && e.bound_by(qi) >= 0)
				e.rebind(label, e.bound_by(qi));
	}
	void last_binders(const Group &g)
	{
		std::map<int, std::vector<size_t>> binders;  // label -> its group binders, as they returned
		for (size_t i : completion_) {
			const Op &op = p_.ops[i];
			const bool binds = op.kind == OpKind::mmap || op.kind == OpKind::reserve || op.kind == OpKind::mremap;
			if (i >= g.begin && i < g.end && binds && op.label >= 0 && seen_.events[i].ret == 0 &&
			    seen_.events[i].info.empty())
				binders[op.label].push_back(i);
		}
		for (const auto &[label, ops] : binders)
			if (ops.size() >= 2)
				rebinds_[ops.back()] = label;
	}

	// q_'s op qi in a candidate, or nothing when it is relaxed (no effect
	// at any point, no result to match), with the file holds of
	// its_file_beside_a_close (a close first takes the file for each such
	// op of its group that may have begun before it, and such an op runs
	// with the file it holds) and the early permission checks of
	// its_check_beside_a_freeze (a freeze that returned 0 first lets each
	// such update that may have begun before it check its permission, and
	// such an update runs as if the map were not frozen).
	std::optional<Event> run_in_candidate(Execution &e, size_t qi)
	{
		const size_t orig = slot_.count(qi) ? slot_.at(qi) : qi;
		const Op &op = p_.ops[orig];
		if (op.kind == OpKind::close && op.thread >= 0)
			for (size_t h : begun_beside(orig, held_)) {
				if (holds_.count(h))
					continue;
				if (const int id = e.machine().map_fd_hold(); id >= 0)
					holds_[h] = id;
			}
		if (op.kind == OpKind::freeze && op.thread >= 0 && seen_.events[orig].ret == 0)
			for (size_t u : begun_beside(orig, checked_early_))
				unfrozen_.insert(u);
		placed_[orig] = true;
		if (relaxed_[orig])
			return std::nullopt;
		Event ev;
		std::function<void()> run = [&] { ev = run_named(e, qi, orig); };
		if (unfrozen_.erase(orig))
			run = [&e, op = std::move(run)] { e.machine().map_checked_before_freeze(op); };
		const auto h = holds_.find(orig);
		if (h == holds_.end()) {
			run();
			return ev;
		}
		e.machine().map_fd_with_held(h->second, run);
		holds_.erase(h);
		return ev;
	}

	// A pid is a name, bound when its fork returns, as a label is: the
	// kernel's fork copies the mm (dup_mmap under mmap_write_lock) before
	// it allocates the pid (copy_process: copy_mm, then alloc_pid), so two
	// threads' forks can take their pids in the other order than their
	// copies. T0's fork copied the mm before T1's mmap A, and T1's fork
	// (after that mmap) took pid 1 before T0's took 2, so process 2 had no
	// A, where every order gives the second fork's child A (the threads fuzz
	// target at v3, 2026-12-07: corpora/interleavings/regressions/
	// pids_taken_in_the_other_order.fl). So in a candidate, the program's
	// pid P of a group's fork names the child that fork made there; the
	// fork's result, and a skip's "no process", are written back in the
	// program's names. Until that fork has run, P names no process.
	Event run_named(Execution &e, size_t qi, size_t orig)
	{
		const int named = p_.ops[orig].proc;
		const auto as = pid_as_.find(named);
		q_.ops[qi].proc = as != pid_as_.end() ? as->second : forked_pids_.count(named) ? kNoPid : named;
		Event ev = e.run_op(qi);
		if (q_.ops[qi].proc != named && ev.info == skipped_no_process(q_.ops[qi].proc))
			ev.info = skipped_no_process(named);
		const int64_t seen = seen_.events[orig].ret;
		if (p_.ops[orig].kind == OpKind::fork && forked_pids_.count(int(seen)) && ev.ret > 0) {
			pid_as_[int(seen)] = int(ev.ret);
			ev.ret = seen;
		}
		return ev;
	}
	static constexpr int kNoPid = 1 << 30;

	// The ops of `at`'s group marked in `which`, of another thread, not yet
	// placed, that may have begun before `at` in the candidate:
	// every op of their thread before them is placed (each began after
	// those returned).
	std::vector<size_t> begun_beside(size_t at, const std::vector<bool> &which) const
	{
		std::vector<size_t> out;
		const Group *g = group_of(at);
		const int t = p_.ops[at].thread;
		for (size_t h = g->begin; h < g->end; h++) {
			if (!which[h] || placed_[h] || p_.ops[h].thread == t)
				continue;
			bool began = true;
			for (size_t b = g->begin; b < h; b++)
				if (p_.ops[b].thread == p_.ops[h].thread && !placed_[b])
					began = false;
			if (began)
				out.push_back(h);
		}
		return out;
	}
	const Group *group_of(size_t i) const
	{
		for (const Group &g : groups_)
			if (i >= g.begin && i < g.end)
				return &g;
		return nullptr;
	}

	// A syscall on the map fd takes its file at its start and holds it to
	// its end (fdget ... fdput in map_freeze, map_update_elem and
	// map_lookup_elem; fget ... fput in ksys_mmap_pgoff), so beside another
	// thread's close of the fd (the machine has one fd table) it may
	// succeed as if before the close while what it decides comes after ops
	// that came after the close. The threads fuzz target (v3, 2026-12-06,
	// 21 minutes into a 30-minute campaign): T1's freeze took the file,
	// then T0 closed the fd and unmapped its writable mapping, and the
	// freeze, whose write-active check came after that, succeeded; every
	// order has the freeze before the munmap (-EBUSY) or after the close
	// (-EBADF). Such an op (one that did not fail with -EBADF, so it found
	// the file) takes its file in the candidates where a close comes before
	// it, at that close, if it may have begun by then (run_in_candidate);
	// the rest of it runs at its place in the order
	// (corpora/interleavings/regressions/freeze_with_its_file_beside_a_close.fl).
	bool its_file_beside_a_close(const Group &g, size_t i) const
	{
		const Op &op = p_.ops[i];
		const bool takes_the_fd = op.kind == OpKind::freeze || op.kind == OpKind::update ||
					  op.kind == OpKind::lookup || op.kind == OpKind::mmap;
		if (!takes_the_fd || relaxed_[i] || seen_.events[i].ret == -EBADF || !seen_.events[i].info.empty())
			return false;  // an op skipped by the harness ("skipped: ...") took nothing
		for (size_t j = g.begin; j < g.end; j++)
			if (p_.ops[j].kind == OpKind::close && p_.ops[j].thread != op.thread)
				return true;
		return false;
	}

	// map_update_elem checks the fd's write permission (map_get_sys_perms
	// reads frozen) right after it raises write-active, and writes the
	// value after copying it from user space; map_freeze checks
	// write-active, then stores frozen. Neither is one step for the other:
	// a freeze whose check came before the update's raise and whose store
	// came after the update's permission check returns 0, and the update
	// then writes into the frozen map and returns 0 too (found by the
	// Interleave property on the fixed kernel, every configuration: T0's
	// freeze, then its lookup saw the old value, and T1's update, begun
	// before the freeze, returned 0). No sequential order gives that, and
	// the kernel allows it: BPF_MAP_FREEZE promises that no *later* syscall
	// alters the map, and the verifier's bpf_map_is_rdonly() re-checks
	// write-active. Such an update (it returned 0, beside a freeze of
	// another thread of its group that returned 0) checks its permission in
	// the candidates at that freeze, if it may have begun by then, and
	// writes at its place in the order (run_in_candidate)
	// (corpora/interleavings/regressions/update_checked_before_a_freeze.fl).
	bool its_check_beside_a_freeze(const Group &g, size_t i) const
	{
		const Op &op = p_.ops[i];
		if (op.kind != OpKind::update || seen_.events[i].ret != 0 || !seen_.events[i].info.empty())
			return false;
		for (size_t j = g.begin; j < g.end; j++)
			if (p_.ops[j].kind == OpKind::freeze && p_.ops[j].thread != op.thread && seen_.events[j].ret == 0)
				return true;
		return false;
	}

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
	// Beside an exit, too: a process's mappings go at its mm's last mmput,
	// and a thread of it still in the kernel (a fault) holds the mm, so its
	// writable mapping may outlive the exit op and make a later freeze busy
	// (found by the swarm on the fixed kernel: an exit and a freeze on one
	// thread while another thread of the exiting process faulted).
	bool busy_freeze(const Group &g, size_t i) const
	{
		const Op &op = p_.ops[i];
		if (op.kind != OpKind::freeze || seen_.events[i].ret != -EBUSY)
			return false;
		for (size_t j = g.begin; j < g.end; j++) {
			const Op &o = p_.ops[j];
			if (o.thread != op.thread &&
			    (o.kind == OpKind::update || o.kind == OpKind::mmap || o.kind == OpKind::freeze))
				return true;
			if (o.kind == OpKind::exit)
				for (size_t l = g.begin; l < g.end; l++)
					if (p_.ops[l].thread != o.thread && p_.ops[l].proc == o.proc)
						return true;
		}
		return false;
	}

	// An op the harness skipped because its label was not bound yet, while
	// another thread's mmap (or mremap as=) of that label was in flight: a
	// label is bound when its op returns, but an mmap's effect on the
	// address space comes at mmap_write_unlock, before MAP_POPULATE's
	// faults, so other threads' mmaps can be placed around it before it
	// returns. The skip is the harness's not knowing the address yet, not a
	// kernel result: no effect, linearizable anywhere (found by the swarm on
	// the fixed kernel: a munmap of E skipped during E's populate, after an
	// mmap F placed beside E, which no sequential order gives).
	bool unbound_beside_its_mapping(const Group &g, size_t i) const
	{
		const Op &op = p_.ops[i];
		if (seen_.events[i].info.rfind("skipped: label ", 0) != 0)
			return false;
		for (size_t j = g.begin; j < g.end; j++) {
			const Op &o = p_.ops[j];
			const bool binds = o.kind == OpKind::mmap || o.kind == OpKind::reserve || o.kind == OpKind::mremap;
			if (o.thread != op.thread && binds && o.label >= 0 &&
			    (o.label == op.addr.label || (op.has_at && o.label == op.at.label)))
				return true;
		}
		return false;
	}

	// An op the harness skipped because its process did not exist yet, while
	// another thread's fork that made that pid was in flight: copy_process
	// copies the mm (dup_mmap) before alloc_pid, so the op may come after the
	// copy and before the pid. The skip is the harness's naming, not a kernel
	// result: no effect, linearizable anywhere (found by the swarm on the
	// fixed kernel, v2, seed 22, Program 105,003: corpora/interleavings/
	// regressions/op_before_its_forks_pid.fl).
	bool unborn_beside_its_fork(const Group &g, size_t i) const
	{
		const Op &op = p_.ops[i];
		if (seen_.events[i].info != skipped_no_process(op.proc))
			return false;
		for (size_t j = g.begin; j < g.end; j++)
			if (p_.ops[j].kind == OpKind::fork && p_.ops[j].thread != op.thread && seen_.events[j].ret == op.proc)
				return true;
		return false;
	}

	// A look at a process's address space (a load, smaps) that began while
	// the process lived, beside another thread's exit of it: the exit may
	// tear the mm down under the look (smaps finds no VMA), where every
	// sequential order has the look before the exit (it sees the mapping)
	// or after it (no process to run in). A look changes nothing, so it is
	// matched by no result (found by the swarm on the fixed kernel: smaps
	// said "no vma" after exit_mmap; verify --only interleave, seed 1,
	// Program 12,488). So is an mmap of that process that failed, which
	// bound nothing: a thread finishes the call it is in before
	// exit_group's kill reaches it, so its mmap may fail on what the
	// exiting thread did after its exit (a freeze: -EPERM), where every
	// order has it before the exit or not at all (the threads fuzz target,
	// v3, 2026-12-06: corpora/interleavings/regressions/mmap_beside_its_exit.fl).
	// (One that succeeded bound its label, which later ops name.) Not a
	// failed MAP_FIXED mmap: it may have changed the address space before it
	// failed. mmap_region unmaps what the new mapping replaces before it
	// calls ->mmap (__mmap_prepare's vms_clean_up_area since 6.12, which
	// zaps the PTEs and ->close's the old VMAs; do_vmi_munmap before), and
	// when ->mmap fails the range stays a hole (vms_abort_munmap_vmas:
	// "Resort to the old failure method of leaving a gap where the MAP_FIXED
	// mapping failed"). Left out, the candidates kept the old mapping (the
	// threads fuzz target, v3, 2026-12-06: a MAP_FIXED mmap over A failed
	// with -EINVAL, its size past the map, and a madvise of A before the
	// exit got -ENOMEM, where every candidate without the mmap found A:
	// corpora/interleavings/regressions/failed_fixed_mmap_beside_its_exit.fl).
	// It runs in the candidates like any op.
	bool call_beside_its_exit(const Group &g, size_t i) const
	{
		const Op &op = p_.ops[i];
		const bool replaces = (op.flags & uapi::MAP_FIXED) && !(op.flags & uapi::MAP_FIXED_NOREPLACE);
		const bool failed_mmap = op.kind == OpKind::mmap && seen_.events[i].ret < 0 && !replaces;
		if (op.kind != OpKind::smaps && op.kind != OpKind::load && !failed_mmap)
			return false;
		for (size_t j = g.begin; j < g.end; j++)
			if (p_.ops[j].kind == OpKind::exit && p_.ops[j].thread != op.thread && p_.ops[j].proc == op.proc)
				return true;
		return false;
	}

	// smaps' Rss counts the PTEs present in a VMA. Which pages are present
	// is no result of a sequential order once two threads of a group touch
	// mappings at once: a fault installs its page before its access is
	// made, and keeps it when the access then fails (a munmap or mprotect
	// came before its retry); v3's fault-around maps pages beside another
	// thread's fault of the same page; MAP_POPULATE faults in, after
	// mmap_write_unlock, whatever VMAs its range then holds (another
	// thread's MAP_FIXED mapping too), and races MADV_DONTNEED's zap; an
	// exit tears an mm down under a look. And smaps itself walks the page
	// tables under mmap_read_lock, one table at a time, beside populates,
	// zaps and faults part-way. The threads fuzz targets found these shapes
	// one by one (the smaps_* regressions in corpora/interleavings/
	// regressions), each a false alarm, in the group and after it
	// (smaps_after_a_failed_load.fl). So an smaps beside another thread's
	// op that touches mappings, and every smaps from the first group in
	// which two threads touch mappings on, is compared by its VmFlags
	// alone. What a present page holds is data, which loads compare, and a
	// PTE where no VMA is stays a machine violation (pte_outside_vma).
	static bool touches_mappings(const Op &o)
	{
		switch (o.kind) {
		case OpKind::update:
		case OpKind::lookup:
		case OpKind::freeze:
		case OpKind::close:
		case OpKind::smaps:
			return false;
		default:
			return true;
		}
	}
	static bool another_thread_touches_mappings(const Program &p, const Group &g, int t)
	{
		for (size_t j = g.begin; j < g.end; j++)
			if (p.ops[j].thread != t && touches_mappings(p.ops[j]))
				return true;
		return false;
	}
	static bool two_threads_touch_mappings(const Program &p, const Group &g)
	{
		for (size_t j = g.begin; j < g.end; j++)
			if (touches_mappings(p.ops[j]) && another_thread_touches_mappings(p, g, p.ops[j].thread))
				return true;
		return false;
	}

	// Program op i's candidate result against the observed one.
	bool same(size_t i, const Event &got) const
	{
		const Event &seen = seen_.events[i];
		if (!rss_free_[i])
			return got == seen;
		auto flags = [](const std::string &info) { return info.substr(0, info.find(" | Rss:")); };
		return got.ret == seen.ret && got.sig == seen.sig && got.data == seen.data &&
		       flags(got.info) == flags(seen.info);
	}

	// The closest candidate: the one whose first difference comes latest
	// in the program (a later group, a later position).
	size_t differs(size_t k, size_t pos, size_t op, bool after, Event got)
	{
		const size_t at = after ? op + 1 : groups_[k].begin + pos;  // program position, after > in group
		if (closest_order_.empty() || at > closest_at_) {
			closest_order_.clear();
			for (size_t j = 0; j <= k; j++)
				for (size_t i = groups_[j].begin; i < groups_[j].end; i++)
					closest_order_.push_back(slot_.count(i) ? slot_.at(i) : i);
			closest_at_ = at;
			closest_op_ = op;
			closest_after_ = after;
			closest_event_ = std::move(got);
		}
		return pos;
	}

	const Program &p_;
	Config cfg_;
	const std::vector<Group> &groups_;
	const Trace &seen_;
	const std::vector<size_t> &completion_;
	uint64_t cap_;
	Program q_;
	std::map<size_t, size_t> slot_;  // q_'s op index -> the program op it holds now
	std::vector<bool> relaxed_;      // per program op: no effect, no result to match (busy_freeze,
					 // unbound_beside_its_mapping, call_beside_its_exit)
	std::vector<Execution::OpAddresses> used_;  // per program op: a group op's addresses, as it ran
	std::vector<bool> rss_free_;     // per program op: smaps compared without Rss (two_threads_touch_mappings)
	std::vector<bool> held_;         // per program op: holds its file beside a close (its_file_beside_a_close)
	std::vector<bool> placed_;       // per program op, in the candidate being replayed: its place passed
	std::map<size_t, int> holds_;    // in that candidate: program op -> its file (Machine::map_fd_hold)
	std::vector<bool> checked_early_;  // per program op: an update that may check before a freeze
					   // (its_check_beside_a_freeze)
	std::set<size_t> unfrozen_;      // in that candidate: updates that checked before a placed freeze
	std::set<int> forked_pids_;      // the pids the groups' forks returned in the run (run_named)
	std::map<int, int> pid_as_;      // in that candidate: such a pid -> the child its fork made there
	std::vector<int> rebinds_;       // per program op: the label it binds as the last of its group's
					 // binders to return (last_binders), or -1
	std::vector<size_t> closest_order_;
	size_t closest_at_ = 0, closest_op_ = 0;
	bool closest_after_ = false;
	Event closest_event_;
	uint64_t replays_ = 0;
	bool undecided_ = false;
};

}  // namespace

LinearizeResult check_linearizable(const Program &p, const Config &cfg, const std::vector<Group> &groups,
				   const Trace &trace, const std::vector<size_t> &completion, uint64_t cap,
				   const std::vector<Execution::OpAddresses> &used)
{
	LinearizeResult out;
	if (groups.empty() || trace.events.size() != p.ops.size())
		return out;  // no group, or the run stopped early (another finding)
	const CoverageUnobserved unobserved;  // the candidates replay the port: not the Program's edges
	Spec spec(p, cfg, groups, trace, completion, cap, used);
	const OrderResult r = spec.search(0);
	out.replays = spec.replays();
	if (r.kind == OrderResult::linearizable)
		return out;
	if (r.kind == OrderResult::too_many || spec.undecided()) {
		out.note = "linearizability not checked: too many orders (" + std::to_string(r.orders) + " in the first group, " +
			   std::to_string(cap) + " replayed without a decision)";
		return out;
	}
	if (spec.mmap_not_one_step()) {
		out.note = "linearizability not checked: a MAP_FIXED mmap beside another thread's freeze";
		return out;
	}
	out.violation = Violation{Invariant::not_linearizable, spec.history(r)};
	out.op = spec.closest_op();
	return out;
}

LinearizeResult check_linearizable(const Program &p, const Config &cfg, const Group &g, const Trace &trace,
				   const std::vector<size_t> &completion, uint64_t cap)
{
	if (g.empty())
		return {};
	return check_linearizable(p, cfg, std::vector<Group>{g}, trace, completion, cap, {});
}

}  // namespace fl::interleave
