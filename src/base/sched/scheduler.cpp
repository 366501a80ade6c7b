// SPDX-License-Identifier: GPL-2.0-only
#include "base/sched/scheduler.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "base/arena.h"

namespace fl::sched {

namespace {

using detail::tl_active;
PairHook g_pair_hook = nullptr;

std::vector<TlsSlot> &tls_slots()
{
	static std::vector<TlsSlot> slots;
	return slots;
}

// "<label>:wait" for a task that blocks at <label>, "thread:exit" when it ends.
const Label &wait_label(const Label &l)
{
	thread_local std::vector<const Label *> cache;
	arena::Pause heap;  /* process state: never in a machine's arena */
	if (cache.size() <= l.id)
		cache.resize(l.id + 1);
	if (!cache[l.id])
		cache[l.id] = &label_named(l.name + ":wait");
	return *cache[l.id];
}

uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

}  // namespace

const char *to_string(Outcome o)
{
	switch (o) {
	case Outcome::done: return "done";
	case Outcome::deadlock: return "deadlock";
	case Outcome::violation: return "violation";
	case Outcome::livelock: return "livelock";
	case Outcome::diverged: return "diverged";
	}
	return "?";
}

void set_pair_hook(PairHook h)
{
	g_pair_hook = h;
}

void register_tls_slot(TlsSlot s)
{
	arena::Pause heap;  /* process state: never in a machine's arena */
	tls_slots().push_back(s);
}


struct Scheduler::Lock {
	const void *obj;
	const LockClass *cls;
	// Changed only through own, disown, add_reader and drop_reader, which
	// bump Scheduler::lock_epoch_ (the lockset's cached held locks).
	int writer = -1;  // mutex/spinlock owner, rwsem writer, VMA write-locker
	int writer_nmi = 0;  // the owner's NMI depth when it took the lock
	std::vector<int> readers;
	int writers_waiting = 0;
	const void *mm = nullptr;  // a write-locked VMA's mm
	int last_owner = -1;       // who released it last, and where (the pair hook)
	uint32_t released_at = 0;
};

struct Scheduler::Task {
	Scheduler *sched;
	int id;
	ExecContext ctx;
	std::function<void()> body;
	std::unique_ptr<Fiber> fiber;
	enum class State : uint8_t { runnable, blocked, done } state = State::runnable;
	const Lock *waiting = nullptr;
	std::string wait_at;
	std::vector<uint32_t> occ;  // decisions per label id
	uint32_t at_label = 0;      // of its last decision
	std::vector<HeldLock> held;
	std::vector<Lock *> vma_wlocks;
	int rcu_depth = 0, atomic_depth = 0;
	int nmi_depth = 0;  // NMIs the harness runs on this task (nmi_enter)
	std::vector<int> nmis;  // handlers pending on it (add_nmi), ascending
	std::vector<void *> tls;
	ExecContext context() const { return nmi_depth ? ExecContext::nmi : ctx; }
};

// The access scopes (MarkedAccess, IgnoreAccesses) are per task: slots
// registered once, with the port's own.
template <class Flag> void carry_flag_across_fibers()
{
	register_tls_slot({[]() -> void * { return reinterpret_cast<void *>(intptr_t(Flag::depth())); },
			   [](void *v) { Flag::set_depth(int(reinterpret_cast<intptr_t>(v))); }});
}

Scheduler::Scheduler(Strategy &s) : strategy_(&s)
{
	static const bool carried = (carry_flag_across_fibers<MarkedAccess>(),
				     carry_flag_across_fibers<IgnoreAccesses>(), true);
	(void)carried;
}

Scheduler::~Scheduler() = default;

int Scheduler::spawn(std::function<void()> body, ExecContext ctx)
{
	auto t = std::make_unique<Task>();
	t->sched = this;
	t->id = int(tasks_.size());
	t->ctx = ctx;
	t->body = std::move(body);
	tasks_.push_back(std::move(t));
	return int(tasks_.size() - 1);
}

void Scheduler::save_tls(std::vector<void *> &out)
{
	const auto &slots = tls_slots();
	out.resize(slots.size());
	for (size_t i = 0; i < slots.size(); i++)
		out[i] = slots[i].get();
}

void Scheduler::load_tls(const std::vector<void *> &in)
{
	const auto &slots = tls_slots();
	for (size_t i = 0; i < slots.size() && i < in.size(); i++)
		slots[i].set(in[i]);
}

void Scheduler::entry(void *arg)
{
	Task *t = static_cast<Task *>(arg);
	Scheduler *s = t->sched;
	if (!s->cancelling_) {
		try {
			t->body();
			while (!t->nmis.empty())  // the handlers no decision ran: as the task ends
				s->run_nmi(t->nmis.front());
		} catch (const Cancelled &) {
		}
	}
	t->state = Task::State::done;
	t->body = nullptr;  // what it captured dies on this stack's owner, not here
	int next = -1;
	if (!s->cancelling_) {
		static const Label &exit_label = label_named("thread:exit");
		try {
			next = s->decide(exit_label, false);
		} catch (const Cancelled &) {
			next = -1;
		}
	}
	s->save_tls(t->tls);
	s->current_ = next;
	Context *to = next < 0 ? Fiber::main() : s->tasks_[size_t(next)]->fiber->context();
	s->load_tls(next < 0 ? s->main_tls_ : s->tasks_[size_t(next)]->tls);
	if (next >= 0)
		s->result_.switches++;
	Fiber::exit_to(t->fiber->context(), to);
}

RunResult Scheduler::run()
{
	prev_active_ = tl_active;
	tl_active = this;
	result_ = RunResult{};
	draining_ = cancelling_ = false;
	events_ = 0;
	locks_.clear();
	lock_epoch_++;
	lockset_.reset();  // runs are phases: the one before happened before this one
	{
		arena::Pause heap;  // a strategy's state outlives the run (the explorer's next schedule)
		strategy_->begin(int(tasks_.size()));
	}
	save_tls(main_tls_);
	for (auto &t : tasks_) {
		t->state = Task::State::runnable;
		t->tls = main_tls_;
		t->fiber = std::make_unique<Fiber>(&Scheduler::entry, t.get());
	}
	if (!tasks_.empty()) {
		current_ = 0;
		Fiber::switch_to(Fiber::main(), tasks_[0]->fiber->context());
	}
	// Back on the thread's stack: every task is done, or the run was cut
	// short and the rest unwind now (Cancelled thrown at their points).
	for (auto &t : tasks_) {
		if (t->state == Task::State::done)
			continue;
		cancelling_ = true;
		current_ = t->id;
		load_tls(t->tls);
		Fiber::switch_to(Fiber::main(), t->fiber->context());
	}
	current_ = -1;
	load_tls(main_tls_);
	if (result_.outcome == Outcome::done || result_.outcome == Outcome::violation) {
		std::string d = [this] {
			arena::Pause heap;
			return strategy_->divergence();
		}();
		if (!d.empty() && result_.outcome == Outcome::done) {
			result_.outcome = Outcome::diverged;
			result_.report = d;
		}
	}
	tasks_.clear();
	locks_.clear();
	lock_epoch_++;
	nmi_bodies_.clear();
	tl_active = prev_active_;
	return std::move(result_);
}

// ---- decisions --------------------------------------------------------------

int Scheduler::decide(const Label &label, bool current_runnable, bool access_point)
{
	if (cancelling_)
		throw Cancelled{};
	Task &cur = *tasks_[size_t(current_)];
	if (cur.occ.size() <= label.id)
		cur.occ.resize(label.id + 1);
	uint32_t occ = ++cur.occ[label.id];
	result_.decisions++;
	result_.trace_hash = mix(mix(result_.trace_hash, label.name_hash), current_);
	if (!draining_ && on_point) {
		IgnoreAccesses checker;
		std::string v = on_point();
		if (!v.empty())
			violation("at T" + std::to_string(current_) + " " + label.name + "#" + std::to_string(occ) + ": " + v);
	}
	if (current_runnable && !cur.nmis.empty() && !draining_ && (!access_point || nmis_at_access_points)) {
		deciding_ = &label;
		maybe_nmi(label, occ);
	}
	runnable_.clear();
	bool blocked = false;
	for (auto &t : tasks_) {
		if (t->state == Task::State::runnable)
			runnable_.push_back(t->id);
		blocked |= t->state == Task::State::blocked;
	}
	if (runnable_.empty()) {
		if (blocked)
			abort_run(Outcome::deadlock, wait_for_graph());
		return -1;
	}
	int def = current_runnable ? current_ : runnable_[0];
	int pick = def;
	cur.at_label = label.id;
	if (runnable_.size() >= 2 && !draining_) {
		Decision d{current_, current_runnable, label.id, occ, &runnable_, def, result_.steps, events_, cur.nmi_depth > 0};
		result_.steps++;
		{
			arena::Pause heap;
			pick = strategy_->pick(d);
		}
		if (g_pair_hook && pick != current_ && size_t(pick) < tasks_.size())
			g_pair_hook(label.id, tasks_[size_t(pick)]->at_label);
		if (!std::binary_search(runnable_.begin(), runnable_.end(), pick)) {
			abort_run(Outcome::diverged, "replay diverged: at T" + std::to_string(current_) + " " + label.name + "#" +
							     std::to_string(occ) + " the schedule switches to T" +
							     std::to_string(pick) + ", which is not runnable");
		}
		if (pick != def)
			result_.records.push_back(Record{current_, label.name, occ, pick});
	}
	if (result_.decisions > step_cap)
		abort_run(Outcome::livelock, "no progress after " + std::to_string(step_cap) + " scheduling decisions");
	return pick;
}

// ---- NMIs and lock failures ------------------------------------------------

int Scheduler::add_nmi(int task, std::function<void()> body)
{
	nmi_bodies_.push_back(std::move(body));
	const int h = int(nmi_bodies_.size() - 1);
	tasks_[size_t(task)]->nmis.push_back(h);
	return h;
}

// A fail or nmi question: only the current task, which stays runnable.
Decision Scheduler::event_decision(const Label &label, uint32_t occ)
{
	one_.assign(1, current_);
	return Decision{current_, true, label.id, occ, &one_, current_, result_.steps, events_++,
			tasks_[size_t(current_)]->nmi_depth > 0};
}

void Scheduler::maybe_nmi(const Label &label, uint32_t occ)
{
	Task &cur = *tasks_[size_t(current_)];
	const int h = [&] {
		arena::Pause heap;
		return strategy_->nmi(event_decision(label, occ), cur.nmis);
	}();
	if (h < 0)
		return;
	if (!std::binary_search(cur.nmis.begin(), cur.nmis.end(), h))
		abort_run(Outcome::diverged, "replay diverged: at T" + std::to_string(current_) + " " + label.name + "#" +
						     std::to_string(occ) + " the schedule runs NMI N" + std::to_string(h) +
						     ", which is not pending on T" + std::to_string(current_));
	result_.records.push_back(Record{current_, label.name, occ, h, Action::nmi});
	run_nmi(h);
}

void Scheduler::run_nmi(int h)
{
	Task &cur = *tasks_[size_t(current_)];
	cur.nmis.erase(std::find(cur.nmis.begin(), cur.nmis.end(), h));
	result_.nmis++;
	// The handler is not inside the scopes the interrupted code opened.
	struct Depth {
		Scheduler *s;
		int marked = MarkedAccess::depth(), ignored = IgnoreAccesses::depth();
		~Depth()
		{
			MarkedAccess::set_depth(marked);
			IgnoreAccesses::set_depth(ignored);
			s->nmi_exit();
		}
	} depth{this};
	MarkedAccess::set_depth(0);
	IgnoreAccesses::set_depth(0);
	nmi_enter();
	// a copy: the handler may add handlers (add_nmi), which grows the vector
	const std::function<void()> body = nmi_bodies_[size_t(h)];
	body();
}

bool Scheduler::nmi_now(int h)
{
	const Task &cur = *tasks_[size_t(current_)];
	if (!std::binary_search(cur.nmis.begin(), cur.nmis.end(), h))
		return false;
	run_nmi(h);
	return true;
}

bool Scheduler::fallible_point(const Label &label)
{
	point(label);
	if (draining_)
		return false;
	const uint32_t occ = tasks_[size_t(current_)]->occ[label.id];
	const bool fails = [&] {
		arena::Pause heap;
		return strategy_->fail(event_decision(label, occ));
	}();
	if (!fails)
		return false;
	result_.fails++;
	result_.records.push_back(Record{current_, label.name, occ, 0, Action::fail});
	return true;
}

void Scheduler::switch_task(int to)
{
	int from = current_;
	if (to == from)
		return;
	Task &f = *tasks_[size_t(from)];
	Task &t = *tasks_[size_t(to)];
	save_tls(f.tls);
	current_ = to;
	load_tls(t.tls);
	result_.switches++;
	Fiber::switch_to(f.fiber->context(), t.fiber->context());
	if (cancelling_)
		throw Cancelled{};
}

void Scheduler::abort_run(Outcome o, const std::string &report)
{
	if (result_.outcome == Outcome::done || (result_.outcome == Outcome::violation && o == Outcome::diverged)) {
		result_.outcome = o;
		result_.report = report;
	}
	cancelling_ = true;
	throw Cancelled{};
}

void Scheduler::violation(const std::string &report)
{
	if (draining_)
		return;
	if (result_.outcome == Outcome::done) {
		result_.outcome = Outcome::violation;
		result_.report = report;
	}
	draining_ = true;  // the rest runs on the default policy, unchecked
}

std::string Scheduler::wait_for_graph() const
{
	std::string s = "deadlock: every task is blocked\n  wait-for graph:";
	for (auto &t : tasks_) {
		if (t->state != Task::State::blocked)
			continue;
		s += "\n    T" + std::to_string(t->id) + " waits at " + t->wait_at + " for " + t->waiting->cls->name;
		std::vector<int> holders = t->waiting->readers;
		if (t->waiting->writer >= 0)
			holders.push_back(t->waiting->writer);
		for (int h : holders) {
			s += " held by T" + std::to_string(h);
			const Task &ht = *tasks_[size_t(h)];
			for (const HeldLock &hl : ht.held)
				if (hl.cls == t->waiting->cls)
					s += " (taken at " + *hl.at + ")";
		}
		if (holders.empty())
			s += " (queued writer ahead)";
	}
	return s;
}

// ---- locks -----------------------------------------------------------------

Scheduler::Lock &Scheduler::lock_of(const void *obj, const LockClass &cls)
{
	for (auto &l : locks_)
		if (l->obj == obj && l->cls == &cls)
			return *l;
	locks_.push_back(std::make_unique<Lock>());
	locks_.back()->obj = obj;
	locks_.back()->cls = &cls;
	return *locks_.back();
}

void Scheduler::block_until(const std::function<bool()> &ready, const void *obj, const LockClass &cls,
			    const Label &label)
{
	Task &cur = *tasks_[size_t(current_)];
	while (!ready()) {
		cur.state = Task::State::blocked;
		cur.waiting = &lock_of(obj, cls);
		cur.wait_at = label.name;
		int next = decide(wait_label(label), false);
		switch_task(next);
	}
	cur.waiting = nullptr;
}

void Scheduler::wake(const void *obj, const LockClass &cls)
{
	for (auto &t : tasks_)
		if (t->state == Task::State::blocked && t->waiting && t->waiting->obj == obj && t->waiting->cls == &cls)
			t->state = Task::State::runnable;
}

namespace {
// The waits of join_wait() in the wait-for graph (a harness barrier).
const LockClass kJoin{"join", LockKind::mutex};
}  // namespace

void Scheduler::join_wait(const void *obj, const std::function<bool()> &ready, const Label &label)
{
	block_until(ready, obj, kJoin, label);
}

void Scheduler::join_wake(const void *obj)
{
	wake(obj, kJoin);
}

// Lock hand-offs for the pair hook.
void Scheduler::taken(Lock &l, const Label &label)
{
	if (g_pair_hook && l.last_owner >= 0 && l.last_owner != current_)
		g_pair_hook(l.released_at, label.id);
}

void Scheduler::released(Lock &l, const Label &label)
{
	l.last_owner = current_;
	l.released_at = label.id;
}

void Scheduler::held_push(const LockClass &cls, const Label &label, bool trylock, const LockClass *nest,
			  uint8_t subclass)
{
	Task &cur = *tasks_[size_t(current_)];
	if (!draining_) {
		std::string r = lockdep_.acquire(current_, cls, subclass, held_here(cur), label.name, trylock, nest,
						 cur.context(), cur.rcu_depth, cur.atomic_depth);
		if (!r.empty())
			violation("lockdep: " + r);
	}
	cur.held.push_back(HeldLock{&cls, subclass, &label.name, cur.nmi_depth});
}

void Scheduler::held_pop(const LockClass &cls)
{
	Task &cur = *tasks_[size_t(current_)];
	for (size_t i = cur.held.size(); i-- > 0;)
		if (cur.held[i].cls == &cls) {
			cur.held.erase(cur.held.begin() + long(i));
			return;
		}
	violation(std::string("lockdep: releasing ") + cls.name + ", which T" + std::to_string(current_) +
		  " does not hold");
}

void Scheduler::point(const Label &label)
{
	int next = decide(label, true);
	switch_task(next);
}

void Scheduler::mutex_lock(const void *obj, const LockClass &cls, const Label &label)
{
	point(label);
	held_push(cls, label, false);
	Lock &l = lock_of(obj, cls);
	block_until([&] { return l.writer < 0; }, obj, cls, label);
	own(l);
	taken(l, label);
}

bool Scheduler::mutex_trylock(const void *obj, const LockClass &cls, const Label &label)
{
	point(label);
	Lock &l = lock_of(obj, cls);
	if (l.writer >= 0)
		return false;
	held_push(cls, label, true);
	own(l);
	taken(l, label);
	return true;
}

void Scheduler::mutex_unlock(const void *obj, const LockClass &cls, const Label &label)
{
	Lock &l = lock_of(obj, cls);
	if (l.writer != current_)
		violation(std::string("lockdep: ") + cls.name + " unlocked at " + label.name + " by a task not holding it");
	disown(l);
	held_pop(cls);
	released(l, label);
	wake(obj, cls);
	point(label);
}

void Scheduler::down_read(const void *obj, const LockClass &cls, const Label &label)
{
	point(label);
	held_push(cls, label, false);
	Lock &l = lock_of(obj, cls);
	// A queued writer blocks new readers (rwsem reads are not recursive).
	block_until([&] { return l.writer < 0 && l.writers_waiting == 0; }, obj, cls, label);
	add_reader(l);
	taken(l, label);
}

bool Scheduler::down_read_trylock(const void *obj, const LockClass &cls, const Label &label)
{
	point(label);
	Lock &l = lock_of(obj, cls);
	if (l.writer >= 0 || l.writers_waiting)
		return false;
	held_push(cls, label, true);
	add_reader(l);
	taken(l, label);
	return true;
}

void Scheduler::up_read(const void *obj, const LockClass &cls, const Label &label)
{
	Lock &l = lock_of(obj, cls);
	auto it = std::find(l.readers.begin(), l.readers.end(), current_);
	if (it == l.readers.end())
		violation(std::string("lockdep: ") + cls.name + " read-unlocked at " + label.name + " without a read lock");
	else
		drop_reader(l, it);
	held_pop(cls);
	released(l, label);
	wake(obj, cls);
	point(label);
}

void Scheduler::down_write(const void *obj, const LockClass &cls, const Label &label, const LockClass *nest,
			   uint8_t subclass)
{
	point(label);
	held_push(cls, label, false, nest, subclass);
	Lock &l = lock_of(obj, cls);
	auto ready = [&] { return l.writer < 0 && l.readers.empty(); };
	if (!ready()) {
		l.writers_waiting++;
		block_until(ready, obj, cls, label);
		l.writers_waiting--;
	}
	own(l);
	taken(l, label);
}

void Scheduler::up_write(const void *obj, const LockClass &cls, const Label &label)
{
	Lock &l = lock_of(obj, cls);
	if (l.writer != current_)
		violation(std::string("lockdep: ") + cls.name + " write-unlocked at " + label.name + " by a non-owner");
	disown(l);
	held_pop(cls);
	released(l, label);
	wake(obj, cls);
	point(label);
}

void Scheduler::downgrade_write(const void *obj, const LockClass &cls, const Label &label)
{
	Lock &l = lock_of(obj, cls);
	if (l.writer != current_)
		violation(std::string("lockdep: ") + cls.name + " downgraded at " + label.name + " by a non-owner");
	disown(l);
	add_reader(l);
	wake(obj, cls);
	point(label);
}

void Scheduler::spin_lock(const void *obj, const LockClass &cls, const Label &label, uint8_t subclass)
{
	point(label);
	held_push(cls, label, false, nullptr, subclass);
	Lock &l = lock_of(obj, cls);
	block_until([&] { return l.writer < 0; }, obj, cls, label);
	own(l);
	taken(l, label);
	tasks_[size_t(current_)]->atomic_depth++;
}

void Scheduler::spin_unlock(const void *obj, const LockClass &cls, const Label &label)
{
	Lock &l = lock_of(obj, cls);
	if (l.writer != current_)
		violation(std::string("lockdep: ") + cls.name + " unlocked at " + label.name + " by a non-owner");
	disown(l);
	tasks_[size_t(current_)]->atomic_depth--;
	held_pop(cls);
	released(l, label);
	wake(obj, cls);
	point(label);
}

void Scheduler::rcu_read_lock(const Label &label)
{
	static const LockClass rcu{"rcu_read_lock", LockKind::rcu, true};
	point(label);
	held_push(rcu, label, false);
	tasks_[size_t(current_)]->rcu_depth++;
}

void Scheduler::rcu_read_unlock(const Label &label)
{
	Task &cur = *tasks_[size_t(current_)];
	cur.rcu_depth--;
	for (size_t i = cur.held.size(); i-- > 0;)
		if (cur.held[i].cls->kind == LockKind::rcu) {
			cur.held.erase(cur.held.begin() + long(i));
			break;
		}
	point(label);
}

void Scheduler::might_sleep(const Label &label)
{
	Task &cur = *tasks_[size_t(current_)];
	if (draining_)
		return;
	std::string r = lockdep_.might_sleep(label.name, cur.context(), cur.rcu_depth, cur.atomic_depth);
	if (!r.empty())
		violation("lockdep: " + r);
}

void Scheduler::might_fault(const Label &label)
{
	Task &cur = *tasks_[size_t(current_)];
	if (!draining_) {
		// might_lock_read(&current->mm->mmap_lock): acquired and released
		// at once, so only the checks and the dependencies remain.
		std::string r = lockdep_.acquire(current_, kMmapLock, 0, held_here(cur), label.name + " (might_fault)", false,
						 nullptr, cur.context(), cur.rcu_depth, cur.atomic_depth);
		if (!r.empty())
			violation("lockdep: " + r);
	}
	point(label);
}

void Scheduler::user_return(const std::string &what)
{
	Task &cur = *tasks_[size_t(current_)];
	if (draining_)
		return;
	std::string held;
	for (const HeldLock &h : cur.held)
		held += (held.empty() ? "" : ", ") + std::string(h.cls->name) + " (taken at " + *h.at + ")";
	if (!cur.vma_wlocks.empty())
		held += (held.empty() ? "" : ", ") + std::to_string(cur.vma_wlocks.size()) +
			" VMA write lock(s) (no mmap_write_unlock)";
	if (held.empty() && cur.atomic_depth)
		held = "a spinlock section";
	if (!held.empty())
		violation("lockdep: T" + std::to_string(current_) + " returns to user space after " + what +
			  " with " + held + " held");
}

// What the running context holds: an NMI handler's own locks, not those
// of the context it interrupted (no dependency runs from them to its).
const std::vector<HeldLock> &Scheduler::held_here(const Task &t)
{
	if (!t.nmi_depth)
		return t.held;
	held_scratch_.clear();
	for (const HeldLock &h : t.held)
		if (h.nmi_depth == t.nmi_depth)
			held_scratch_.push_back(h);
	return held_scratch_;
}

void Scheduler::own(Lock &l)
{
	l.writer = current_;
	l.writer_nmi = tasks_[size_t(current_)]->nmi_depth;
	lock_epoch_++;
}

void Scheduler::disown(Lock &l)
{
	l.writer = -1;
	lock_epoch_++;
}

void Scheduler::add_reader(Lock &l)
{
	l.readers.push_back(current_);
	lock_epoch_++;
}

void Scheduler::drop_reader(Lock &l, std::vector<int>::iterator reader)
{
	l.readers.erase(reader);
	lock_epoch_++;
}

void Scheduler::nmi_enter()
{
	tasks_[size_t(current_)]->nmi_depth++;
}

void Scheduler::nmi_exit()
{
	tasks_[size_t(current_)]->nmi_depth--;
}

void Scheduler::hold_nowait(const void *obj, const LockClass &cls, const Label &label)
{
	held_push(cls, label, true);
	own(lock_of(obj, cls));
}

void Scheduler::release_nowait(const void *obj, const LockClass &cls)
{
	disown(lock_of(obj, cls));
	held_pop(cls);
}

void Scheduler::access(const void *loc, const SharedClass &cls, AccessKind kind, const Label &site)
{
	if (current_ < 0 || cancelling_ || IgnoreAccesses::active())
		return;
	if (lockset && !draining_) {
		Task &cur = *tasks_[size_t(current_)];
		if (lockrefs_of_.epoch != lock_epoch_ || lockrefs_of_.task != current_ ||
		    lockrefs_of_.nmi_depth != cur.nmi_depth) {
			// An NMI holds only what it took itself: the interrupted
			// context's locks do not keep it out.
			lockrefs_.clear();
			for (const auto &l : locks_) {
				if (l->writer == current_ && l->writer_nmi == cur.nmi_depth)
					lockrefs_.push_back(LockRef{l.get(), true, l->cls->name});
				else if (!cur.nmi_depth &&
					 std::find(l->readers.begin(), l->readers.end(), current_) != l->readers.end())
					lockrefs_.push_back(LockRef{l.get(), false, l->cls->name});
			}
			std::sort(lockrefs_.begin(), lockrefs_.end(),
				  [](const LockRef &a, const LockRef &b) { return a.lock < b.lock; });
			lockrefs_of_ = {lock_epoch_, current_, cur.nmi_depth};
		}
		if (MarkedAccess::active())
			kind = kind == AccessKind::read || kind == AccessKind::marked_read ? AccessKind::marked_read
											   : AccessKind::marked_write;
		std::string r = lockset_.access(loc, cls, kind,
						AccessSite{current_ * 8 + std::min(cur.nmi_depth, 7), current_,
							   cur.context() == ExecContext::nmi, lockrefs_, site.id,
							   cur.at_label});
		if (!r.empty())
			violation("lockset: " + r);
	}
	if (access_points && !NoAccessPoint::active())
		switch_task(decide(site, true, /*access_point=*/true));
}

void Scheduler::assert_held(const void *obj, const LockClass &cls, bool write, const Label &label)
{
	Lock &l = lock_of(obj, cls);
	bool ok = l.writer == current_ ||
		  (!write && std::find(l.readers.begin(), l.readers.end(), current_) != l.readers.end());
	if (!ok)
		violation(std::string("lockdep: ") + cls.name + (write ? " not write-held" : " not held") + " at " +
			  label.name);
}

void Scheduler::vma_start_write(const void *vma, const void *mm, const LockClass &vm_lock,
				const LockClass &mmap_lock, const Label &label)
{
	assert_held(mm, mmap_lock, true, label);
	Lock &l = lock_of(vma, vm_lock);
	if (l.writer == current_ && l.mm == mm)
		return;  // __is_vma_write_locked: already locked in this mmap_lock section
	point(label);
	// down_write(&vma->vm_lock->lock); up_write(): an acquire for lockdep,
	// nested in mmap_lock (no mmap_lock -> vm_lock edge), then released.
	held_push(vm_lock, label, false, &mmap_lock);
	held_pop(vm_lock);
	block_until([&] { return l.readers.empty(); }, vma, vm_lock, label);
	own(l);
	l.mm = mm;
	tasks_[size_t(current_)]->vma_wlocks.push_back(&l);
}

bool Scheduler::vma_start_read(const void *vma, const LockClass &cls, const Label &label)
{
	Lock &l = lock_of(vma, cls);
	if (l.writer >= 0)
		return false;  // vm_lock_seq == mm_lock_seq: write-locked, fall back to mmap_lock
	held_push(cls, label, true);
	add_reader(l);
	point(label);  // after the lock: the VMA cannot go away under us now
	return true;
}

void Scheduler::vma_end_read(const void *vma, const LockClass &cls, const Label &label)
{
	up_read(vma, cls, label);
}

void Scheduler::vma_end_write_all(const void *mm, const LockClass &vm_lock)
{
	Task &cur = *tasks_[size_t(current_)];
	for (Lock *l : cur.vma_wlocks)
		if (l->mm == mm && l->writer == current_) {
			disown(*l);
			l->mm = nullptr;
			wake(l->obj, vm_lock);
		}
	std::erase_if(cur.vma_wlocks, [&](Lock *l) { return l->writer != current_; });
}

}  // namespace fl::sched
