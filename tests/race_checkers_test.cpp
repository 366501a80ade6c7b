// SPDX-License-Identifier: GPL-2.0-only
// The checkers that see a race whatever the schedule (src/base/sched/):
// the lockset checker and lockdep's recursion, might_fault and
// return-to-user rules, each on tasks written here, each in one run of the
// default schedule (no preemption: the two accesses never overlap in time).
#include <gtest/gtest.h>

#include "base/sched/strategy.h"

namespace fl {
namespace {

using sched::AccessKind;
using sched::Label;
using sched::label_named;
using sched::LockClass;
using sched::LockKind;
using sched::Outcome;
using sched::Scheduler;
using sched::SharedClass;

const LockClass kLock{"test_lock", LockKind::spinlock}, kOther{"test_other", LockKind::spinlock},
	kRw{"test_rwsem", LockKind::rwsem};
const SharedClass kWord{"test word", "under test_lock"};
const Label &L(const char *n) { return label_named(n); }
int lock_a, lock_b, rw, word, other_word;

// Two tasks, each running `body(s, task)`, on the default schedule.
template <class F> sched::RunResult two_tasks(F body)
{
	sched::DefaultStrategy d;
	Scheduler s(d);
	for (int t = 0; t < 2; t++)
		s.spawn([&, t] { body(s, t); });
	return s.run();
}

// One task running `body(s)` in context `ctx`, on the default schedule.
template <class F> sched::RunResult one_task(F body, sched::ExecContext ctx = sched::ExecContext::task)
{
	sched::DefaultStrategy d;
	Scheduler s(d);
	s.spawn([&] { body(s); }, ctx);
	return s.run();
}

void locked_write(Scheduler &s, const void *lock, const LockClass &cls)
{
	s.spin_lock(lock, cls, L("test:lock"));
	s.access(&word, kWord, AccessKind::write, L("test:write"));
	s.spin_unlock(lock, cls, L("test:unlock"));
}

// ---- lockset -------------------------------------------------------------------

TEST(Lockset, WritesUnderOneLockAreQuiet)
{
	sched::RunResult r = two_tasks([](Scheduler &s, int) { locked_write(s, &lock_a, kLock); });
	EXPECT_EQ(r.outcome, Outcome::done) << r.report;
}

TEST(Lockset, DeletedLockIsReportedWithoutOverlap)
{
	sched::RunResult r = two_tasks([](Scheduler &s, int t) {
		if (t == 0)
			locked_write(s, &lock_a, kLock);
		else  // the slip: the same write with its lock deleted
			s.access(&word, kWord, AccessKind::write, L("test:unlocked_write"));
	});
	ASSERT_EQ(r.outcome, Outcome::violation);
	EXPECT_NE(r.report.find("lockset: data race on test word: T1 write at test:unlocked_write"), std::string::npos)
		<< r.report;
	EXPECT_NE(r.report.find("earlier T0 write at test:write (after test:lock) holding {test_lock}"),
		  std::string::npos)
		<< r.report;
}

TEST(Lockset, DifferentLocksRace)
{
	sched::RunResult r = two_tasks([](Scheduler &s, int t) { locked_write(s, t ? &lock_b : &lock_a, kLock); });
	EXPECT_EQ(r.outcome, Outcome::violation) << "two instances of one class are two locks";
}

TEST(Lockset, ReadersOfAnRwsemDoNotExcludeAWriterWhoHoldsItShared)
{
	sched::RunResult shared = two_tasks([](Scheduler &s, int t) {
		s.down_read(&rw, kRw, L("test:down_read"));
		s.access(&word, kWord, t ? AccessKind::write : AccessKind::read, L("test:access"));
		s.up_read(&rw, kRw, L("test:up_read"));
	});
	EXPECT_EQ(shared.outcome, Outcome::violation) << "a write under a read lock excludes nobody";
	sched::RunResult exclusive = two_tasks([](Scheduler &s, int t) {
		if (t) {
			s.down_write(&rw, kRw, L("test:down_write"));
			s.access(&word, kWord, AccessKind::write, L("test:access"));
			s.up_write(&rw, kRw, L("test:up_write"));
		} else {
			s.down_read(&rw, kRw, L("test:down_read"));
			s.access(&word, kWord, AccessKind::read, L("test:access"));
			s.up_read(&rw, kRw, L("test:up_read"));
		}
	});
	EXPECT_EQ(exclusive.outcome, Outcome::done) << exclusive.report;
}

// Written under A and B, read under either: pairwise, not one intersection.
TEST(Lockset, WriteUnderBothReadsUnderEitherIsQuiet)
{
	sched::DefaultStrategy d;
	Scheduler s(d);
	auto read_under = [&](const void *lock, const LockClass &cls) {
		s.spin_lock(lock, cls, L("test:lock"));
		s.access(&word, kWord, AccessKind::read, L("test:read"));
		s.spin_unlock(lock, cls, L("test:unlock"));
	};
	s.spawn([&] {
		s.spin_lock(&lock_a, kLock, L("test:lock_a"));
		s.spin_lock(&lock_b, kOther, L("test:lock_b"));
		s.access(&word, kWord, AccessKind::write, L("test:write"));
		s.spin_unlock(&lock_b, kOther, L("test:unlock_b"));
		s.spin_unlock(&lock_a, kLock, L("test:unlock_a"));
	});
	s.spawn([&] { read_under(&lock_a, kLock); });
	s.spawn([&] { read_under(&lock_b, kOther); });
	sched::RunResult r = s.run();
	EXPECT_EQ(r.outcome, Outcome::done) << r.report;
}

TEST(Lockset, MarkedAccessesAndInitialisationAreNotReported)
{
	sched::RunResult marked = two_tasks([](Scheduler &s, int t) {
		if (t == 0)
			locked_write(s, &lock_a, kLock);
		else  // handle_pte_fault's first look: a lockless hint
			s.access(&word, kWord, AccessKind::marked_read, L("test:hint"));
	});
	EXPECT_EQ(marked.outcome, Outcome::done) << marked.report;
	sched::RunResult init = two_tasks([](Scheduler &s, int t) {
		if (t == 0)  // filled in before anyone else can see it
			s.access(&other_word, kWord, AccessKind::write, L("test:init"));
		else {
			s.spin_lock(&lock_a, kLock, L("test:lock"));
			s.access(&other_word, kWord, AccessKind::read, L("test:read"));
			s.spin_unlock(&lock_a, kLock, L("test:unlock"));
		}
	});
	EXPECT_EQ(init.outcome, Outcome::done) << init.report;
}

// Eraser on reallocation: a range handed to a new owner (an allocator's
// object) starts over, whatever was seen there; the rest keeps its history,
// and so does the range for another class of location.
TEST(Lockset, AHandedOverRangeIsForgottenAndNothingElse)
{
	const SharedClass kOtherClass{"other class", "under test_lock"};
	auto handed_over_then_written = [&](const void *written, const SharedClass &forgotten) {
		return two_tasks([&](Scheduler &s, int t) {
			if (t == 0) {
				s.spin_lock(&lock_a, kLock, L("test:lock"));
				s.access(&word, kWord, AccessKind::write, L("test:write"));
				s.access(&other_word, kWord, AccessKind::write, L("test:write"));
				s.spin_unlock(&lock_a, kLock, L("test:unlock"));
				s.forget(&word, &word + 1, forgotten);
			} else {  // under another lock: a race with any write still remembered
				s.spin_lock(&lock_b, kLock, L("test:lock"));
				s.access(written, kWord, AccessKind::write, L("test:write_b"));
				s.spin_unlock(&lock_b, kLock, L("test:unlock"));
			}
		});
	};
	EXPECT_EQ(handed_over_then_written(&word, kWord).outcome, Outcome::done);
	EXPECT_EQ(handed_over_then_written(&other_word, kWord).outcome, Outcome::violation);
	EXPECT_EQ(handed_over_then_written(&word, kOtherClass).outcome, Outcome::violation);
}

TEST(Lockset, OffWhenAskedAndIgnoredInsideCheckers)
{
	auto slip = [](Scheduler &s, int t) {
		if (t == 0)
			locked_write(s, &lock_a, kLock);
		else {
			sched::IgnoreAccesses checker;
			s.access(&word, kWord, AccessKind::write, L("test:checker_read"));
		}
	};
	EXPECT_EQ(two_tasks(slip).outcome, Outcome::done);
	sched::DefaultStrategy d;
	Scheduler s(d);
	s.lockset = false;
	s.spawn([&] { locked_write(s, &lock_a, kLock); });
	s.spawn([&] { s.access(&word, kWord, AccessKind::write, L("test:unlocked_write")); });
	EXPECT_EQ(s.run().outcome, Outcome::done);
}

// A MarkedAccess scope (a lock word's own accesses) left open at a
// scheduling point stays with its task: the next task's plain write, and an
// NMI handler's on the same task, are still plain.
TEST(Lockset, MarkedScopesStayWithTheirTask)
{
	bool ready = false;
	sched::RunResult other_task = two_tasks([&](Scheduler &s, int t) {
		if (t == 0) {
			locked_write(s, &lock_a, kLock);
			sched::MarkedAccess lock_word;  // blocks inside it, as arena_spin_lock_word can
			s.join_wait(&ready, [&] { return ready; }, L("test:wait"));
		} else {
			s.access(&word, kWord, AccessKind::write, L("test:unlocked_write"));
			ready = true;
			s.join_wake(&ready);
		}
	});
	ASSERT_EQ(other_task.outcome, Outcome::violation);
	EXPECT_NE(other_task.report.find("T1 write at test:unlocked_write"), std::string::npos) << other_task.report;

	sched::DefaultStrategy d;
	Scheduler s(d);
	s.spawn([&] {
		locked_write(s, &lock_a, kLock);
		sched::MarkedAccess lock_word;
		s.nmi_now(0);
	});
	s.add_nmi(0, [&] { s.access(&word, kWord, AccessKind::write, L("test:nmi_write")); });
	sched::RunResult nmi = s.run();
	ASSERT_EQ(nmi.outcome, Outcome::violation);
	EXPECT_NE(nmi.report.find("test:nmi_write"), std::string::npos) << nmi.report;
}

TEST(Lockset, AccessPointsOpenAWindowBetweenAReadAndItsWrite)
{
	// The lost update: both tasks read, then write what they read plus one.
	for (bool points : {false, true}) {
		sched::DefaultStrategy first;
		Scheduler s(first);
		s.lockset = false;
		s.access_points = points;
		int value = 0;
		bool lost = false;
		for (uint64_t seed = 1; seed < 64 && !lost; seed++) {
			sched::RandomWalk r(seed);
			s.set_strategy(r);
			value = 0;
			for (int t = 0; t < 2; t++)
				s.spawn([&] {
					s.access(&word, kWord, AccessKind::read, L("test:read"));
					int v = value;
					s.access(&word, kWord, AccessKind::write, L("test:write"));
					value = v + 1;
				});
			s.run();
			lost = value != 2;
		}
		EXPECT_EQ(lost, points) << "points " << points;
	}
}

TEST(Lockset, AccessPointsLeaveTheRestOfAnAtomicWhole)
{
	// The same read and write, the write inside NoAccessPoint (a cmpxchg's
	// store after its load): no schedule comes between them.
	sched::DefaultStrategy first;
	Scheduler s(first);
	s.lockset = false;
	s.access_points = true;
	for (uint64_t seed = 1; seed < 64; seed++) {
		sched::RandomWalk r(seed);
		s.set_strategy(r);
		int value = 0;
		for (int t = 0; t < 2; t++)
			s.spawn([&] {
				s.access(&word, kWord, AccessKind::read, L("test:read"));
				int v = value;
				sched::NoAccessPoint same_instruction;
				s.access(&word, kWord, AccessKind::write, L("test:write"));
				value = v + 1;
			});
		s.run();
		EXPECT_EQ(value, 2) << "seed " << seed;
	}
}

TEST(Lockset, APendingNmiWaitsForANamedPointWhenAccessPointsTakeNone)
{
	struct EveryNmi final : sched::Strategy {
		int pick(const sched::Decision &d) override { return d.default_choice; }
		int nmi(const sched::Decision &, const std::vector<int> &pending) override { return pending.front(); }
	};
	for (bool at_access : {true, false}) {
		EveryNmi every;
		Scheduler s(every);
		s.lockset = false;
		s.access_points = true;
		s.nmis_at_access_points = at_access;
		std::string ran_at;
		s.spawn([&] {
			s.access(&word, kWord, AccessKind::read, L("test:read"));
			s.point(L("test:named"));
		});
		s.add_nmi(0, [&] { ran_at = s.deciding()->name; });
		s.run();
		EXPECT_EQ(ran_at, at_access ? "test:read" : "test:named");
	}
}

// ---- lockdep -------------------------------------------------------------------

TEST(Lockdep, RecursiveReadLockIsReportedInOneRun)
{
	sched::RunResult r = one_task([](Scheduler &s) {
		s.down_read(&rw, kRw, L("test:outer"));
		s.down_read(&rw, kRw, L("test:inner"));
		s.up_read(&rw, kRw, L("test:up_inner"));
		s.up_read(&rw, kRw, L("test:up_outer"));
	});
	ASSERT_EQ(r.outcome, Outcome::violation);
	EXPECT_NE(r.report.find("possible recursive locking detected: T0 already holds test_rwsem (taken at "
				"test:outer) and takes it again at test:inner"),
		  std::string::npos)
		<< r.report;
}

TEST(Lockdep, NestedSubclassAndTrylockAreNotRecursion)
{
	sched::RunResult r = one_task([](Scheduler &s) {
		int child, other;
		s.down_write(&rw, kRw, L("test:parent"));
		s.down_write(&child, kRw, L("test:child"), nullptr, 1);  // mmap_write_lock_nested
		EXPECT_TRUE(s.down_read_trylock(&other, kRw, L("test:trylock")));  // the same class, subclass 0
		s.up_read(&other, kRw, L("test:up_other"));
		s.up_write(&child, kRw, L("test:up_child"));
		s.up_write(&rw, kRw, L("test:up_parent"));
	});
	EXPECT_EQ(r.outcome, Outcome::done) << r.report;
}

TEST(Lockdep, MightFaultTakesMmapLockForRead)
{
	sched::RunResult r = one_task([](Scheduler &s) {
		int mm;
		s.down_read(&mm, sched::kMmapLock, L("test:mmap_read_lock"));
		s.might_fault(L("test:copy_to_user"));
		s.up_read(&mm, sched::kMmapLock, L("test:mmap_read_unlock"));
	});
	ASSERT_EQ(r.outcome, Outcome::violation);
	EXPECT_NE(r.report.find("already holds mmap_lock (taken at test:mmap_read_lock) and takes it again at "
				"test:copy_to_user (might_fault)"),
		  std::string::npos)
		<< r.report;
}

TEST(Lockdep, MightFaultInNmiAndUnderSpinlock)
{
	for (auto ctx : {sched::ExecContext::nmi, sched::ExecContext::task}) {
		const bool task = ctx == sched::ExecContext::task;
		sched::RunResult r = one_task(
			[&](Scheduler &s) {
				if (task)
					s.spin_lock(&lock_a, kLock, L("test:spin"));
				s.might_fault(L("test:copy_from_user"));
				if (task)
					s.spin_unlock(&lock_a, kLock, L("test:unspin"));
			},
			ctx);
		EXPECT_EQ(r.outcome, Outcome::violation);
		EXPECT_NE(r.report.find(task ? "spinlock held" : "not NMI-safe"), std::string::npos) << r.report;
	}
}

TEST(Lockdep, NoLockHeldOnReturnToUserSpace)
{
	sched::RunResult r = one_task([](Scheduler &s) {
		s.spin_lock(&lock_a, kLock, L("test:forgotten"));
		s.user_return("munmap");
	});
	ASSERT_EQ(r.outcome, Outcome::violation);
	EXPECT_NE(r.report.find("T0 returns to user space after munmap with test_lock (taken at test:forgotten) held"),
		  std::string::npos)
		<< r.report;
	sched::RunResult quiet = one_task([](Scheduler &s) {
		locked_write(s, &lock_a, kLock);
		s.user_return("munmap");
	});
	EXPECT_EQ(quiet.outcome, Outcome::done) << quiet.report;
}

}  // namespace
}  // namespace fl
