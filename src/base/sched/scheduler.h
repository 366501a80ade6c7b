// SPDX-License-Identifier: GPL-2.0-only
// The deterministic cooperative scheduler. Simulated tasks are fibers on the
// calling thread, exactly one running at a time; control changes hands only
// at scheduling points (inside the kernel-style lock shims,
// src/kernel/include/locking.h) and when a task blocks or exits. At each such
// decision a Strategy picks the next task; every pick that differs from the
// default policy (keep running; when the current task cannot, the lowest
// runnable id) is recorded as a label-anchored Record, so a run replays from
// its records alone.
//
// Nothing here knows the machine: the port reaches the scheduler through the
// shim functions below (a no-op when no scheduler is active), and thread-local
// kernel globals are carried across switches by the TLS slots that each arch
// registers (register_tls_slot).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/sched/fiber.h"
#include "base/sched/label.h"
#include "base/sched/lockdep.h"
#include "base/sched/lockset.h"
#include "base/sched/record.h"

namespace fl::sched {

// What a strategy sees at a decision.
struct Decision {
	int current;                  // the task that reached the point
	bool current_runnable;        // false when it blocked or exited
	uint32_t label;               // Label::id
	uint32_t occurrence;          // of (current, label), 1-based
	const std::vector<int> *runnable;  // sorted ids, non-empty
	int default_choice;
	uint64_t step;                // decisions with >= 2 runnable tasks so far
	uint64_t event = 0;           // fail and nmi questions asked so far (Strategy::fail, nmi);
	                              // a question's own number, a pick's count of those before it
	bool in_nmi = false;          // inside an NMI handler on the current task, whose
	                              // interrupted decision may still be to come (its pick)
};

class Strategy {
public:
	virtual ~Strategy() = default;
	virtual void begin(int ntasks) { (void)ntasks; }
	virtual int pick(const Decision &) = 0;
	// At a fallible acquisition (Scheduler::fallible_point): true makes it
	// fail. Asked whatever the number of runnable tasks.
	virtual bool fail(const Decision &) { return false; }
	// At a decision of a runnable task with NMI handlers pending on it
	// (ascending ids): the handler to run there, or -1. Asked before pick().
	virtual int nmi(const Decision &, const std::vector<int> &pending) { (void)pending; return -1; }
	// Replay: the records were not all consumed, or one did not fit.
	virtual std::string divergence() const { return {}; }
};

enum class Outcome : uint8_t { done, deadlock, violation, livelock, diverged };
const char *to_string(Outcome);

struct RunResult {
	Outcome outcome = Outcome::done;
	std::string report;           // the deadlock wait-for graph, the lock report, ...
	std::vector<Record> records;  // the non-default picks, in order
	uint64_t decisions = 0, steps = 0, switches = 0;
	uint64_t fails = 0, nmis = 0;  // failed acquisitions, NMI handlers run (recorded or not)
	uint64_t trace_hash = 0;      // over (task, label name) of every decision: the same in every process
};

// Carries one thread-local across fiber switches (the port's kg/kcfg/current).
struct TlsSlot {
	void *(*get)();
	void (*set)(void *);
};
void register_tls_slot(TlsSlot);

// Schedule coverage for the fuzzers (a libFuzzer extra counter per pair):
// called with two label ids at every lock hand-off (the label where another
// task last released the lock, the label where this one takes it) and at
// every switch the strategy chose (where the running task stopped, where the
// next one resumes). nullptr (the default): nothing is called.
using PairHook = void (*)(uint32_t from_label, uint32_t to_label);
void set_pair_hook(PairHook);

class Scheduler {
public:
	explicit Scheduler(Strategy &);
	~Scheduler();
	// The strategy for the next run() (the lockdep graph carries over).
	void set_strategy(Strategy &s) { strategy_ = &s; }
	Outcome outcome_so_far() const { return result_.outcome; }
	const std::string &report_so_far() const { return result_.report; }
	// Task switches so far in this run: a caller that saw the count change
	// across a stretch of its own code knows another task ran inside it.
	uint64_t switches_so_far() const { return result_.switches; }

	// Adds a task; ids are 0, 1, ... in order. Tasks persist across run()s
	// only in their lockdep state (the graph is per Scheduler).
	int spawn(std::function<void()> body, ExecContext ctx = ExecContext::task);
	// Runs the spawned tasks to completion (or to a deadlock, a violation,
	// the step cap, a divergence); tears every fiber down before returning.
	RunResult run();

	// Called at every decision (on the running fiber): ghost invariants.
	// A non-empty return is a violation.
	std::function<std::string()> on_point;
	uint64_t step_cap = 200000;
	// The lockset race checker over the shared state the port and the
	// allocator declare (access()); on by default.
	bool lockset = true;
	// A scheduling point at every declared shared access, so that a lock
	// deleted around code with no point inside also opens a window the
	// explorer can hit. Off by default: it multiplies the points PCT and the
	// bounded search range over.
	bool access_points = false;
	// Whether a pending NMI may run at an access point too. The allocator's
	// runner says no: it predicts a handler's results from the state its
	// CPU is in at a named point (the guard, the locks, the deferred list),
	// which an arbitrary load or store of the interrupted op is not.
	bool nmis_at_access_points = true;
	uint64_t lockset_accesses() const { return lockset_.accesses(); }

	// ---- the shim's interface (current task, on its fiber) ----
	void point(const Label &);
	void mutex_lock(const void *obj, const LockClass &, const Label &);
	bool mutex_trylock(const void *obj, const LockClass &, const Label &);
	void mutex_unlock(const void *obj, const LockClass &, const Label &);
	void down_read(const void *obj, const LockClass &, const Label &);
	bool down_read_trylock(const void *obj, const LockClass &, const Label &);
	void up_read(const void *obj, const LockClass &, const Label &);
	// `subclass`: mmap_write_lock_nested's SINGLE_DEPTH_NESTING (fork's child mm).
	void down_write(const void *obj, const LockClass &, const Label &, const LockClass *nest = nullptr,
			uint8_t subclass = 0);
	void up_write(const void *obj, const LockClass &, const Label &);
	void downgrade_write(const void *obj, const LockClass &, const Label &);
	void spin_lock(const void *obj, const LockClass &, const Label &, uint8_t subclass = 0);
	void spin_unlock(const void *obj, const LockClass &, const Label &);
	void rcu_read_lock(const Label &);
	void rcu_read_unlock(const Label &);
	void might_sleep(const Label &);
	// might_fault(): might_sleep() and, for lockdep, a read acquisition of
	// mmap_lock (a fault on the user address would take it).
	void might_fault(const Label &);
	// The task returns to user space after `what` (a syscall, a fault): no
	// lock may be held, nor a VMA write lock, RCU or a spinlock section.
	void user_return(const std::string &what);
	// A lock the caller took or released itself without waiting (a
	// trylock on a lock word the harness keeps): lockdep and the lockset
	// see it; no scheduling decision.
	void hold_nowait(const void *obj, const LockClass &, const Label &);
	void release_nowait(const void *obj, const LockClass &);
	// ---- NMIs and lock failures as schedule decisions (record.h) ----
	// A handler the harness runs as an NMI on `task` (on its CPU), at a
	// decision the strategy picks, or when nmi_now() asks, or else when the
	// task's body returns. Ids are 0, 1, ... per run, in order; call
	// between spawn() and run(), or during the run on `task`'s own fiber
	// (a handler armed as the task goes, a handler's too). Each runs once;
	// a handler's own decisions may run another pending handler (a nested NMI).
	int add_nmi(int task, std::function<void()> body);
	// On the task's fiber: runs handler `h` now if it is still pending on
	// the current task (a Program's "NMI by the end of this op"). False if
	// it already ran.
	bool nmi_now(int h);
	// A scheduling point at a fallible acquisition (a trylock that may
	// find the lock busy, rqspinlock's timeout, vma_start_read): true if
	// the strategy (a "fail" record on replay) makes it fail.
	bool fallible_point(const Label &);

	// The harness runs an NMI handler on the current task (the interrupted
	// context stays frozen under it): lockdep sees NMI context, the lockset
	// a context of its own that holds none of the interrupted one's locks.
	void nmi_enter();
	void nmi_exit();
	// Every other task has finished (the harness waited for them): all
	// accesses so far happened before all later ones, as after a join.
	void join_all() { lockset_.reset(); }
	// A harness barrier (a Program's "join" between concurrent groups): the
	// current task waits until ready() (a decision at `label`'s wait
	// label; no lock is taken, lockdep does not see it); join_wake() has
	// the tasks waiting on `obj` check again. Tasks that wait forever are
	// a deadlock like any other.
	void join_wait(const void *obj, const std::function<bool()> &ready, const Label &label);
	void join_wake(const void *obj);
	// [lo, hi) changed owner (Lockset::forget).
	void forget(const void *lo, const void *hi, const SharedClass &cls) { lockset_.forget(lo, hi, cls); }
	// A declared access to shared state (the lockset checker; a point when
	// access_points is on). Marked: READ_ONCE/WRITE_ONCE/atomics, or inside
	// a MarkedAccess scope.
	void access(const void *loc, const SharedClass &, AccessKind, const Label &site);
	// lockdep_assert_held / mmap_assert_write_locked: a violation if not.
	void assert_held(const void *obj, const LockClass &, bool write, const Label &);
	// The per-VMA write lock: held from vma_start_write until the owner mm's
	// mmap_write_unlock (vma_end_write_all). `mm`: the VMA's mm.
	void vma_start_write(const void *vma, const void *mm, const LockClass &vm_lock, const LockClass &mmap_lock,
			     const Label &);
	bool vma_start_read(const void *vma, const LockClass &, const Label &);  // trylock
	void vma_end_read(const void *vma, const LockClass &, const Label &);
	void vma_end_write_all(const void *mm, const LockClass &vm_lock);
	// Reports a violation found by the port or a checker; the run drains.
	void violation(const std::string &report);

	int current_task() const { return current_; }
	// The label of the decision being made on the current task (an NMI the
	// strategy runs there runs right after the code before it).
	const Label *deciding() const { return deciding_; }
	bool draining() const { return draining_; }

private:
	struct Task;
	struct Lock;
	struct Cancelled {};
	static void entry(void *arg);

	Lock &lock_of(const void *obj, const LockClass &);
	void block_until(const std::function<bool()> &ready, const void *obj, const LockClass &, const Label &);
	void wake(const void *obj, const LockClass &);
	void own(Lock &);
	void disown(Lock &);
	void add_reader(Lock &);
	void drop_reader(Lock &, std::vector<int>::iterator reader);
	const std::vector<HeldLock> &held_here(const Task &);
	void taken(Lock &, const Label &);
	void released(Lock &, const Label &);
	void held_push(const LockClass &, const Label &, bool trylock, const LockClass *nest = nullptr,
		       uint8_t subclass = 0);
	void held_pop(const LockClass &);
	// access_point: the decision is an access point's (nmis_at_access_points)
	int decide(const Label &, bool current_runnable, bool access_point = false);
	Decision event_decision(const Label &, uint32_t occurrence);
	void maybe_nmi(const Label &, uint32_t occurrence);
	void run_nmi(int h);
	void switch_task(int to);
	void abort_run(Outcome, const std::string &report);
	std::string wait_for_graph() const;
	void save_tls(std::vector<void *> &);
	void load_tls(const std::vector<void *> &);

	Strategy *strategy_;
	Lockdep lockdep_;
	Lockset lockset_;
	// The locks the current context holds, as access() last computed them:
	// recomputed only when some lock changed hands (lock_epoch_, bumped by
	// every change to a Lock's writer or readers) or another context runs.
	std::vector<LockRef> lockrefs_;
	uint64_t lock_epoch_ = 0;
	struct {
		uint64_t epoch = ~uint64_t(0);
		int task = -1, nmi_depth = -1;
	} lockrefs_of_;
	std::vector<HeldLock> held_scratch_;
	std::vector<std::unique_ptr<Task>> tasks_;
	std::vector<std::unique_ptr<Lock>> locks_;
	std::vector<int> runnable_, one_;  // scratch
	std::vector<std::function<void()>> nmi_bodies_;  // per run (add_nmi)
	uint64_t events_ = 0;                            // Decision::event
	const Label *deciding_ = nullptr;               // deciding()
	std::vector<void *> main_tls_;
	int current_ = -1;
	bool draining_ = false, cancelling_ = false;
	RunResult result_;
	Scheduler *prev_active_ = nullptr;
};

// The scheduler of the running execution on this thread, or nullptr: then
// every shim is a no-op and the port runs sequentially as before.
// (Inline: every shim in the port asks, many times per op.)
namespace detail {
inline thread_local Scheduler *tl_active = nullptr;
}  // namespace detail
inline Scheduler *active() { return detail::tl_active; }

// An NMI handler the harness runs on the current task, if a scheduler runs.
class InNmi {
public:
	InNmi() : s_(active()) { if (s_) s_->nmi_enter(); }
	~InNmi() { if (s_) s_->nmi_exit(); }
	InNmi(const InNmi &) = delete;
	InNmi &operator=(const InNmi &) = delete;

private:
	Scheduler *s_;
};

}  // namespace fl::sched
