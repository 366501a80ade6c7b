// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_runner.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

#include "base/arena.h"
#include "base/order_search.h"
#include "base/sched/strategy.h"
#include "libarena/buddy_check_incremental.h"
#include "libarena/buddy_invariants.h"
#include "libarena/buddy_linearize.h"
#include "libarena/buddy_workspace.h"

namespace fl::libarena {

namespace {

bool nmi_level(buddy_level l) { return l == buddy_level::nmi_deferred || l == buddy_level::ret_overwrite; }

std::atomic<bool> g_point_reuse{true};  // set_buddy_point_check_reuse
BuddyCheckers g_checkers;               // set_buddy_checkers (before any run)

class Runner {
public:
	// On an arena fresh from its map's creation, or (started) as another
	// runner's start() of the same level and kind left it (buddy_workspace.h).
	Runner(const BuddyProgram &p, Arena &arena, const BuddyPins *pins = nullptr, bool started = false)
		: p_(p), pins_(pins), arena_(arena), started_(started)
	{
		b_.level = p.level;
		b_.open_upstream = p.open_upstream;
		b_.buddy = arena_.base() + (u64(ARENA_PAGES) - 1) * __PAGE_SIZE;  // among the arena globals
		if (!started_) {
			arena_.machine().store(0, b_.buddy, 8, 0);  // libbpf writes the globals: the page exists
			arena_.reserve_pages(arena_.base(), 8);     // arena_alloc_reserve
		}
		faults_.at_point = &Runner::at_point;
		faults_.point_arg = this;
		if (pins_)
			faults_.fails = &Runner::pinned_fails;
		for (int c = 0; c < BUDDY_NR_CPUS; c++) {
			cpu_[c] = b_;
			cpu_[c].cpu = c;
		}
		arena_.on_alloc_pages(&Runner::alloc_seen, this);
	}
	~Runner() { arena_.on_alloc_pages(nullptr, nullptr); }
	Runner(const Runner &) = delete;
	Runner &operator=(const Runner &) = delete;
	BuddyVerdict run(sched::Strategy *s);
	bool start();
	// (sequential) ops from..n-1 in program order: a run, or (a candidate
	// resumed: BuddyCandidates) the rest of one whose state before op from
	// was put back.
	void run_sequential(size_t from);
	// (a candidate) Told before each op i > 0, with the elements of the
	// order begun so far: the state there is the one every order that
	// shares those elements reaches (BuddyCandidates saves it).
	void at_boundaries(void (*f)(void *arg, size_t i, size_t begun), void *arg)
	{
		boundary_ = f;
		boundary_arg_ = arg;
	}
	bool next(const BuddyOp &op)
	{
		const size_t i = v_.trace.size() - 1;
		return op_and_checks(i, op);
	}
	const BuddyVerdict &verdict() const { return v_; }
	size_t live_objects() const { return live_order_.size(); }
	bool would_skip(const BuddyOp &op, size_t i = SIZE_MAX);  // i: the op's index, if it is the next one

private:
	bool resolve(const Target &t, u64 *addr) const;
	bool resolve_at(size_t i, size_t slot, const Target &t, u64 *addr);
	// An object's name across runs: the op that allocated it (its program
	// index) and which of that op's objects it is.
	u64 ref_id(size_t i, u64 k) const { return (u64(pins_ ? pins_->orig[i] : i) + 1) << 8 | k; }
	bool live(u64 a) const { return shadow_.live.count(a) != 0; }
	void add_live(u64 a, u64 order, u64 ref);
	void remove_live(u64 a);
	int shadow_free(u64 a) { return live(a) ? (remove_live(a), 0) : -EINVAL; }
	int shadow_drain();
	bool cached(u64 a);
	std::vector<u64> cached_objects();
	bool held(u64 a);
	bool fail(size_t i, std::string what);
	// The locks CPU cpu holds by their words ("the buddy lock"), "" if none.
	std::string locks_of(int cpu);
	// I13: no lock held on return to user space (after op i, or after an
	// NMI handler: what it took beyond what the context it interrupted held).
	bool returns_unlocked(size_t i, int cpu, const std::string &before, const char *when);
	// v_.trace is for a person reading a verdict. A linearizability
	// candidate's is never read (the check compares results), so it has
	// none: formatting it and copying it out were about a tenth of the
	// candidates' time (perf over the grown buddy-series corpus).
	bool tracing() const { return !pins_; }
	template <class Text> void trace(Text &&text)
	{
		if (tracing())
			v_.trace.push_back(text());
	}
	template <class Text> void trace_more(Text &&text)
	{
		if (tracing())
			v_.trace.back() += text();
	}
	// What op i returned: on its trace line, and in v_.results (linearizability).
	void outcome(size_t i, const std::string &text)
	{
		trace_more([&] { return "  -> " + text; });
		result(i, text);
	}
	// Op i's result came from a failed lock (the linearizability check's
	// candidates fail the same acquisitions: BuddyVerdict::fails).
	void lock_failed(size_t i)
	{
		trace_more([] { return " (lock failed)"; });
		if (std::string *r = result_of(i))
			*r += " (lock failed)";
	}
	// BuddyVerdict::spans (a session's ops have none)
	void began(size_t i)
	{
		if (i < v_.spans.size())
			v_.spans[i].first = ++clock_;
	}
	void ended(size_t i)
	{
		if (i < v_.spans.size())
			v_.spans[i].second = ++clock_;
	}
	// BuddyVerdict::locked: CPU c holds the buddy lock, in its op or in the
	// handler between ops it runs. The clock's last event, not a new one:
	// a handler's own acquisition is not another CPU's op beginning or ending.
	// Not once the op has ended: the end-of-run drain runs on CPU 0 after
	// CPU 0's last op, whose lock time it set far past that op's span, so
	// the search's first order put the op late (a 30-minute buddy-series
	// campaign's corpus: runs of 151-300 candidates).
	void note_locked(int c)
	{
		const size_t i = cur_op_[c];
		u64 *at = between_[c] >= 0 ? &v_.between[size_t(between_[c])].locked
			  : i < v_.locked.size() && v_.spans[i].second == UINT64_MAX ? &v_.locked[i] : nullptr;
		if (at && !*at)
			*at = clock_;
	}
	void result(size_t i, const std::string &text)
	{
		if (std::string *r = result_of(i))
			*r += r->empty() ? text : "; " + text;
	}
	// Op i's result, or that of the handler it armed while that runs
	// between ops (BuddyVerdict::between); null for the end-of-run drain.
	std::string *result_of(size_t i)
	{
		for (int c = 0; c < BUDDY_NR_CPUS; c++)
			if (between_[c] >= 0 && between_op_[c] == i)
				return &v_.between[size_t(between_[c])].result;
		return i < v_.results.size() ? &v_.results[i] : nullptr;
	}
	bool quiescent() const { return std::none_of(busy_, busy_ + BUDDY_NR_CPUS, [](bool x) { return x; }); }
	// (concurrent) every other CPU has run all its ops: nothing can interleave
	bool alone(int cpu) const
	{
		for (int c = 0; c < BUDDY_NR_CPUS; c++)
			if (c != cpu && !done_[c])
				return false;
		return true;
	}
	// An NMI handler armed for a point of its CPU's next op (or, inside a
	// handler, of the handler's next call).
	struct Armed {
		BuddyOp block;    // kind nmi (lowered)
		size_t op = 0;    // the op whose result and object names it takes
		size_t slot = 0;  // its first target slot in that op
		int depth = 0;    // the NMI depth it arrives at (0: the CPU's ops)
		int handler = -1; // the scheduler's id (add_nmi), or -1 without a scheduler
		int pinned = -1;  // (a candidate) its BuddyPins::nmis entry: it waits for its place
		int placed = -1;  // (a candidate) its BuddyPins::placed entry: it runs where the schedule ran it
	};
	void arm(const BuddyOp &block, size_t i, size_t slot);
	bool fire(const Armed &a, const std::string &where);
	bool fire_between(const Armed &a, const std::string &where);
	bool fire_pinned(size_t e);
	bool fire_call(size_t e);
	void add_calls(int cpu, size_t armed_by, size_t after, size_t first);
	void scheduled_nmi(const Armed &a, int h);
	bool fire_if_left(int cpu, u64 seq, const char *why);
	bool place(const Armed &a);
	bool ahead_of_op(const Armed &a) const;
	bool at_placed_point(int cpu, const sched::Label &label) const;
	void missed_if_placed(const Armed &a)
	{
		if (a.placed >= 0)
			v_.placed_missed = true;
	}
	bool check(size_t i);
	// check_caches into *out (bytes: the caches as read at this point, if
	// the caller read them), taking the headers the last passed one read
	// and nobody wrote since (CachesReadSet::known), not asking the live
	// objects of them if those did not change either; FL_BUDDY_CHECKS=whole
	// reads them all, compare does both and reports a difference.
	std::string caches_check(CachedObjects *out, const CachesBytes *bytes = nullptr);
	std::string point_check();
	// The state the last point check passed (point_check).
	struct Passed {
		u64 live = 0;
		bool busy[BUDDY_NR_CPUS] = {};
	} passed_;
	u64 live_changes_ = 0;  // shadow_.live changed (point_check)
	void poison_past_count(const CachesBytes &caches);  // (as the point check read them)
	// The arena writes that are the allocator's and the user's, not the
	// harness's own (the poison point_check writes): what an op did that
	// another context could see (BuddyVerdict::Placed::ahead).
	u64 harness_writes_ = 0;
	u64 own_writes() const { return arena_.writes() - harness_writes_; }
	static constexpr u64 kXferPoison = 0xdead00000000000bull;  // not 16-aligned: never an object
	bool check_deferred(size_t i, const char *where);
	bool op_and_checks(size_t i, const BuddyOp &op);
	bool step(size_t i, const BuddyOp &op);
	bool nmi_takes_existing_chunks() const;
	bool expect(size_t i, const char *what, s64 got, s64 want);
	bool alloc(size_t i, buddy_ctx *b, u64 size, u64 k = 0);
	bool handler(const Armed &a, const std::string &where, bool entered);
	bool handler_op(size_t i, const BuddyOp &op);
	bool nmi_call(size_t i, const BuddyOp &call, buddy_ctx *n, size_t &slot);
	bool nmi_free(size_t i, size_t slot, const Target &target, buddy_ctx *n);
	bool bulk(size_t i, buddy_ctx *b, const BuddyOp &op, size_t k0);
	bool free_bulk(size_t i, buddy_ctx *b, const BuddyOp &op, size_t slot0);
	bool store(size_t i, size_t slot, const Target &target, u64 value, bool in_nmi = false);
	void run_cpu(int cpu);
	void barrier(size_t g);
	std::vector<int> arrived_;  // (concurrent) per join: the CPUs that reached it
	int ncpus_ = 1;
	void end_nmi(int cpu);
	bool last_of_cpu(size_t i) const
	{
		for (size_t j = i + 1; j < p_.ops.size(); j++)
			if (p_.ops[j].cpu == p_.ops[i].cpu)
				return false;
		return true;
	}

	static void at_point(void *self, buddy_ctx *b, const sched::Label &label);
	static bool pinned_fails(void *self, buddy_ctx *b);
	static void alloc_seen(void *self, u32 cnt);
	void note_racing_growth();

	const BuddyProgram &p_;
	const BuddyPins *pins_;
	std::map<u64, u64> ref_of_, addr_of_;  // object address <-> ref_id, latest allocation
	Arena &arena_;
	bool started_;  // the arena is as start() leaves it: no buddy_init here
	IncrementalBuddyCheck checker_{arena_};  // check_buddy after every op, on what the op changed
	CachesReadSet caches_read_{arena_};      // what the last passed point check read (point_check)
	buddy_faults faults_;
	buddy_ctx b_{&arena_, 0, &faults_};
	buddy_ctx cpu_[BUDDY_NR_CPUS];
	Shadow shadow_;
	CachedObjects point_cached_;  // scratch: what the caches hold, at a point
	std::vector<u64> live_order_, stale_, deferred_;  // deferred_ (nmi levels): the list's head is back()
	// What NMIs freed, or left in a cache, during the current drain: it may
	// be cached after it. An NMI after the drain released its CPU's guard
	// refills the LIFO it allocates from (the buddy swarm at series, seed
	// 7001, program 9193: four objects of a refill, on correct code).
	std::vector<u64> nmi_cached_;
	int draining_ = -1;  // the CPU whose drain op runs
	bool busy_[BUDDY_NR_CPUS] = {};
	u64 clock_ = 0;  // BuddyVerdict::spans
	uint64_t op_switches_[BUDDY_NR_CPUS] = {};  // the scheduler's switches when each CPU's op began
	// Per CPU: the scheduler's switches when the last handler inside its op left
	std::optional<uint64_t> nmi_left_[BUDDY_NR_CPUS];
	u64 op_writes_[BUDDY_NR_CPUS] = {};          // own_writes() when each CPU's op began
	// Per CPU: the BuddyVerdict::between entry its handler runs as now (-1:
	// none), and the op that armed it (whose results go there meanwhile).
	int between_[BUDDY_NR_CPUS] = {-1, -1, -1, -1};
	size_t between_op_[BUDDY_NR_CPUS] = {};
	// (concurrent) Per CPU: each call's result and span of the handler of
	// several calls it ran last between ops (or as an op), kept when
	// another CPU ran beside it: its calls become elements of their own
	// (BuddyVerdict::Between::call, add_calls).
	struct Call {
		std::string result;
		std::pair<u64, u64> span;
	};
	std::vector<Call> calls_[BUDDY_NR_CPUS];
	// (a candidate) Per CPU: the handler whose calls the run split, between
	// its calls (fire_call): the next call, its first object slot, and the
	// locks the CPU held when the handler arrived (I13 at its end).
	struct Open {
		Armed a;
		size_t call = 0, slot = 0;
		std::string holds;
	};
	std::optional<Open> open_[BUDDY_NR_CPUS];
	size_t steps_ = 0;  // the ops and pinned handlers begun (BuddyVerdict::failed_step)
	// (concurrent) Per CPU: its current op or handler between ops got a new
	// chunk; the spans of the ops and handlers that did.
	bool grew_[BUDDY_NR_CPUS] = {};
	struct Grown {
		std::pair<u64, u64> span;
		int cpu;
	};
	std::vector<Grown> grown_;
	int reinit_cpu_ = -1;  // the CPU inside a reinit op (its NMI handlers do nothing)
	bool done_[BUDDY_NR_CPUS] = {true, true, true, true};  // (concurrent) a CPU's task has run its ops
	// An NMI armed on a CPU (at=), and a serial.
	std::optional<Armed> armed_[BUDDY_NR_CPUS];
	u64 armed_seq_[BUDDY_NR_CPUS] = {};
	// (under a scheduler) per handler id: it ran, or was replaced before it could
	std::vector<char> handler_done_;
	bool firing_ = false;  // the runner, not the schedule, runs the handler now
	std::string firing_where_;
	size_t cur_op_[BUDDY_NR_CPUS] = {};
	// Per CPU, in its current op (outside NMIs): the named points it has
	// passed, by label id, and the last (where a placed NMI is pinned).
	std::vector<u32> notes_[BUDDY_NR_CPUS];
	const sched::Label *last_note_[BUDDY_NR_CPUS] = {};
	u64 in_flight_[BUDDY_NR_CPUS] = {};  // the object a CPU's free is freeing right now
	// (nmi levels) what the drain inside a CPU's current free predicted, if it ran
	int drain_ret_[BUDDY_NR_CPUS] = {};
	bool drained_[BUDDY_NR_CPUS] = {};
	int take_drain(int cpu)
	{
		const int r = drained_[cpu] ? drain_ret_[cpu] : 0;
		drained_[cpu] = false;
		return r;
	}
	// buddy_lock failures (schedule events) per CPU and NMI depth: a call
	// whose own context saw one may return the failed lock's error.
	static constexpr int kMaxNmiDepth = 8;
	u64 lock_fails_[BUDDY_NR_CPUS][kMaxNmiDepth + 1] = {};
	int nmi_depth_[BUDDY_NR_CPUS] = {};
	u64 fails_here(int cpu) const { return lock_fails_[cpu][std::min(nmi_depth_[cpu], kMaxNmiDepth)]; }
	u64 fails_on(int cpu) const
	{
		u64 n = 0;
		for (u64 f : lock_fails_[cpu])
			n += f;
		return n;
	}
	u64 op_fails_[BUDDY_NR_CPUS] = {};  // fails_on(cpu) when its current op began
	// A handler ran on the CPU since its current op began (inside it, or
	// after it): the acquisitions asked at its depth share one count.
	bool nmi_ran_[BUDDY_NR_CPUS] = {};
	// Per CPU and NMI depth: the fallible acquisitions asked in the CPU's current op.
	u32 questions_[BUDDY_NR_CPUS][kMaxNmiDepth + 1][2] = {};
	int asked_[BUDDY_NR_CPUS] = {};  // the lock of the CPU's last question
	BuddyVerdict::FailAt fail_at(int cpu) const
	{
		const int d = std::min(nmi_depth_[cpu], kMaxNmiDepth), l = asked_[cpu];
		const size_t i = cur_op_[cpu];
		return {pins_ && i < pins_->orig.size() ? pins_->orig[i] : i, d, l, questions_[cpu][d][l]};
	}
	// The shadow forgets a free whose lock failed: the object stays its caller's.
	struct Freed {
		u64 addr, order, ref;
	};
	Freed freeing(u64 a) const { return Freed{a, shadow_.live.at(a), ref_of_.at(a)}; }
	void unfree(const Freed &f)
	{
		if (auto it = std::find(stale_.rbegin(), stale_.rend(), f.addr); it != stale_.rend())
			stale_.erase(std::next(it).base());
		add_live(f.addr, f.order, f.ref);
	}
	void run_in_order(sched::Strategy *strategy);
	void (*boundary_)(void *, size_t, size_t) = nullptr;
	void *boundary_arg_ = nullptr;
	bool concurrent_ = false;
	sched::Scheduler *sched_ = nullptr;
	BuddyVerdict v_;
};

bool Runner::resolve(const Target &t, u64 *addr) const
{
	*addr = 0;
	switch (t.kind) {
	case Target::null:
		return true;
	case Target::stale:
		if (stale_.empty())
			return false;
		*addr = stale_[t.n % stale_.size()];
		return true;
	default:
		if (live_order_.empty())
			return false;
		*addr = live_order_[t.n % live_order_.size()];
		*addr += t.kind == Target::interior ? 16 : t.kind == Target::unaligned ? 1 : 0;
		return true;
	}
}

// Op i's slot-th pointer: by role, noting which object that is (v_.refs);
// with pins, the object the pinned run's op named, wherever it is now.
bool Runner::resolve_at(size_t i, size_t slot, const Target &t, u64 *addr)
{
	const u64 off = t.kind == Target::interior ? 16 : t.kind == Target::unaligned ? 1 : 0;
	if (pins_) {
		*addr = 0;
		const u64 ref = i < pins_->refs.size() && slot < pins_->refs[i].size() ? pins_->refs[i][slot] : 0;
		if (!ref)
			return t.kind == Target::null;
		const auto it = addr_of_.find(ref);
		if (it == addr_of_.end())
			return false;  // not allocated yet in this order
		*addr = it->second + off;
		return true;
	}
	const bool ok = resolve(t, addr);
	if (i < v_.refs.size()) {
		std::vector<u64> &r = v_.refs[i];
		if (r.size() <= slot)
			r.resize(slot + 1);
		const auto it = ref_of_.find(*addr - off);
		r[slot] = ok && *addr && it != ref_of_.end() ? it->second : 0;
	}
	return ok;
}

void Runner::add_live(u64 a, u64 order, u64 ref)
{
	arena_.handed_over(a, a + (BUDDY_MIN_ALLOC_BYTES << order));
	ref_of_[a] = ref;
	addr_of_[ref] = a;
	shadow_.live[a] = order;
	live_changes_++;
	live_order_.push_back(a);
	// A free still in flight whose object is handed out again (an NMI's
	// alloc after the free's unlock) is done with it: a free of it now is of
	// the new allocation, not that free's double (the buddy swarm at series,
	// seed 1, program 405: an NMI's free_bulk of it was skipped as one).
	std::replace(in_flight_, in_flight_ + BUDDY_NR_CPUS, a, u64(0));
}

void Runner::remove_live(u64 a)
{
	// Handed back to the allocator: what its user did there (a store, in
	// an NMI too) happened before the free, which the lockset checker
	// does not see as an ordering; forget it, as at the handover on alloc
	// (the buddy swarm at series, seed 8301, Program 19,875: a handler
	// stored to an object and freed it; a later op read the freed block's
	// header under the lock, reported as a race with the store).
	if (const auto it = shadow_.live.find(a); it != shadow_.live.end())
		arena_.handed_over(a, a + (BUDDY_MIN_ALLOC_BYTES << it->second));
	shadow_.live.erase(a);
	live_changes_++;
	// (concurrent, nmi levels) an object freed in NMI left live_order_ then
	if (auto it = std::find(live_order_.begin(), live_order_.end(), a); it != live_order_.end())
		live_order_.erase(it);
	stale_.push_back(a);
}

// deferred_free_complete, predicted: head first; each object freed if still
// live (whoever holds it now), else the first error.
int Runner::shadow_drain()
{
	int err = 0;
	while (!deferred_.empty()) {
		u64 a = deferred_.back();
		deferred_.pop_back();
		int e = shadow_free(a);
		err = err ? err : e;
	}
	return err;
}

// (series) a is no caller's but its allocated bit is set: a cache (the
// LIFO of a CPU mid-op too), the deferred list or a free in flight holds it.
bool Runner::held(u64 a)
{
	const u64 c = a & ~BUDDY_CHUNK_OFFSET_MASK, idx = (a & BUDDY_CHUNK_OFFSET_MASK) / BUDDY_MIN_ALLOC_BYTES;
	return !live(a) && (arena_.load8(c + CHUNK_ALLOCATED + idx / 8) & (1u << (idx % 8)));
}

// (series) a cache or the deferred list holds a (read from the allocator).
bool Runner::cached(u64 a)
{
	caches_check(&point_cached_);
	return point_cached_.count(a) != 0;
}

// (series) every object the caches and the deferred list hold.
std::vector<u64> Runner::cached_objects()
{
	sched::IgnoreAccesses checker;
	caches_check(&point_cached_);
	std::vector<u64> out;
	for (const auto &[a, order] : point_cached_)
		out.push_back(a);
	return out;
}

bool Runner::fail(size_t i, std::string what)
{
	if (!v_.ok)
		return false;
	v_.ok = false;
	v_.op = i;
	v_.what = std::move(what);
	v_.failed_step = steps_ ? steps_ - 1 : 0;
	if (sched_)
		sched_->violation(v_.what);
	return false;
}

bool Runner::expect(size_t i, const char *what, s64 got, s64 want)
{
	outcome(i, std::to_string(got));
	if (got == want)
		return true;
	return fail(i, std::string("I12: ") + what + " returned " + std::to_string(got) + ", expected " +
			       std::to_string(want));
}

// The deferred list in arena memory is the shadow's, in order (I9: nothing lost, nothing added).
bool Runner::check_deferred(size_t i, const char *where)
{
	sched::IgnoreAccesses checker;
	if (!nmi_level(p_.level))
		return true;
	std::vector<u64> got;
	u64 obj = arena_.load64(b_.buddy + BUDDY_DEFERRED_FREE);
	for (size_t n = 0; obj && n <= deferred_.size(); n++, obj = arena_.load64(obj))
		got.push_back(obj);
	std::vector<u64> want(deferred_.rbegin(), deferred_.rend());
	if (got != want || obj)
		return fail(i, std::string("I9: the deferred list differs from the objects freed in NMI ") + where);
	return true;
}

// After an op: everything when no CPU is inside one, else what holds mid-op.
// Not in the linearizability check's candidates: they are asked for results
// only (checking each of up to 300 orders at every point made a grown buddy
// corpus replay 5x slower), and the concurrent run they explain was checked
// at every point.
bool Runner::check(size_t i)
{
	if (pins_)
		return true;
	sched::IgnoreAccesses checker;
	if (!quiescent()) {
		const std::string bad = point_check();
		return bad.empty() || fail(i, bad);
	}
	std::string bad = caches_check(&shadow_.cached);
	if (bad.empty())
		bad = checker_.check(&b_, &shadow_);
	if (!bad.empty())
		return fail(i, bad);
	return check_deferred(i, "after the op");
}

// (The checks at points are the harness's, not the allocator's driving:
// no coverage, base/coverage.h, as fuzz/coverage.allowlist means for checkers.)
FL_NO_COVERAGE std::string Runner::caches_check(CachedObjects *out, const CachesBytes *bytes)
{
	if (!has_caches(p_.level)) {
		out->objects.clear();
		return "";
	}
	std::optional<CachesBytes> read;
	if (!bytes)
		bytes = &read.emplace(read_caches(&b_));
	const BuddyCheckMode mode = buddy_check_mode();
	std::string bad = check_caches(&b_, *bytes, shadow_.live, out, busy_,
				       mode == BuddyCheckMode::whole ? nullptr : &caches_read_.known(),
				       caches_read_.known_live() == live_changes_);
	if (mode == BuddyCheckMode::compare) {
		CachedObjects all;
		const std::string whole = check_caches(&b_, *bytes, shadow_.live, &all, busy_);
		if (whole != bad || (bad.empty() && all.objects != out->objects))
			return "checker: the cache check with the headers it knew says '" + bad +
			       "' where reading every header says '" + whole + "'";
	}
	if (bad.empty())
		caches_read_.learned(*out, live_changes_);
	return bad;
}

// At every named point and scheduling decision: the caches' bounds and
// guards (I8, I10), the cheap part of I1 (no cached object is a caller's).
// A function of the arena bytes it reads (CachesReadSet), the live objects
// and which CPUs are inside an op: a state that passed passes again, so a
// point with none of them changed since the last pass (the scheduler's
// decision right after the named point it follows, a point after loads
// only, or after the allocator's work on its free lists) is not checked
// again (BuddyRunner.PointChecksSkipNoStateTheyHaveNotPassed).
// FL_BUDDY_CHECKS=compare checks those points too, and a skip that would
// have missed a violation or a change in the cached objects is a
// "checker:" violation.
FL_NO_COVERAGE std::string Runner::point_check()
{
	if (!g_checkers.point_checks || !has_caches(p_.level))  // (what it checks is the caches)
		return "";
	const bool passed = g_point_reuse && caches_read_.unchanged() && passed_.live == live_changes_ &&
			    std::equal(busy_, busy_ + BUDDY_NR_CPUS, passed_.busy);
	if (passed && buddy_check_mode() != BuddyCheckMode::compare)
		return "";
	sched::IgnoreAccesses checker;
	std::optional<CachedObjects> before;
	if (passed)
		before = point_cached_;
	const CachesBytes caches = read_caches(&b_);
	std::string bad = caches_check(&point_cached_, &caches);
	if (passed && !bad.empty())
		return "checker: the point check skipped a state it had passed, which now says '" + bad + "'";
	if (passed && before->objects != point_cached_.objects)
		return "checker: the point check skipped a state it had passed, whose caches now hold other objects";
	if (!bad.empty())
		return bad;
	const u64 writes = arena_.writes();
	poison_past_count(caches);  // (its own writes are part of the state that passed)
	harness_writes_ += arena_.writes() - writes;
	caches_read_.passed(&b_, point_cached_);
	passed_.live = live_changes_;
	std::copy(busy_, busy_ + BUDDY_NR_CPUS, passed_.busy);
	return "";
}

// The slots of an unlocked transfer cache past its count hold stale copies
// of objects a refill took (a LIFO's now): never to be read again. Written
// with kXferPoison (KASAN-style) at every point, so a read past count hands
// out the poison, which I8 names wherever it lands, instead of a stale copy
// that looks like an object. A locked one is mid-update (its owner may be
// between writing the slots and the count).
FL_NO_COVERAGE void Runner::poison_past_count(const CachesBytes &caches)
{
	// Written only where a slot is not poison yet (this runs at every point).
	for (u64 o = 0; o < BUDDY_CACHE_ORDERS; o++) {
		const u64 xfer = buddy_xfer_of(&b_, o);
		if (caches.peek<u32>(xfer + XFER_LOCK))
			continue;
		for (u64 i = std::min<u64>(caches.peek<u32>(xfer + XFER_COUNT), BUDDY_XFER_CAP); i < BUDDY_XFER_CAP; i++)
			if (caches.peek<u64>(xfer + XFER_OBJS + 8 * i) != kXferPoison)
				arena_.store64(xfer + XFER_OBJS + 8 * i, kXferPoison);
	}
}

// The allocator reached a named point on b->cpu: check, and deliver an NMI
// armed for this CPU at this point.
void Runner::at_point(void *self, buddy_ctx *b, const sched::Label &label)
{
	Runner *r = static_cast<Runner *>(self);
	if (!r->v_.ok)
		return;
	if (r->busy_[b->cpu] && r->nmi_depth_[b->cpu] == 0) {
		std::vector<u32> &n = r->notes_[b->cpu];
		if (n.size() <= label.id)
			n.resize(label.id + 1);
		n[label.id]++;
		r->last_note_[b->cpu] = &label;
	}
	static const sched::Label &lock_held = sched::label_named("buddy_lock:held");
	if (&label == &lock_held && r->busy_[b->cpu])
		r->note_locked(b->cpu);
	static const sched::Label &lock_failed = sched::label_named("buddy_lock:failed");
	static const sched::Label &lock_asked = sched::label_named("buddy_lock:timeout");
	static const sched::Label &xfer_asked = sched::label_named("buddy_xfer_trylock:try");
	static const sched::Label &xfer_failed = sched::label_named("buddy_xfer_trylock:failed");
	// (inside an op only: the harness's own buddy_init asks too)
	if ((&label == &lock_asked || &label == &xfer_asked) && r->busy_[b->cpu]) {
		r->asked_[b->cpu] = &label == &xfer_asked ? 1 : 0;
		r->questions_[b->cpu][std::min(r->nmi_depth_[b->cpu], kMaxNmiDepth)][r->asked_[b->cpu]]++;
	}
	if ((&label == &lock_failed || &label == &xfer_failed) && !r->pins_ && r->busy_[b->cpu])
		r->v_.fails.push_back(r->fail_at(b->cpu));
	if (&label == &lock_failed) {
		r->lock_fails_[b->cpu][std::min(r->nmi_depth_[b->cpu], kMaxNmiDepth)]++;
		return;
	}
	if (std::string bad = r->pins_ ? std::string() : r->point_check(); !bad.empty()) {
		r->fail(r->cur_op_[b->cpu], "at " + label.name + " on CPU " + std::to_string(b->cpu) + ": " + bad);
		return;
	}
	if (nmi_level(r->p_.level) && label.name == "deferred_free_complete:taken") {
		// (nmi levels) the drain took the whole list under the lock: predict
		// it now, not once the free returns (by then, in a concurrent
		// schedule, another CPU's NMI may have deferred more)
		r->drain_ret_[b->cpu] = r->shadow_drain();
		r->drained_[b->cpu] = true;
		return;
	}
	std::optional<Armed> &a = r->armed_[b->cpu];
	if (a && a->placed >= 0) {
		if (!r->at_placed_point(b->cpu, label))
			return;
		const Armed n = *a;
		a.reset();
		r->fire(n, "at " + label.name + "#" + std::to_string(r->pins_->placed[size_t(n.placed)].count) +
				   ", where the schedule ran it");
		return;
	}
	if (!a || a->pinned >= 0 || a->depth != r->nmi_depth_[b->cpu] || a->block.at != label.name)
		return;
	const Armed n = *a;
	a.reset();
	r->fire(n, "at " + n.block.at);
}

// (a candidate) CPU cpu's armed handler, which the schedule ran inside an
// op (BuddyVerdict::placed), is at its place: the same op, outside NMIs,
// at the same occurrence of the same named point in that op.
bool Runner::at_placed_point(int cpu, const sched::Label &label) const
{
	const BuddyVerdict::Placed &at = pins_->placed[size_t(armed_[cpu]->placed)];
	return busy_[cpu] && nmi_depth_[cpu] == 0 && cur_op_[cpu] < pins_->orig.size() &&
	       pins_->orig[cur_op_[cpu]] == at.in_op && label.name == at.label && notes_[cpu][label.id] == at.count;
}

// (a linearizability candidate) the acquisition just asked fails if it did
// in the concurrent run: a failure is an event of the op's environment (a
// holder or deadlock the Program does not model), which every order sees.
bool Runner::pinned_fails(void *self, buddy_ctx *b)
{
	const Runner *r = static_cast<Runner *>(self);
	if (!r->busy_[b->cpu])
		return false;
	const BuddyVerdict::FailAt at = r->fail_at(b->cpu);
	return std::find(r->pins_->fails.begin(), r->pins_->fails.end(), at) != r->pins_->fails.end();
}

// (concurrent) A new chunk (a chunk's pages allocated) on the CPU whose task runs now.
void Runner::alloc_seen(void *self, u32 cnt)
{
	Runner *r = static_cast<Runner *>(self);
	const int t = r->concurrent_ && r->sched_ ? r->sched_->current_task() : -1;
	if (cnt == BUDDY_CHUNK_PAGES && t >= 0 && t < BUDDY_NR_CPUS)
		r->grew_[t] = true;
}

// Two CPUs that got a new chunk at once (each missed a free block while the
// other's new chunk was not yet linked: libarena gets chunks outside its
// lock) leave the arena a chunk larger than any order of the ops does, so a
// later alloc only existing chunks can serve (an NMI's) may succeed where
// every candidate fails (a buddy-series fuzz report on correct code,
// 2026-12-05). Such a run is not checked. (BuddyVerdict::growth_overlapped)
// Another CPU's op or handler that ran while one got a new chunk may have
// found the arena between the two states any order gives.
void Runner::note_racing_growth()
{
	auto overlap = [](std::pair<u64, u64> x, std::pair<u64, u64> y) { return x.first < y.second && y.first < x.second; };
	for (size_t a = 0; a < grown_.size(); a++)
		for (size_t b = a + 1; b < grown_.size(); b++)
			if (overlap(grown_[a].span, grown_[b].span) && v_.linearize_note.empty())
				v_.linearize_note = "linearizability not checked: two CPUs got a new chunk at once";
	for (const Grown &g : grown_) {
		for (size_t i = 0; i < v_.spans.size(); i++)
			v_.growth_overlapped |= p_.ops[i].cpu != g.cpu && overlap(v_.spans[i], g.span);
		for (const auto &h : v_.between)
			v_.growth_overlapped |= p_.ops[h.after].cpu != g.cpu && overlap(h.span, g.span);
	}
}

// An NMI's allocation never grows the arena: the series' rule, and
// `before`'s unless the Program runs upstream's code (buddy_alloc_memory).
bool Runner::nmi_takes_existing_chunks() const { return has_caches(p_.level) || !p_.open_upstream; }

bool Runner::alloc(size_t i, buddy_ctx *b, u64 size, u64 k)
{
	const u64 order = size_to_order(size);
	const u32 owner = arena_.load32(b_.buddy + BUDDY_LOCK);
	const bool this_cpu_locked = owner == u32(b->cpu) + 1;
	const u64 fails = fails_here(b->cpu);
	const u64 a = buddy_alloc(b, size);
	outcome(i, a ? "object" : "NULL");
	if (!a && fails_here(b->cpu) != fails)
		lock_failed(i);
	// NULL: an invalid size; an NMI at the nmi levels; an NMI over this CPU's lock holder
	// (before: always; series: unless its cache served it); an NMI that needs a new
	// chunk at the series levels, and at before unless the Program runs upstream's
	// code (buddy_alloc_memory); a failed lock
	const bool may_null = order >= BUDDY_CHUNK_NUM_ORDERS ||
			      (b->in_nmi && (nmi_level(p_.level) || this_cpu_locked || nmi_takes_existing_chunks())) ||
			      fails_here(b->cpu) != fails;
	const bool must_null = order >= BUDDY_CHUNK_NUM_ORDERS || (b->in_nmi && nmi_level(p_.level)) ||
			       (b->in_nmi && this_cpu_locked && p_.level == buddy_level::before);
	if ((!a && !may_null) || (a && must_null))
		return fail(i, std::string(b->in_nmi ? "I10" : "I12") + ": alloc returned " + (a ? "an object" : "NULL") +
				       " for size " + std::to_string(size) + (b->in_nmi ? " in NMI" : ""));
	if (a && live(a))
		return fail(i, "I1: alloc handed out a live object again");
	if (a)
		add_live(a, order, ref_id(i, k % 256));
	return true;
}

// nmi_free X and nmi_alloc S are one-call handler blocks, and `free X
// nmi=Y` arms the block "free Y" at buddy_lock:held (buddy_program.h).
BuddyOp lowered(const BuddyOp &op)
{
	if (op.kind == BuddyOp::nmi)
		return op;
	BuddyOp block, call;
	block.kind = BuddyOp::nmi;
	block.cpu = call.cpu = op.cpu;
	block.at = op.kind == BuddyOp::free ? "buddy_lock:held" : op.at;
	if (op.kind == BuddyOp::nmi_alloc) {
		call.kind = BuddyOp::alloc;
		call.size = op.size;
	} else {
		call.kind = BuddyOp::free;
		call.target = op.kind == BuddyOp::free ? op.nmi_target : op.target;
	}
	block.body = {call};
	return block;
}

// The object slots a block's calls take in its op (targets, and objects an
// alloc or bulk names), so that a handler armed now and run later names the
// same objects in every run.
size_t bulk_slots(const BuddyOp &bulk) { return bulk.norder <= 5 ? size_t(1) << bulk.norder : 0; }

// The calls a handler block makes, nested blocks' included.
size_t count_calls(const BuddyOp &block)
{
	size_t n = 0;
	for (const BuddyOp &c : block.body)
		n += c.kind == BuddyOp::nmi ? count_calls(c) : 1;
	return n;
}

// A handler's call that is a nested block (lowered or not).
bool nests(const BuddyOp &call)
{
	return call.kind == BuddyOp::nmi || call.kind == BuddyOp::nmi_free || call.kind == BuddyOp::nmi_alloc;
}

// One call's part of a handler's result ("NMI; object; 0 (lock failed)"):
// what result() appended from `from` on, without its "; ".
std::string call_result(const std::string &handler_result, size_t from)
{
	return handler_result.size() > from + 2 ? handler_result.substr(from + 2) : std::string();
}

size_t count_slots(const BuddyOp &block)
{
	size_t n = 0;
	for (const BuddyOp &c : block.body)
		n += c.kind == BuddyOp::bulk ? bulk_slots(c)
		     : c.kind == BuddyOp::free_bulk ? c.targets.size()
		     : nests(c) ? count_slots(lowered(c))
		     : 1;
	return n;
}

void Runner::arm(const BuddyOp &block, size_t i, size_t slot)
{
	const int c = block.cpu;
	Armed a{block, i, slot, nmi_depth_[c], -1};
	for (size_t e = 0; pins_ && a.depth == 0 && e < pins_->nmis.size(); e++)
		if (pins_->nmis[e].armed_by == pins_->orig[i] && pins_->nmis[e].call <= 0)
			a.pinned = int(e);
	for (size_t e = 0; pins_ && a.depth == 0 && e < pins_->placed.size(); e++)
		if (pins_->placed[e].armed_by == pins_->orig[i])
			a.placed = int(e);
	if (sched_) {  // pending on the CPU's task: the schedule may run it before its point
		// the runner is the only one to add handlers: the scheduler's ids are these
		a.handler = int(handler_done_.size());
		handler_done_.push_back(0);
		sched_->add_nmi(c, [this, a] { scheduled_nmi(a, a.handler); });
	}
	// An NMI armed over one still armed replaces it (as before blocks).
	if (armed_[c] && armed_[c]->handler >= 0)
		handler_done_[size_t(armed_[c]->handler)] = 1;
	armed_[c] = a;
	armed_seq_[c]++;
}

// The runner delivers armed NMI `a` now (at its point, or after the call
// that did not reach it): through the scheduler when there is one.
bool Runner::fire(const Armed &a, const std::string &where)
{
	if (a.handler < 0)
		return handler(a, where, false);
	firing_ = true;
	firing_where_ = where;
	sched_->nmi_now(a.handler);  // false: the schedule ran it already
	firing_ = false;
	return v_.ok;
}

// Handler h, run by the scheduler: where the runner fires it, or at a
// decision the schedule chose (a record "at TN LABEL#K nmi Nh").
void Runner::scheduled_nmi(const Armed &a, int h)
{
	if (handler_done_[size_t(h)] || !v_.ok)
		return;
	handler_done_[size_t(h)] = 1;
	const int c = a.block.cpu;
	std::string where = firing_where_;
	std::optional<size_t> ahead;  // its v_.placed entry, if Placed::ahead
	if (!firing_) {
		if (armed_[c] && armed_[c]->handler == h)
			armed_[c].reset();
		where = "where the schedule ran it";
		if (place(a)) {
			BuddyVerdict::Placed &at = v_.placed.back();
			where = "at " + at.label + "#" + std::to_string(at.count) + ", " + where;
			at.ahead = ahead_of_op(a);
			if (at.ahead)
				ahead = v_.placed.size() - 1;
		} else if (v_.linearize_note.empty()) {
			v_.linearize_note = "linearizability not checked: the schedule placed an NMI";
		}
	}
	firing_ = false;
	// (by index: another CPU's handler placed while this one runs grows v_.placed)
	if (ahead)
		v_.placed[*ahead].span.first = ++clock_;
	handler(a, where, true);
	if (ahead) {
		v_.placed[*ahead].span.second = ++clock_;
		nmi_left_[c].reset();  // a step of its own before the op, too: the op's rest is the whole op
	}
}

// The schedule runs handler a inside its CPU's op at a decision: where the
// candidates can run it too (BuddyVerdict::placed) when the decision comes
// right after a named point of the op outside NMIs (buddy_point,
// buddy_fails, the unlock's note; buddy_lock's spin decision follows its
// timeout point with nothing between). A decision elsewhere (a user
// store's fault path, an access point, inside a handler) has no such
// point: that run is not checked.
bool Runner::place(const Armed &a)
{
	static const sched::Label &spin = sched::label_named("buddy_lock:spin");
	static const sched::Label &timeout = sched::label_named("buddy_lock:timeout");
	const int c = a.block.cpu;
	const sched::Label *decision = sched_->deciding(), *note = last_note_[c];
	if (a.depth != 0 || !busy_[c] || nmi_depth_[c] != 0 || !note || !decision ||
	    (decision != note && !(decision == &spin && note == &timeout)))
		return false;
	v_.placed.push_back({a.op, cur_op_[c], note->name, notes_[c][note->id]});
	return true;
}

// (BuddyVerdict::Placed::ahead) Handler a, which the schedule runs inside
// its CPU's op, comes before anything of that op another context could
// see: the op has written nothing (its reads before the handler, of the
// lock word or its own object's bit, a candidate repeats after it), no
// other CPU ran in it, and a was armed by the CPU's op before it, which
// did nothing else ("armed"). Not with a free's nmi=, which its own free
// arms; nor inside a free with an nmi= of its own, which did not arm while
// this handler was pending, and which a candidate that runs the handler
// before the free arms and fires (a 30-minute buddy-series campaign,
// 2026-12-07: 54 false reports, the free's result "NMI; 0; 0" in every
// such candidate where the run gave "0").
bool Runner::ahead_of_op(const Armed &a) const
{
	const int c = a.block.cpu;
	const size_t i = cur_op_[c];
	if (a.op >= i || v_.results[a.op] != "armed" || own_writes() != op_writes_[c] ||
	    sched_->switches_so_far() != op_switches_[c] || p_.ops[i].has_nmi)
		return false;
	for (size_t j = a.op + 1; j < i; j++)
		if (p_.ops[j].cpu == c)
			return false;
	return true;
}

// A nested NMI armed in this context and not delivered by the end of the
// call (or handler) after which it comes.
bool Runner::fire_if_left(int c, u64 seq, const char *why)
{
	if (!armed_[c] || armed_seq_[c] != seq || armed_[c]->depth != nmi_depth_[c] || armed_[c]->pinned >= 0)
		return true;
	const Armed n = *armed_[c];
	armed_[c].reset();
	missed_if_placed(n);
	trace([&] { return "  (" + n.block.at + " not reached: the NMI comes after the " + why + ")"; });
	return n.depth == 0 ? fire_between(n, "after it") : fire(n, "after it");
}

// A handler that arrives between two ops of its CPU (BuddyVerdict::between):
// in a concurrent run (or a candidate), an element of the orders of its own.
bool Runner::fire_between(const Armed &a, const std::string &where)
{
	if (!concurrent_ && !pins_)
		return fire(a, where);
	const int c = a.block.cpu;
	size_t e = size_t(a.pinned);
	if (a.pinned < 0) {
		e = v_.between.size();
		v_.between.push_back({a.op, cur_op_[c]});
	}
	between_[c] = int(e);
	between_op_[c] = a.op;
	grew_[c] = false;
	calls_[c].clear();
	v_.between[e].span.first = ++clock_;
	const bool ok = fire(a, where);
	v_.between[e].span.second = ++clock_;
	between_[c] = -1;
	if (grew_[c])
		grown_.push_back({v_.between[e].span, c});
	add_calls(c, a.op, v_.between[e].after, e);
	return ok;
}

// (a candidate) The concurrent run's handler e (BuddyPins::nmis), armed
// and waiting on its CPU: its place in the order has come.
bool Runner::fire_pinned(size_t e)
{
	steps_++;
	const BuddyPins::PinnedNmi &pin = pins_->nmis[e];
	std::optional<Armed> &a = armed_[pin.cpu];
	if (pin.call == 0 && a && a->pinned == int(e)) {  // it arrives: its first call now, the rest at theirs
		open_[pin.cpu] = Open{*a, 0, a->slot, locks_of(pin.cpu)};
		a.reset();
	}
	if (pin.call >= 0)
		return fire_call(e);
	if (!a || a->pinned != int(e)) {
		v_.between[e].result = "not armed";  // the order made the handler's CPU replace or never arm it
		return true;
	}
	const Armed n = *a;
	a.reset();
	return fire_between(n, "between ops");
}

// (a candidate) Call pins_->nmis[e].call of the handler its CPU has open:
// alone, in NMI context on that CPU, as the run ran it between other
// CPUs' steps. What the whole handler checks at its end (I13) comes after
// its last call.
bool Runner::fire_call(size_t e)
{
	const int c = pins_->nmis[e].cpu;
	std::optional<Open> &o = open_[c];
	if (!o || o->call != size_t(pins_->nmis[e].call)) {
		v_.between[e].result = "not armed";  // the order made its CPU replace or never arm the handler
		return true;
	}
	between_[c] = int(e);
	between_op_[c] = o->a.op;
	v_.between[e].span.first = ++clock_;
	buddy_ctx n = cpu_[c];
	n.in_nmi = true;
	const bool was_busy = busy_[c];
	busy_[c] = true;
	nmi_depth_[c]++;
	const bool ok = nmi_call(o->a.op, o->a.block.body[o->call], &n, o->slot);
	busy_[c] = was_busy;
	nmi_depth_[c]--;
	v_.between[e].span.second = ++clock_;
	between_[c] = -1;
	if (++o->call < o->a.block.body.size())
		return ok;
	const Open done = std::move(*o);
	o.reset();
	return ok && returns_unlocked(done.a.op, c, done.holds, "from an NMI handler");
}

// (concurrent) CPU c's last handler, if another CPU ran between its calls
// (calls_[c]): each call an element of its own after op `after`, the
// first in entry `first` (the handler's, when it came between ops), the
// others appended (nothing of CPU c is there yet: its CPU order holds).
void Runner::add_calls(int c, size_t armed_by, size_t after, size_t first)
{
	for (size_t k = 0; k < calls_[c].size(); k++) {
		BuddyVerdict::Between b{armed_by, after, std::move(calls_[c][k].result), calls_[c][k].span, int(k)};
		if (k == 0 && first < v_.between.size())
			v_.between[first] = std::move(b);
		else
			v_.between.push_back(std::move(b));
	}
	calls_[c].clear();
}

// An NMI handler that is an op of its own (no at=). A candidate of a run
// that split its calls (another CPU ran between them) runs only the op
// here, and each call at its own place in the order (fire_call).
bool Runner::handler_op(size_t i, const BuddyOp &op)
{
	const Armed a{lowered(op), i, 0, 0, -1};
	const int c = op.cpu;
	const auto split = [&](const BuddyPins::PinnedNmi &pin) { return pin.armed_by == pins_->orig[i] && pin.call == 0; };
	if (pins_ && std::any_of(pins_->nmis.begin(), pins_->nmis.end(), split)) {
		open_[c] = Open{a, 0, 0, locks_of(c)};
		outcome(i, "NMI");
		return true;
	}
	calls_[c].clear();
	const bool ok = handler(a, "between ops", false);
	if (!calls_[c].empty() && i < v_.results.size()) {
		v_.results[i] = "NMI";
		add_calls(c, i, i, SIZE_MAX);
	}
	return ok;
}

// An NMI handler on a.block.cpu: its calls in NMI context, in order.
// entered: the scheduler has entered NMI context (run_nmi).
bool Runner::handler(const Armed &a, const std::string &where, bool entered)
{
	const int c = a.block.cpu;
	if (reinit_cpu_ == c) {
		// The harness's reinit (destroy, then init) is not libarena's: a
		// handler inside it would free objects of an allocator that is gone
		// or not yet there, whose results nothing defines.
		result(a.op, "NMI");
		outcome(a.op, "skipped (inside reinit)");
		return true;
	}
	// The harness's own reads here are not the interrupted call's (a
	// handler the schedule ran at a point inside one): the handler's calls
	// mark their accesses again as they enter the allocator.
	AllocatorAccesses harness(false);
	buddy_ctx n = cpu_[c];
	n.in_nmi = true;
	std::optional<sched::InNmi> in_nmi;
	if (!entered)
		in_nmi.emplace();
	const bool was_busy = busy_[c];
	const std::string interrupted_holds = locks_of(c);
	// (inside its CPU's drain, the outermost handler) what it leaves cached
	const bool in_drain = draining_ == c && nmi_depth_[c] == 0;
	const std::vector<u64> cached_before = in_drain ? cached_objects() : std::vector<u64>();
	busy_[c] = true;
	nmi_depth_[c]++;
	result(a.op, "NMI");
	size_t slot = a.slot;
	bool ok = true;
	const uint64_t switches = sched_ ? sched_->switches_so_far() : 0;
	const u64 clock_at_entry = clock_;
	// At a point inside an op, or between ops or as an op (an element of
	// the orders of its own) with no nested block:
	const bool inside_op = a.depth == 0 && where.rfind("at ", 0) == 0;
	const bool own_place = a.depth == 0 && !inside_op && std::none_of(a.block.body.begin(), a.block.body.end(), nests);
	const bool first_nmi = a.depth == 0 && !nmi_ran_[c];
	// (concurrent) Of several calls, it notes each call's result and span
	// (calls_), for the case that another CPU runs between them.
	const bool apart = concurrent_ && own_place && a.block.body.size() > 1 && result_of(a.op);
	for (size_t k = 0; k < a.block.body.size() && ok && v_.ok; k++) {
		trace([&] { return "  NMI on CPU " + std::to_string(c) + (k ? ", then" : " " + where) + ":"; });
		const size_t from = apart ? result_of(a.op)->size() : 0;
		const u64 began = apart ? ++clock_ : 0;
		ok = nmi_call(a.op, a.block.body[k], &n, slot);
		if (apart)
			calls_[c].push_back({call_result(*result_of(a.op), from), {began, ++clock_}});
	}
	// A nested block that is the handler's last call has no next call to
	// arrive in: it comes right after it, still inside this handler (as a
	// CPU's last op's NMI comes right after that op). Left armed, the
	// schedule could run it after the CPU's task had ended, beside another
	// CPU's reinit (the buddy swarm at series, seed 1, program 25).
	if (ok && v_.ok)
		ok = fire_if_left(c, armed_seq_[c], "handler's last call");
	busy_[c] = was_busy;
	nmi_depth_[c]--;
	if (in_drain)
		for (u64 o : cached_objects())
			if (std::find(cached_before.begin(), cached_before.end(), o) == cached_before.end())
				nmi_cached_.push_back(o);
	// (BuddyVerdict::others_before_nmi) after other CPUs ran in that op
	if (sched_ && was_busy && inside_op && switches != op_switches_[c])
		v_.others_before_nmi = true;
	// (BuddyVerdict::others_after_nmi) the op's rest comes after this
	if (sched_ && was_busy && inside_op)
		nmi_left_[c] = sched_->switches_so_far();
	// (BuddyVerdict::real_time) while other CPUs' ops began or ended
	if (clock_ != clock_at_entry && inside_op)
		v_.real_time = false;
	// An NMI stops its own CPU only: another CPU that ran between the calls
	// of a handler of several may have seen (and changed) the state between
	// them (two buddy-series fuzz findings on correct code, 2026-12-05).
	// Between ops or as an op, its calls are elements of their own then
	// (calls_); at a point inside an op (the candidates run the whole
	// handler there, inside the op's one step), or with a nested block,
	// the run is not checked.
	const bool others_ran = sched_ && sched_->switches_so_far() != switches;
	if (apart && !others_ran)
		calls_[c].clear();
	if (others_ran && !apart && count_calls(a.block) > 1 && v_.linearize_note.empty())
		v_.linearize_note = "linearizability not checked: another CPU ran inside an NMI handler of several calls";
	// Where an NMI lands inside an op, and what its calls find, follow from
	// the locks that failed in its op before it or in it: the candidates
	// repeat the failures but run the NMI at its point, so that check is
	// off for this run. A handler of its own place (between ops, or an op)
	// lands there in every candidate, and the failures in it are its
	// acquisitions at its depth, counted from its op's start
	// (BuddyVerdict::fails), which the candidates repeat as they repeat an
	// op's; unless another handler ran on its CPU since that op began (in
	// it, or after it), whose acquisitions, which a candidate may ask
	// otherwise, the count goes on from.
	if (a.depth == 0)
		nmi_ran_[c] = true;
	if (fails_on(c) != op_fails_[c] && !(own_place && first_nmi) && v_.linearize_note.empty())
		v_.linearize_note = "linearizability not checked: a lock failed beside an NMI";
	return ok && returns_unlocked(a.op, c, interrupted_holds, "from an NMI handler");
}

// One call of a handler, in NMI context; a nested NMI it arms comes inside
// the handler's next call (at its point) or after that call.
bool Runner::nmi_call(size_t i, const BuddyOp &call, buddy_ctx *n, size_t &slot)
{
	const int c = n->cpu;
	const u64 seq = armed_seq_[c];
	const bool pending = armed_[c] && armed_[c]->depth == nmi_depth_[c];
	bool ok = true;
	switch (call.kind) {
	case BuddyOp::alloc:
		trace_more([&] { return " alloc " + std::to_string(call.size); });
		ok = alloc(i, n, call.size, slot++);
		break;
	case BuddyOp::free:
		trace_more([] { return " free"; });
		ok = nmi_free(i, slot++, call.target, n);
		break;
	case BuddyOp::bulk:
		trace_more([&] { return " " + format_buddy_op(call); });
		ok = bulk(i, n, call, slot);
		slot += bulk_slots(call);
		break;
	case BuddyOp::free_bulk:
		trace_more([&] { return " " + format_buddy_op(call); });
		ok = free_bulk(i, n, call, slot);
		slot += call.targets.size();
		break;
	case BuddyOp::store:
		trace_more([] { return " store"; });
		ok = store(i, slot++, call.target, call.value, true);
		break;
	case BuddyOp::nmi:
	case BuddyOp::nmi_free:
	case BuddyOp::nmi_alloc: {
		const BuddyOp block = lowered(call);
		trace_more([] { return " a nested NMI"; });
		const size_t first = slot;
		slot += count_slots(block);
		if (block.at.empty())
			return handler(Armed{block, i, first, nmi_depth_[c], -1}, "between the handler's calls", false);
		arm(block, i, first);
		return true;
	}
	case BuddyOp::reinit:
	case BuddyOp::drain:
		break;  // the parser keeps them out of handlers
	}
	return ok && (!pending || fire_if_left(c, seq, "handler's call"));
}

// A handler's free (nmi_free's): the level's NMI rule, predicted.
bool Runner::nmi_free(size_t i, size_t slot, const Target &target, buddy_ctx *n)
{
	bool ok = true;
	u64 addr = 0;
	if (!resolve_at(i, slot, target, &addr) || ((concurrent_ || pins_) && target.kind != Target::live && addr)) {
		outcome(i, "skipped");
	} else if (nmi_level(p_.level) && std::find(deferred_.begin(), deferred_.end(), addr) != deferred_.end()) {
		// Freeing an object twice in NMI links it into the deferred list
		// twice: a cycle only the may_goto budget ends. A known misuse.
		outcome(i, "skipped (already freed in NMI)");
	} else if (has_caches(p_.level) && addr && !live(addr) && addr % 16 == 0 &&
		   (held(addr) || std::count(in_flight_, in_flight_ + BUDDY_NR_CPUS, addr))) {
		// the interrupted free's own object still has its bit: a double free
		// the lockless check cannot see, as a cached one's (a libFuzzer
		// finding); so has one in the LIFO of the CPU the NMI interrupts,
		// which the cache check skips mid-update (an AFL++ finding)
		outcome(i, "skipped (D2: a cache holds it, or a free in flight)");
	} else {
		const bool this_cpu_locked = arena_.load32(b_.buddy + BUDDY_LOCK) == u32(n->cpu) + 1;
		std::optional<Freed> freed;
		int want;
		if (!addr)
			want = 0;
		else if (nmi_level(p_.level)) {
			want = addr % BUDDY_MIN_ALLOC_BYTES ? -EINVAL : 0;
			if (!want)
				deferred_.push_back(addr);
			// (concurrent) the deferred list owns it now: no other CPU's
			// op picks it (sequentially it stays pickable: a free of it is
			// the double free the drain reports)
			if (!want && concurrent_)
				live_order_.erase(std::find(live_order_.begin(), live_order_.end(), addr));
		} else if (p_.level == buddy_level::before && this_cpu_locked)
			want = -ETIMEDOUT;
		else {
			if (live(addr))
				freed = freeing(addr);
			want = shadow_free(addr);  // before: a plain free; series: cached or deferred
		}
		const u64 fails = fails_here(n->cpu);
		const int ret = buddy_free(n, addr);
		const bool failed = ret == -ETIMEDOUT && fails_here(n->cpu) != fails;
		if (failed) {  // its lock failed: nothing freed
			if (freed)
				unfree(*freed);
			want = ret;
		}
		ok = expect(i, "the NMI's free", ret, want);
		if (failed)
			lock_failed(i);
		if (ret == 0 && addr)
			nmi_cached_.push_back(addr);
	}
	return ok;
}

// bulk: buddy_alloc_bulk of 2^norder objects, named k0, k0 + 1, ... in op i.
// In NMI it never refills at the nmi levels, and the lock over this CPU's
// holder gives -ETIMEDOUT: -ENOMEM.
bool Runner::bulk(size_t i, buddy_ctx *b, const BuddyOp &op, size_t k0)
{
	const u64 order = size_to_order(op.size);
	const bool this_cpu_locked = arena_.load32(b_.buddy + BUDDY_LOCK) == u32(b->cpu) + 1;
	u64 out[32];
	int want = op.norder >= BUDDY_CHUNK_NUM_ORDERS ? -EINVAL
		   : order >= BUDDY_CHUNK_NUM_ORDERS || op.norder >= BUDDY_CHUNK_NUM_ORDERS - order ? -ENOMEM
												  : 0;
	if (op.norder > 5)
		return true;  /* out[] holds 32 */
	if (want == 0 && b->in_nmi && (nmi_level(p_.level) || this_cpu_locked))
		want = -ENOMEM;
	const u64 fails = fails_here(b->cpu);
	const int ret = buddy_alloc_bulk(b, op.size, op.norder, out);
	const bool failed = want == 0 && ret == -ENOMEM && fails_here(b->cpu) != fails;
	if (failed)
		want = ret;  // a failed lock: no memory
	else if (want == 0 && ret == -ENOMEM && b->in_nmi && nmi_takes_existing_chunks())
		want = ret;  // no new chunk in NMI (buddy_alloc_memory)
	if (!expect(i, "bulk", ret, want))
		return false;
	if (failed)
		lock_failed(i);
	for (u64 k = 0; ret == 0 && k < (1u << op.norder); k++) {
		if (live(out[k]))
			return fail(i, "I1: bulk handed out a live object again");
		add_live(out[k], order, ref_id(i, (k0 + k) % 256));
	}
	return true;
}

// free_bulk: its targets are slots slot0, slot0 + 1, ... of op i. In NMI
// (past before) buddy_free_bulk chains the objects and defers them all with
// one push, checking nothing: a handler's free_bulk frees live objects only,
// each once (an unaligned one's link would land in its neighbour, as
// buddy_free's NMI path checks and H's did not).
bool Runner::free_bulk(size_t i, buddy_ctx *b, const BuddyOp &op, size_t slot0)
{
	const int c = b->cpu;
	std::vector<u64> addrs;
	for (const Target &t : op.targets) {
		u64 a = 0;
		if (!((concurrent_ || pins_ || b->in_nmi) && t.kind != Target::live && t.kind != Target::null))
			resolve_at(i, slot0 + addrs.size(), t, &a);
		if (a && b->in_nmi &&
		    (std::count(addrs.begin(), addrs.end(), a) || std::count(deferred_.begin(), deferred_.end(), a) ||
		     std::count(in_flight_, in_flight_ + BUDDY_NR_CPUS, a) || !live(a)))
			a = 0;  // a double free in NMI (the runner's nmi_free skips it too)
		addrs.push_back(a);
	}
	if (b->in_nmi && p_.level != buddy_level::before) {
		// (concurrent) claimed now, as a free's object: no other CPU picks
		// them while the chain is written (a point at every access lets
		// one in there)
		for (u64 a : addrs)
			if (a && concurrent_)
				std::erase(live_order_, a);
		const int ret = buddy_free_bulk(b, addrs.data(), addrs.size());
		// the chain first -> ... -> last, spliced in at the head
		for (auto it = addrs.rbegin(); it != addrs.rend(); ++it)
			if (*it) {
				if (nmi_level(p_.level))
					deferred_.push_back(*it);
				else
					shadow_free(*it);  // series: the deferred list is a cache to its checks
				nmi_cached_.push_back(*it);
			}
		return expect(i, "the NMI's free_bulk", ret, 0);
	}
	const bool this_cpu_locked = arena_.load32(b_.buddy + BUDDY_LOCK) == u32(c) + 1;
	if (b->in_nmi && this_cpu_locked)  // before: the lock over its holder times out
		return expect(i, "the NMI's free_bulk", buddy_free_bulk(b, addrs.data(), addrs.size()), addrs.empty() ? 0 : -ETIMEDOUT);
	int want = 0;
	bool freed = false;
	std::vector<Freed> unfreed;
	if (!addrs.empty()) {
		for (u64 a : addrs)
			if (a) {
				if (live(a))
					unfreed.push_back(freeing(a));
				int e = shadow_free(a);
				freed |= e == 0;
				want = want ? want : e;
			}
		if (nmi_level(p_.level))
			drained_[c] = false;  // predicted at the drain's point, inside the call
	}
	if (has_caches(p_.level) && freed)
		want = 0;  // v2: fails only when nothing was freed
	const u64 fails = fails_here(c);
	const int ret = buddy_free_bulk(b, addrs.data(), addrs.size());
	if (nmi_level(p_.level) && !addrs.empty()) {
		const int e = take_drain(c);
		want = want ? want : e;
	}
	const bool failed = ret == -ETIMEDOUT && fails_here(c) != fails;
	if (failed) {  // its lock failed: nothing freed
		for (const Freed &f : unfreed)
			unfree(f);
		want = ret;
	}
	const bool ok = expect(i, "free_bulk", ret, want);
	if (failed)
		lock_failed(i);
	return ok;
}

// A store into a live object: the user's, through the mapping (a fault
// may map the page), or a handler's (in_nmi): a BPF program writing
// through the kernel view, as the allocator does (no fault, no mmap lock).
bool Runner::store(size_t i, size_t slot, const Target &target, u64 value, bool in_nmi)
{
	u64 addr = 0;
	// A target that is no live object's start (a text Program's interior,
	// unaligned or stale target) has no object to store into.
	if (!resolve_at(i, slot, target, &addr) || !live(addr)) {
		outcome(i, "skipped");
		return true;
	}
	const u64 size = 16ull << shadow_.live.at(addr);
	// An object with any address of it freed in NMI is not the user's any
	// more: the deferred push wrote its link at that address, unchecked
	// (an interior or unaligned free is refused only at the drain).
	if (std::any_of(deferred_.begin(), deferred_.end(), [&](u64 d) { return d >= addr && d < addr + size; })) {
		outcome(i, "skipped");
		return true;
	}
	const u64 off = 8 * ((value >> 3) % (size / 8));
	// (concurrent) held by this CPU while it stores: out of the others' reach
	if (concurrent_)
		live_order_.erase(std::find(live_order_.begin(), live_order_.end(), addr));
	int sig = 0;
	if (in_nmi) {
		// The object's words are its user's, not the allocator's: the
		// lockset checker compares the allocator's accesses, and sees a
		// user's store outside an NMI (through the machine) not at all. A
		// handler's store is one too: two handlers of one CPU storing into
		// an object it owns (at different NMI depths, which the checker
		// compares) are the user's business (a 24-minute swarm at before
		// reported that pair: src/libarena/tests/data/user_stores_in_two_nmis.bl).
		sched::IgnoreAccesses users;
		arena_.store64(addr + off, value);
	} else {
		sig = arena_.machine().store(0, addr + off, 8, value).sig;
		arena_.written(addr + off, addr + off + 8);  // around the Arena: the checker is told here
	}
	if (concurrent_)
		live_order_.push_back(addr);
	return expect(i, "a user store into the object", sig, 0);
}

bool Runner::would_skip(const BuddyOp &op, size_t i)
{
	if (!has_caches(p_.level))
		return false;
	std::vector<Target> ts = op.targets;
	if (op.kind == BuddyOp::free)
		ts = {op.target};
	else if (op.kind != BuddyOp::free_bulk)
		return false;
	for (const Target &t : ts) {
		u64 a = 0;
		// a concurrent run (and its candidates) never frees a stale or
		// interior target: whether a cache holds it (maybe mid-pop on
		// another CPU) changes nothing
		if ((concurrent_ || pins_) && t.kind != Target::live)
			continue;
		if (resolve_at(i, size_t(&t - ts.data()), t, &a) && a && !live(a) && a % 16 == 0 && cached(a))
			return true;
	}
	return false;
}

// The buddy lock and the transfer locks hold their owner as CPU + 1. The
// cache guard is not here: I10 (check_caches) names it. The transfer locks
// in one read: this runs after every op and handler, candidates' included,
// and eight loads through the machine's page lookup were a tenth of a
// linearizability candidate's time (the grown buddy-series corpus).
std::string Runner::locks_of(int cpu)
{
	std::string held;
	const u32 me = u32(cpu) + 1;
	if (arena_.load32(b_.buddy + BUDDY_LOCK) == me)
		held = "the buddy lock";
	if (!has_caches(p_.level))
		return held;
	const ArenaBytes<BUDDY_CACHE_ORDERS * SIZEOF_BUDDY_XFER> xfers(arena_, buddy_xfer_of(&b_, 0));
	for (u64 o = 0; o < BUDDY_CACHE_ORDERS; o++)
		if (xfers.get<u32>(buddy_xfer_of(&b_, o) + XFER_LOCK) == me)
			held += (held.empty() ? "" : ", ") + std::string("the order-") + std::to_string(o) + " transfer lock";
	return held;
}

bool Runner::returns_unlocked(size_t i, int cpu, const std::string &before, const char *when)
{
	const std::string held = locks_of(cpu);
	if (held == before)
		return true;
	return fail(i, "I13: CPU " + std::to_string(cpu) + " returns " + when + " holding " + held);
}

bool Runner::op_and_checks(size_t i, const BuddyOp &op)
{
	const int c = op.cpu;
	// An NMI armed for this CPU before this op fires inside it (at its point) or after it.
	const bool pending = armed_[c].has_value();
	const u64 seq = armed_seq_[c];
	busy_[c] = true;
	cur_op_[c] = i;
	notes_[c].clear();
	last_note_[c] = nullptr;
	std::memset(questions_[c], 0, sizeof questions_[c]);
	op_fails_[c] = fails_on(c);
	nmi_ran_[c] = false;
	op_switches_[c] = sched_ ? sched_->switches_so_far() : 0;
	nmi_left_[c].reset();
	op_writes_[c] = own_writes();
	steps_++;
	grew_[c] = false;
	began(i);
	bool ok = step(i, op) && returns_unlocked(i, c, "", "to user space");
	busy_[c] = false;
	ended(i);
	if (nmi_left_[c] && sched_->switches_so_far() != *nmi_left_[c])
		v_.others_after_nmi = true;
	if (grew_[c] && i < v_.spans.size())
		grown_.push_back({v_.spans[i], c});
	if (ok && pending)
		ok = fire_if_left(c, seq, "op");
	return ok && check(i);
}

bool Runner::step(size_t i, const BuddyOp &op)
{
	trace([&] { return concurrent_ ? "T" + std::to_string(op.cpu) + ": " + format_buddy_op(op) : format_buddy_op(op); });
	buddy_ctx *b = &cpu_[op.cpu];
	u64 addr = 0;
	// Concurrent runs free only live objects: a stale or interior pointer
	// is another CPU's business mid-op (the error contract is sequential).
	// (pinned: the linearizability check's candidates follow the same rule)
	auto concurrent_skip = [&](const Target &t) {
		return (concurrent_ || pins_) && t.kind != Target::live && t.kind != Target::null;
	};

	if (pins_ && !pins_->skipped[i].empty()) {  // as the pinned run skipped it
		outcome(i, pins_->skipped[i]);
		return true;
	}
	if (would_skip(op, i)) {
		outcome(i, "skipped (D2: a cache holds the object it frees again)");
		return true;
	}
	switch (op.kind) {
	case BuddyOp::alloc:
		return alloc(i, b, op.size);
	case BuddyOp::nmi_alloc:
	case BuddyOp::nmi_free:
	case BuddyOp::nmi:
		if (op.at.empty())
			return handler_op(i, op);
		arm(lowered(op), i, 0);
		outcome(i, "armed");
		return true;
	case BuddyOp::bulk:
		return bulk(i, b, op, 0);
	case BuddyOp::free: {
		if (!resolve_at(i, 0, op.target, &addr) || concurrent_skip(op.target)) {
			outcome(i, "skipped");
			return true;
		}
		const bool with_nmi = op.has_nmi && addr && !armed_[op.cpu];
		u64 nmi_seq = 0;
		if (with_nmi) {  // an NMI frees nmi_target at lock_held (slot 1)
			arm(lowered(op), i, 1);
			nmi_seq = armed_seq_[op.cpu];
		}
		// claimed now: no other CPU picks it while this free runs
		const bool was_live = addr && live(addr);
		int want = addr && addr % 16 == 0 && !was_live && has_caches(p_.level) ? -EINVAL : 0;
		std::optional<Freed> freed;
		if (was_live) {
			freed = freeing(addr);
			remove_live(addr);
		}
		in_flight_[op.cpu] = addr;
		const u64 fails = fails_here(op.cpu);
		const int ret = buddy_free(b, addr);
		in_flight_[op.cpu] = 0;
		const bool failed = ret == -ETIMEDOUT && fails_here(op.cpu) != fails;
		// the free never took the lock (a cache, a failed lock): the NMI comes after it
		if (with_nmi && !fire_if_left(op.cpu, nmi_seq, "op"))
			return false;
		if (!addr) {
			want = 0;
		} else if (!has_caches(p_.level)) {
			// own result: live -> 0, else -EINVAL; the nmi levels drain what the
			// NMI (if any, at lock_held) deferred after it
			const int own = was_live ? 0 : -EINVAL;
			const int drain = nmi_level(p_.level) ? take_drain(op.cpu) : 0;
			want = own ? own : drain;  // the contract, whatever the level does
		} else if (addr % 16) {
			want = -EINVAL;
		}
		if (failed) {  // nothing freed, nothing drained
			if (freed)
				unfree(*freed);
			want = ret;
		}
		const bool ok = expect(i, "free", ret, want);
		if (failed)
			lock_failed(i);
		return ok;
	}
	case BuddyOp::free_bulk:
		return free_bulk(i, b, op, 0);
	case BuddyOp::store:
		return store(i, 0, op.target, op.value);
	case BuddyOp::drain: {
		if (concurrent_ && !alone(op.cpu)) {
			outcome(i, "skipped (another CPU still runs ops)");
			return true;
		}
		if (sched_)
			sched_->join_all();
		nmi_cached_.clear();
		const u64 fails = fails_here(op.cpu);
		draining_ = op.cpu;
		const int ret = buddy_cache_drain_all(b);
		draining_ = -1;
		if (ret == -ETIMEDOUT && fails_here(op.cpu) != fails) {  // a lock failed: some stay cached
			outcome(i, std::to_string(ret));
			lock_failed(i);
			return true;
		}
		if (!expect(i, "buddy_cache_drain_all", ret, 0))
			return false;
		// An NMI inside the drain frees into its CPU's LIFO, or refills it:
		// what it put there may be cached after the drain, nothing else.
		if (!caches_check(&point_cached_).empty())
			return true;
		size_t left = 0;
		for (const auto &[a, order] : point_cached_)
			left += std::count(nmi_cached_.begin(), nmi_cached_.end(), a) == 0;
		if (left)
			return fail(i, "I7: buddy_cache_drain_all left " + std::to_string(left) + " objects cached");
		return true;
	}
	case BuddyOp::reinit:
		if (concurrent_ && !alone(op.cpu)) {
			outcome(i, "skipped (another CPU still runs ops)");
			return true;
		}
		if (sched_)
			sched_->join_all();
		reinit_cpu_ = op.cpu;
		buddy_destroy(b);
		shadow_ = Shadow{};
		live_changes_++;
		live_order_.clear();
		stale_.clear();
		deferred_.clear();
		const u64 fails = fails_here(op.cpu);
		const int ret = buddy_init(b);
		// a failed lock: no chunk yet (-EINVAL, or -ENOMEM when buddy_chunk_get's failed)
		const bool failed = ret && fails_here(op.cpu) != fails;
		reinit_cpu_ = -1;
		const bool ok = expect(i, "buddy_init", ret, failed ? ret : 0);
		if (failed)
			lock_failed(i);
		return ok;
	}
	return true;
}

bool Runner::start()
{
	v_.results.resize(p_.ops.size());
	v_.spans.assign(p_.ops.size(), {0, UINT64_MAX});
	v_.locked.assign(p_.ops.size(), 0);
	v_.refs.resize(p_.ops.size());
	if (pins_)
		v_.between.resize(pins_->nmis.size());
	trace([&] { return std::string("level ") + to_string(p_.level); });
	if (!arena_.ok() || (!started_ && buddy_init(&b_) != 0))
		return fail(0, "the arena or buddy_init failed");
	return true;
}

void Runner::run_cpu(int cpu)
{
	size_t g = 0;  // the joins passed
	for (size_t i = 0; i < p_.ops.size() && v_.ok; i++) {
		for (; g < p_.joins.size() && p_.joins[g] <= i && v_.ok; g++)
			barrier(g);
		if (p_.ops[i].cpu != cpu)
			continue;
		op_and_checks(i, p_.ops[i]);
		// right after the CPU's last op, as in the candidates, not past the
		// joins still ahead (where ops of the later groups would come first)
		if (last_of_cpu(i))
			end_nmi(cpu);
	}
}

// A `join` (concurrent): this CPU has run its ops before join g; it waits
// (Scheduler::join_wait) until every CPU has. The last to arrive orders all
// that came before after all that comes after (the lockset's join_all).
void Runner::barrier(size_t g)
{
	static const sched::Label &join = sched::label_named("buddy_runner:join");
	if (++arrived_[g] == ncpus_) {
		sched_->join_all();
		sched_->join_wake(&arrived_);
		return;
	}
	sched_->join_wait(&arrived_, [this, g] { return arrived_[g] == ncpus_ || !v_.ok; }, join);
}

// An NMI armed by the CPU's last op comes at the end (of its task, when concurrent).
void Runner::end_nmi(int cpu)
{
	if (!v_.ok || !armed_[cpu] || armed_[cpu]->pinned >= 0)
		return;
	const Armed n = *armed_[cpu];
	armed_[cpu].reset();
	missed_if_placed(n);
	if (fire_between(n, "between ops"))
		check(n.op);
}

// A sequential Program with schedule records (lock failures): CPU N's ops
// are task TN of a scheduler, as in a concurrent run, so that "at TN
// LABEL#K fail" means the same in both, but each op waits for its turn
// (program order), and each CPU's armed NMI comes after every op, in CPU
// order, as without records.
void Runner::run_in_order(sched::Strategy *strategy)
{
	int ncpus = 1;
	for (const BuddyOp &op : p_.ops)
		ncpus = std::max(ncpus, op.cpu + 1);
	// Only the strategy's fail and NMI answers: which waiting task checks
	// its turn first changes nothing, and a switch record would make the
	// Program's text concurrent.
	struct EventsOnly final : sched::Strategy {
		sched::Strategy *s;
		explicit EventsOnly(sched::Strategy *inner) : s(inner) {}
		void begin(int n) override { s->begin(n); }
		int pick(const sched::Decision &d) override { return d.default_choice; }
		bool fail(const sched::Decision &d) override { return s->fail(d); }
		int nmi(const sched::Decision &d, const std::vector<int> &pending) override { return s->nmi(d, pending); }
		std::string divergence() const override { return s->divergence(); }
	};
	sched::Replay replay(p_.schedule);
	EventsOnly events(strategy ? strategy : &replay);
	sched::Scheduler s(events);
	s.lockset = false;  // one op at a time, in order: nothing races
	sched_ = &s;
	const sched::Label &turn_label = sched::label_named("buddy_runner:turn");
	size_t turn = 0;
	for (int c = 0; c < ncpus; c++)
		s.spawn([this, c, &s, &turn, &turn_label] {
			auto wait_turn = [&](size_t t) { s.join_wait(&turn, [&] { return turn == t || !v_.ok; }, turn_label); };
			for (size_t i = 0; i < p_.ops.size() && v_.ok; i++) {
				if (p_.ops[i].cpu != c)
					continue;
				wait_turn(i);
				if (v_.ok)
					op_and_checks(i, p_.ops[i]);
				turn = i + 1;
				s.join_wake(&turn);
			}
			wait_turn(p_.ops.size() + size_t(c));
			end_nmi(c);
			turn++;
			s.join_wake(&turn);
		});
	sched::RunResult r = s.run();
	sched_ = nullptr;
	v_.records = r.records;
	v_.trace_hash = r.trace_hash;
	if (v_.ok && r.outcome != sched::Outcome::done)
		fail(p_.ops.size(), std::string("schedule: ") + sched::to_string(r.outcome) + ": " + r.report);
}

void Runner::run_sequential(size_t from)
{
	for (size_t i = from; i < p_.ops.size() && v_.ok; i++) {
		if (boundary_ && i > 0)
			boundary_(boundary_arg_, i, steps_);
		op_and_checks(i, p_.ops[i]);
		// (pinned: the linearizability check's candidates) as in a
		// concurrent run, right after the CPU's last op; then the
		// handlers whose place in the order is next
		if (pins_ && last_of_cpu(i))
			end_nmi(p_.ops[i].cpu);
		for (size_t k = 0; pins_ && i < pins_->fire_after.size() && k < pins_->fire_after[i].size() && v_.ok; k++)
			fire_pinned(pins_->fire_after[i][k]);
		if (pins_ && pins_->enough && v_.ok && pins_->enough(v_, steps_))
			return;
	}
	for (int c = 0; c < BUDDY_NR_CPUS && v_.ok; c++)
		end_nmi(c);
}

BuddyVerdict Runner::run(sched::Strategy *strategy)
{
	if (!start())
		return v_;
	if (!p_.concurrent && (!p_.schedule.empty() || strategy)) {  // records, or a strategy's events
		run_in_order(strategy);
		return v_;
	}
	if (!p_.concurrent) {
		run_sequential(0);
		return v_;
	}
	concurrent_ = true;
	int ncpus = 1;
	for (const BuddyOp &op : p_.ops)
		ncpus = std::max(ncpus, op.cpu + 1);
	sched::Replay replay(p_.schedule);
	sched::Scheduler s(strategy ? *strategy : replay);
	sched_ = &s;
	ncpus_ = ncpus;
	arrived_.assign(p_.joins.size(), 0);
	s.on_point = [this] { return v_.ok ? point_check() : std::string(); };
	s.lockset = g_checkers.lockset;
	s.access_points = p_.access_points;
	s.nmis_at_access_points = false;  // the shadow's predictions (Scheduler::nmis_at_access_points)
	for (int c = 0; c < ncpus; c++) {
		done_[c] = false;
		s.spawn([this, c] {
			run_cpu(c);
			done_[c] = true;
		});
	}
	sched::RunResult r = s.run();
	sched_ = nullptr;
	note_racing_growth();
	v_.records = r.records;
	v_.steps = r.steps;
	v_.trace_hash = r.trace_hash;
	if (v_.ok && r.outcome != sched::Outcome::done)
		fail(p_.ops.size(), std::string("schedule: ") + sched::to_string(r.outcome) + ": " + r.report);
	else if (!v_.ok && r.outcome == sched::Outcome::violation && r.report != v_.what)
		v_.what = r.report;  // an on_point violation names its point
	if (v_.ok && check(p_.ops.size()) && has_caches(p_.level)) {
		// Every schedule ends drained: the round trip (I7) of whatever is not live
		v_.trace.push_back("(end) drain");
		BuddyOp d;
		d.kind = BuddyOp::drain;
		concurrent_ = false;
		busy_[d.cpu] = true;  // in an op: the drain holds its CPU's cache guard
		const bool ok = step(p_.ops.size(), d);
		busy_[d.cpu] = false;
		if (ok)
			check(p_.ops.size());
	}
	return v_;
}

}  // namespace

void set_buddy_point_check_reuse(bool on) { g_point_reuse = on; }

void set_buddy_checkers(const BuddyCheckers &c) { g_checkers = c; }

namespace {

// A Runner for p on the arena its level's start left (buddy_workspace.h):
// start() is the same for every Program of a level, open or not upstream,
// and kind of run (a candidate skips the checks at the points of its
// buddy_init, so its arena is another one), and its verdict is its checks'.
BuddyStartKey start_key(const BuddyProgram &p, bool pinned) { return {p.level, p.open_upstream, pinned ? 1 : 0}; }

std::function<bool(Arena &)> start_of(const BuddyProgram &p, bool pinned)
{
	return [level = p.level, open_upstream = p.open_upstream, pinned](Arena &a) {
		BuddyProgram none;
		none.level = level;
		none.open_upstream = open_upstream;
		const BuddyPins no_pins;
		Runner r(none, a, pinned ? &no_pins : nullptr);
		return r.start() && r.verdict().ok;
	};
}

BuddyVerdict run_started(const BuddyProgram &p, const BuddyPins *pins, sched::Strategy *strategy)
{
	return with_started_buddy_arena(start_key(p, pins), start_of(p, pins), [&](Arena &a, bool started) {
		return Runner(p, a, pins, started).run(strategy);
	});
}

}  // namespace

BuddyVerdict run_buddy_program(const BuddyProgram &p)
{
	BuddyVerdict v = run_started(p, nullptr, nullptr);
	if (p.concurrent && linearize_enabled() && g_checkers.linearize)
		check_buddy_linearizable(p, v);
	return v;
}

BuddyVerdict run_buddy_program(const BuddyProgram &p, const BuddyPins &pins) { return run_started(p, &pins, nullptr); }

namespace {
// set_buddy_candidate_resume; FL_BUDDY_RESUME=off|compare in the environment
std::atomic<int> g_resume{[] {
	const char *e = std::getenv("FL_BUDDY_RESUME");
	return int(e && !std::strcmp(e, "off") ? BuddyResume::off : e && !std::strcmp(e, "compare") ? BuddyResume::compare : BuddyResume::on);
}()};
}  // namespace

void set_buddy_candidate_resume(BuddyResume mode) { g_resume = int(mode); }

// The states saved along the last order replayed, by the elements begun
// before them (the check's orders share long prefixes: over the grown
// buddy-series corpus two thirds of the positions a candidate ran were the
// previous candidate's too). A state is the whole arena (machine, allocator,
// and the Runner, which lives there), a few hundred KiB.
struct BuddyCandidates::Impl {
	const BuddyProgram &q;
	const BuddyPins &pins;
	Arena *arena = nullptr;
	arena::Arena *space = nullptr;  // null: no reuse, every candidate runs afresh
	Runner *runner = nullptr;       // in space, so the saved bytes hold it
	struct Saved {
		size_t op = 0, begun = 0;  // before op `op`, after `begun` elements of the order
		arena::Arena::Frozen bytes;
	};
	std::vector<Saved> saved;  // [0, live) along the last order; past it, buffers kept for reuse
	size_t live = 0;
	// The buffers outlive the check: a few hundred KiB each, allocated
	// afresh for every check they were a fifth of the page faults over
	// the grown buddy-series corpus.
	static std::vector<Saved> &spare()
	{
		thread_local std::vector<Saved> buffers;
		return buffers;
	}
	Impl(const BuddyProgram &q, const BuddyPins &pins) : q(q), pins(pins)
	{
		arena::Pause heap;
		saved.swap(spare());
	}
	~Impl()
	{
		arena::Pause heap;
		saved.swap(spare());
	}

	// A state saved before op i is on this order's path if the order shares
	// its elements and the next one is op i, not one more handler after op
	// i - 1: i + the handlers after ops 0..i-1 is where it was saved.
	void keep_on_path(size_t same)
	{
		std::vector<size_t> before(q.ops.size() + 1, 0);
		for (size_t i = 0; i < q.ops.size(); i++)
			before[i + 1] = before[i] + 1 + (i < pins.fire_after.size() ? pins.fire_after[i].size() : 0);
		size_t k = 0;
		while (k < live && saved[k].begun <= same && before[saved[k].op] == saved[k].begun)
			k++;
		live = k;
	}
	// One state per candidate, at its last boundary within the prefix it
	// shares with the last one (where it leaves that order): the search
	// tries the other choices there next, and deeper ones below them. A
	// state saved at every boundary cost more than the ops it spared (186
	// KiB a state; -runs=0 over the grown buddy-series corpus, 26 s against
	// 15 s without resuming and 12 s so).
	static void at_boundary(void *self, size_t i, size_t begun)
	{
		Impl *c = static_cast<Impl *>(self);
		const size_t next = begun + 1 + (i < c->pins.fire_after.size() ? c->pins.fire_after[i].size() : 0);
		if ((c->live && c->saved[c->live - 1].begun >= begun) || begun > c->same || next <= c->same)
			return;
		arena::Pause heap;
		if (c->live == c->saved.size())
			c->saved.emplace_back();
		Saved &s = c->saved[c->live++];
		s.op = i;
		s.begun = begun;
		c->space->save(0, &s.bytes);  // the space holds the started state from its first byte
	}
	size_t same = 0;  // the current candidate's prefix shared with the last one
	BuddyVerdict run()
	{
		if (!live || !space) {
			const auto [a, sp] = started_buddy_arena(start_key(q, true), start_of(q, true));
			if (!a)
				return run_buddy_program(q, pins);
			arena = a;
			space = sp;
		} else {
			space->roll_back(saved[live - 1].bytes);
		}
		std::optional<BuddyVerdict> out;
		{
			arena::Scope in(space);
			size_t from = 0;
			if (!live) {
				runner = new Runner(q, *arena, &pins, true);
				runner->at_boundaries(&Impl::at_boundary, this);
				if (!runner->start())
					from = q.ops.size();
			} else {
				from = saved[live - 1].op;
			}
			runner->run_sequential(from);
			arena::Pause heap;
			out.emplace(runner->verdict());
		}
		return std::move(*out);
	}
};

BuddyCandidates::BuddyCandidates(const BuddyProgram &q, const BuddyPins &pins) : impl_(new Impl(q, pins)) {}
BuddyCandidates::~BuddyCandidates() { delete impl_; }

BuddyVerdict BuddyCandidates::run(size_t same)
{
	const BuddyResume mode = BuddyResume(g_resume.load());
	if (mode == BuddyResume::off)
		return run_buddy_program(impl_->q, impl_->pins);
	impl_->keep_on_path(same);
	impl_->same = same;
	BuddyVerdict v = impl_->run();
	if (mode != BuddyResume::compare)
		return v;
	// On an arena of its own (the candidates' holds the saved states).
	Arena own;
	const BuddyVerdict fresh = Runner(impl_->q, own, &impl_->pins).run(nullptr);
	// Not a verdict of the check: the search would count it as one more
	// order that does not match, and another might.
	if (v.ok != fresh.ok || v.what != fresh.what || v.results != fresh.results || v.between != fresh.between ||
	    v.failed_step != fresh.failed_step || v.placed_missed != fresh.placed_missed) {
		std::fprintf(stderr, "faultline: checker: a candidate resumed after %zu elements differs from a fresh run of it\n%s",
			     same, format_buddy_program(impl_->q).c_str());
		std::abort();
	}
	return v;
}

BuddyVerdict run_buddy_program(const BuddyProgram &p, sched::Strategy &s)
{
	BuddyVerdict v = run_started(p, nullptr, &s);
	if (linearize_enabled() && g_checkers.linearize)
		check_buddy_linearizable(p, v);
	return v;
}

struct BuddySession::Impl {
	explicit Impl(const BuddyProgram &p) : runner(p, arena) { ok = runner.start(); }
	Arena arena;  // its own: a session outlives any one run
	Runner runner;
	bool ok;
};

BuddySession::BuddySession(buddy_level level)
{
	program_.level = level;
	impl_ = new Impl(program_);
}

BuddySession::~BuddySession() { delete impl_; }

bool BuddySession::step(const BuddyOp &op)
{
	program_.ops.push_back(op);
	return impl_->ok && (impl_->ok = impl_->runner.next(program_.ops.back()));
}

const BuddyVerdict &BuddySession::verdict() const { return impl_->runner.verdict(); }
size_t BuddySession::live_objects() const { return impl_->runner.live_objects(); }
bool BuddySession::would_skip(const BuddyOp &op) const { return impl_->runner.would_skip(op); }

}  // namespace fl::libarena
