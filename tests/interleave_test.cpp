// SPDX-License-Identifier: GPL-2.0-only
// The deterministic scheduler (src/base/sched/), its checkers, the Program
// forms of threads and schedules, and the explorer on the historical levels.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include "base/schedule_set.h"
#include "check/interleave/explore.h"
#include "check/interleave/swarm.h"
#include "check/program_binary.h"
#include "check/program_text.h"
#include "base/sched/strategy.h"

namespace fl {
namespace {

using sched::Label;
using sched::label_named;
using sched::LockClass;
using sched::LockKind;
using sched::Outcome;
using sched::Scheduler;

const LockClass kA{"test_a", LockKind::mutex}, kB{"test_b", LockKind::mutex}, kSpin{"test_spin", LockKind::spinlock},
	kRw{"test_rw", LockKind::rwsem};
const Label &L(const char *n) { return label_named(n); }
int obj_a, obj_b, obj_s, obj_rw;

Program parse(const std::string &text)
{
	ParseResult r = parse_program(text);
	EXPECT_TRUE(r.program) << r.error.str();
	return r.program ? *r.program : Program{};
}

// ---- the scheduler -------------------------------------------------------------

// Tasks T0..T2, each logging its letter ('a' + id) `steps` times, with a
// scheduling point after each.
void spawn_loggers(Scheduler &s, std::string &log, int steps)
{
	for (int t = 0; t < 3; t++)
		s.spawn([&s, &log, t, steps] {
			for (int i = 0; i < steps; i++) {
				log += char('a' + t);
				s.point(L("test:step"));
			}
		});
}

TEST(Sched, DefaultRunsTasksInOrderWithoutPreemption)
{
	sched::DefaultStrategy d;
	Scheduler s(d);
	std::string log;
	spawn_loggers(s, log, 3);
	sched::RunResult r = s.run();
	EXPECT_EQ(r.outcome, Outcome::done);
	EXPECT_EQ(log, "aaabbbccc");
	EXPECT_TRUE(r.records.empty());
}

// A byte pick is a preemption: whatever its target byte, it switches to one
// of the other runnable tasks (the target chooses which), so no pick is
// spent on the task that would have run anyway.
TEST(Sched, EveryBytePickPreempts)
{
	auto log_of = [](std::vector<std::pair<uint32_t, uint8_t>> picks) {
		sched::ByteSchedule b(std::move(picks));
		Scheduler s(b);
		std::string log;
		spawn_loggers(s, log, 3);
		EXPECT_EQ(s.run().outcome, Outcome::done);
		return log;
	};
	// At the first counted step (T0 after its first 'a') target 0 is T1,
	// target 1 is T2, target 2 wraps to T1 again: never T0 itself.
	EXPECT_EQ(log_of({{0, 0}}), "abbbaaccc");
	EXPECT_EQ(log_of({{0, 1}}), "acccaabbb");
	EXPECT_EQ(log_of({{0, 2}}), "abbbaaccc");
	// A second pick 1 step later (T1 after its first 'b') departs from T1.
	EXPECT_EQ(log_of({{0, 0}, {0, 0}}), "abaabbccc");
}

TEST(Sched, RecordsReplayExactly)
{
	sched::RandomWalk rw(42);
	Scheduler s(rw);
	std::string log;
	spawn_loggers(s, log, 4);
	sched::RunResult r = s.run();
	ASSERT_FALSE(r.records.empty());
	sched::Replay rep(r.records);
	Scheduler s2(rep);
	std::string log2;
	spawn_loggers(s2, log2, 4);
	sched::RunResult r2 = s2.run();
	EXPECT_EQ(r2.outcome, Outcome::done);
	EXPECT_EQ(log2, log);
	EXPECT_EQ(r2.trace_hash, r.trace_hash);
}

// A trace hash names a schedule by its points' names, not by the order a
// process first used them: a child that interned other labels first (as a
// fuzzer does after earlier inputs) hashes the same run to the same value.
TEST(Sched, TraceHashDoesNotDependOnLabelsUsedBefore)
{
	auto hash_of_run = [] {
		sched::RandomWalk rw(7);
		Scheduler s(rw);
		for (int t = 0; t < 2; t++)
			s.spawn([&] {
				s.point(L("hash_order:first"));
				s.point(L("hash_order:second"));
			});
		return s.run().trace_hash;
	};
	int fds[2];
	ASSERT_EQ(pipe(fds), 0);
	const pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		L("hash_order:second");  // interned before "first" here, after it in the parent
		L("hash_order:unrelated");
		const uint64_t h = hash_of_run();
		_exit(write(fds[1], &h, sizeof h) == sizeof h ? 0 : 1);
	}
	const uint64_t mine = hash_of_run();
	uint64_t theirs = 0;
	EXPECT_EQ(read(fds[0], &theirs, sizeof theirs), ssize_t(sizeof theirs));
	int status = 0;
	waitpid(child, &status, 0);
	close(fds[0]);
	close(fds[1]);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(theirs, mine);
}

TEST(Sched, ReplayThatDoesNotFitDiverges)
{
	sched::Replay rep({sched::Record{0, "test:never", 1, 1}});
	Scheduler s(rep);
	for (int t = 0; t < 2; t++)
		s.spawn([&] { s.point(L("test:step")); });
	sched::RunResult r = s.run();
	EXPECT_EQ(r.outcome, Outcome::diverged);
	EXPECT_NE(r.report.find("never reached"), std::string::npos) << r.report;
}

// Lock failures and NMIs are schedule decisions: a searching strategy
// makes them, the records name them, and a replay repeats them exactly,
// nested NMIs included.
TEST(Sched, FailuresAndNestedNmisAreRecordedAndReplay)
{
	auto body = [](Scheduler &s, std::string &log) {
		for (int t = 0; t < 2; t++)
			s.spawn([&, t] {
				for (int i = 0; i < 6; i++) {
					log += s.fallible_point(L("test:trylock")) ? char('A' + t) : char('a' + t);
					s.point(L("test:step"));
				}
			});
		s.add_nmi(0, [&] {
			log += '[';
			s.point(L("test:in_nmi"));
			s.point(L("test:in_nmi"));
			log += ']';
		});
		s.add_nmi(0, [&] { log += "<>"; });
		s.add_nmi(1, [&] { log += "{}"; });
	};
	for (uint64_t seed = 1;; seed++) {
		ASSERT_LT(seed, 200u) << "no seed both fails a lock and nests an NMI";
		sched::RandomWalk rw(seed, sched::EventRates{64, 96});
		Scheduler s(rw);
		std::string log;
		body(s, log);
		sched::RunResult r = s.run();
		ASSERT_EQ(r.outcome, Outcome::done) << r.report;
		EXPECT_EQ(r.nmis, 3u);  // the ones no decision ran, as their task ends
		if (!r.fails || log.find("[<>") == std::string::npos)
			continue;
		sched::Replay rep(r.records);
		Scheduler s2(rep);
		std::string log2;
		body(s2, log2);
		sched::RunResult r2 = s2.run();
		EXPECT_EQ(r2.outcome, Outcome::done) << r2.report;
		EXPECT_EQ(log2, log);
		EXPECT_EQ(r2.records, r.records);
		bool fail = false, nmi = false;
		for (const sched::Record &rec : r.records) {
			std::string words[4], text = sched::format_record(rec), err;
			std::istringstream in(text.substr(3));
			size_t n = 0;
			while (n < 4 && in >> words[n])
				n++;
			sched::Record back;
			ASSERT_TRUE(sched::parse_record(words, n, 2, 3, &back, &err)) << text << ": " << err;
			EXPECT_EQ(back, rec) << text;
			fail |= rec.action == sched::Action::fail;
			nmi |= rec.action == sched::Action::nmi;
		}
		EXPECT_TRUE(fail && nmi);
		return;
	}
}

// A handler run at a decision comes before that decision's pick, and its
// own decisions at the same label count on past it: the pick's record,
// after theirs, names the earlier occurrence, and replays (the text of a
// buddy-series fuzz finding said "record 2 was passed without being taken").
TEST(Sched, APickAfterAHandlerThatPassedItsLabelAgainReplays)
{
	const std::vector<sched::Record> records = {sched::Record{0, "test:step", 1, 0, sched::Action::nmi},
						    sched::Record{0, "test:step", 1, 1}};
	sched::Replay rep(records);
	Scheduler s(rep);
	std::string log;
	s.spawn([&] {
		s.point(L("test:step"));
		log += 'a';
	});
	s.spawn([&] { log += 'b'; });
	s.add_nmi(0, [&] {
		log += '[';
		s.point(L("test:step"));
		log += ']';
	});
	const sched::RunResult r = s.run();
	EXPECT_EQ(r.outcome, Outcome::done) << r.report;
	EXPECT_EQ(log, "[]ba");
	EXPECT_EQ(r.records, records);
}

TEST(Sched, DefaultNeverFailsAndRunsNmisAtTaskEnd)
{
	sched::DefaultStrategy d;
	Scheduler s(d);
	std::string log;
	s.spawn([&] {
		log += s.fallible_point(L("test:trylock")) ? "F" : "s";
		log += s.nmi_now(1) ? "!" : "-";
		log += s.nmi_now(1) ? "!" : "-";
	});
	s.add_nmi(0, [&] { log += "n0"; });
	s.add_nmi(0, [&] { log += "n1"; });
	sched::RunResult r = s.run();
	EXPECT_EQ(r.outcome, Outcome::done);
	EXPECT_EQ(log, "sn1!-n0");
	EXPECT_TRUE(r.records.empty());
}

TEST(Sched, ReplayOfAnNmiThatIsNotPendingDiverges)
{
	sched::Replay rep({sched::Record{0, "test:step", 1, 0, sched::Action::nmi}});
	Scheduler s(rep);
	s.spawn([&] { s.point(L("test:step")); });
	s.add_nmi(0, [] {});
	sched::RunResult ok = s.run();
	EXPECT_EQ(ok.outcome, Outcome::done) << ok.report;
	sched::Replay rep2({sched::Record{0, "test:step", 1, 0, sched::Action::fail}});
	Scheduler s2(rep2);
	s2.spawn([&] { s2.point(L("test:step")); });
	sched::RunResult bad = s2.run();
	EXPECT_EQ(bad.outcome, Outcome::diverged) << bad.report;
	std::string words[3] = {"T9", "x#1", "fail"}, err;
	sched::Record r;
	EXPECT_FALSE(sched::parse_record(words, 3, 2, 0, &r, &err));
	EXPECT_NE(err.find("below T2"), std::string::npos) << err;
}

// ABBA with a preemption between the two acquires: a real deadlock, its
// wait-for graph, and fibers torn down while suspended (ASan/LSan: no leak
// of what their stacks own).
TEST(Sched, DeadlockPrintsWaitForGraphAndTearsDown)
{
	sched::RandomWalk rw(1);
	sched::Strategy *st = &rw;
	sched::Replay rep({sched::Record{0, "t0:lock_b", 1, 1}});
	st = &rep;
	Scheduler s(*st);
	s.spawn([&] {
		std::vector<int> owned(1000, 7);  // must be freed by the unwind
		s.mutex_lock(&obj_a, kA, L("t0:lock_a"));
		s.mutex_lock(&obj_b, kB, L("t0:lock_b"));
		s.mutex_unlock(&obj_b, kB, L("t0:unlock_b"));
		s.mutex_unlock(&obj_a, kA, L("t0:unlock_a"));
	});
	s.spawn([&] {
		std::string owned(5000, 'x');
		s.mutex_lock(&obj_b, kB, L("t1:lock_b"));
		s.mutex_lock(&obj_a, kA, L("t1:lock_a"));
		s.mutex_unlock(&obj_a, kA, L("t1:unlock_a"));
		s.mutex_unlock(&obj_b, kB, L("t1:unlock_b"));
	});
	sched::RunResult r = s.run();
	// lockdep reports the inversion first (T1's second acquire closes
	// the cycle), then the run deadlocks while draining.
	EXPECT_EQ(r.outcome, Outcome::violation) << r.report;
	EXPECT_NE(r.report.find("circular locking dependency"), std::string::npos) << r.report;
}

TEST(Sched, DeadlockWithoutLockdepEdgeIsReported)
{
	// A task that waits for a lock its peer never releases (no cycle in
	// the order graph: only one lock).
	sched::DefaultStrategy d;
	Scheduler s(d);
	s.spawn([&] { s.mutex_lock(&obj_a, kA, L("t0:lock_a")); });  // exits holding it
	s.spawn([&] { s.mutex_lock(&obj_a, kA, L("t1:lock_a")); });
	sched::RunResult r = s.run();
	EXPECT_EQ(r.outcome, Outcome::deadlock);
	EXPECT_NE(r.report.find("T1 waits at t1:lock_a for test_a held by T0"), std::string::npos) << r.report;
}

TEST(Sched, LockOrderCycleWithoutDeadlock)
{
	sched::DefaultStrategy d;  // T0 runs to completion first: no deadlock
	Scheduler s(d);
	s.spawn([&] {
		s.mutex_lock(&obj_a, kA, L("t0:lock_a"));
		s.mutex_lock(&obj_b, kB, L("t0:lock_b"));
		s.mutex_unlock(&obj_b, kB, L("t0:unlock_b"));
		s.mutex_unlock(&obj_a, kA, L("t0:unlock_a"));
	});
	s.spawn([&] {
		s.mutex_lock(&obj_b, kB, L("t1:lock_b"));
		s.mutex_lock(&obj_a, kA, L("t1:lock_a"));
		s.mutex_unlock(&obj_a, kA, L("t1:unlock_a"));
		s.mutex_unlock(&obj_b, kB, L("t1:unlock_b"));
	});
	sched::RunResult r = s.run();
	EXPECT_EQ(r.outcome, Outcome::violation);
	EXPECT_NE(r.report.find("test_b -> test_a closes"), std::string::npos) << r.report;
}

TEST(Sched, SleepingUnderSpinlockAndNmiUnsafeLocks)
{
	{
		sched::DefaultStrategy d;
		Scheduler s(d);
		s.spawn([&] {
			s.spin_lock(&obj_s, kSpin, L("t0:spin"));
			s.mutex_lock(&obj_a, kA, L("t0:mutex"));
			s.mutex_unlock(&obj_a, kA, L("t0:unlock"));
			s.spin_unlock(&obj_s, kSpin, L("t0:spin_unlock"));
		});
		sched::RunResult r = s.run();
		EXPECT_NE(r.report.find("spinlock held"), std::string::npos) << r.report;
	}
	{
		sched::DefaultStrategy d;
		Scheduler s(d);
		s.spawn(
			[&] {
				s.spin_lock(&obj_s, kSpin, L("nmi:spin"));
				s.spin_unlock(&obj_s, kSpin, L("nmi:spin_unlock"));
			},
			sched::ExecContext::nmi);
		sched::RunResult r = s.run();
		EXPECT_NE(r.report.find("not NMI-safe"), std::string::npos) << r.report;
	}
}

TEST(Sched, QueuedWriterBlocksNewReaders)
{
	// T0 reads, T1 queues for write, T2's read must wait behind T1.
	sched::Replay rep({sched::Record{0, "t0:after_read", 1, 1}, sched::Record{1, "t1:write:wait", 1, 2}});
	Scheduler s(rep);
	std::string log;
	s.spawn([&] {
		s.down_read(&obj_rw, kRw, L("t0:read"));
		s.point(L("t0:after_read"));
		log += "0";
		s.up_read(&obj_rw, kRw, L("t0:up"));
	});
	s.spawn([&] {
		s.down_write(&obj_rw, kRw, L("t1:write"));
		log += "1";
		s.up_write(&obj_rw, kRw, L("t1:up"));
	});
	s.spawn([&] {
		s.down_read(&obj_rw, kRw, L("t2:read"));
		log += "2";
		s.up_read(&obj_rw, kRw, L("t2:up"));
	});
	sched::RunResult r = s.run();
	EXPECT_EQ(r.outcome, Outcome::done) << r.report;
	EXPECT_EQ(log, "012");
}

// The fuzzers' schedule coverage: a lock taken by another task than the one
// that released it reports (release label, acquire label); a chosen switch
// reports (where the task stopped, where the next resumes).
std::vector<std::pair<uint32_t, uint32_t>> g_pairs;
void note_pair(uint32_t a, uint32_t b) { g_pairs.emplace_back(a, b); }

TEST(Sched, PairHookSeesHandOffsAndSwitches)
{
	g_pairs.clear();
	sched::set_pair_hook(note_pair);
	sched::Replay rep({sched::Record{0, "t0:held", 1, 1}});
	Scheduler s(rep);
	s.spawn([&] {
		s.mutex_lock(&obj_a, kA, L("t0:lock"));
		s.point(L("t0:held"));
		s.mutex_unlock(&obj_a, kA, L("t0:unlock"));
	});
	s.spawn([&] {
		s.mutex_lock(&obj_a, kA, L("t1:lock"));
		s.mutex_unlock(&obj_a, kA, L("t1:unlock"));
	});
	sched::RunResult r = s.run();
	sched::set_pair_hook(nullptr);
	EXPECT_EQ(r.outcome, Outcome::done) << r.report;
	const std::pair<uint32_t, uint32_t> handoff{L("t0:unlock").id, L("t1:lock").id};
	EXPECT_NE(std::find(g_pairs.begin(), g_pairs.end(), handoff), g_pairs.end());
	EXPECT_EQ(g_pairs.front().first, L("t0:held").id);  // the recorded switch
}

// ---- Programs with threads ----------------------------------------------------

const char kRace[] = R"(patch v2
map value_size=8 max_entries=512
mmap A len=1p prot=rw
load A thread=0
load A+8 size=4 thread=1
at T0 finish_fault:spin_lock#1 switch T1
)";

TEST(InterleaveText, ThreadsScheduleAndHistoricRoundTrip)
{
	Program p = parse(std::string("historic finish_fault_put\n") + kRace);
	ASSERT_EQ(p.ops.size(), 3u);
	EXPECT_EQ(p.ops[0].thread, -1);
	EXPECT_EQ(p.ops[2].thread, 1);
	ASSERT_EQ(p.schedule.size(), 1u);
	EXPECT_EQ(p.schedule[0], (ScheduleRecord{0, "finish_fault:spin_lock", 1, 1}));
	EXPECT_EQ(p.header.historic, Historic::finish_fault_put);
	std::string text = format_program(p);
	Program q = parse(text);
	EXPECT_EQ(q.ops, p.ops);
	EXPECT_EQ(q.schedule, p.schedule);
	EXPECT_EQ(format_program(q), text);
	for (const char *bad : {"at T0 x switch T1", "at T9 x#1 switch T0", "at T0 x#0 switch T1", "at T0 x#1 go T1"}) {
		ParseResult r = parse_program(std::string("map value_size=8 max_entries=1\n") + bad + "\n");
		EXPECT_FALSE(r.program) << bad;
	}
}

// The decoder says what the text says about concurrency: several groups
// (a join) and lock failures, so the threads fuzz target reaches both.
TEST(InterleaveBinary, EveryByteStringDecodesToAValidConcurrentProgram)
{
	std::mt19937 rng(7);
	int joined = 0, failing = 0;
	for (int n = 0; n < 200; n++) {
		std::vector<uint8_t> bytes(rng() % 96);
		for (auto &b : bytes)
			b = uint8_t(rng());
		ConcurrentInput in = decode_concurrent(bytes.data(), bytes.size());
		std::string err;
		std::vector<interleave::Group> g = interleave::find_groups(in.program, &err);
		EXPECT_TRUE(err.empty()) << err;
		if (!in.program.joins.empty()) {
			joined++;
			EXPECT_EQ(g.size(), 2u) << format_program(in.program);
		}
		failing += !in.fail_events.empty();
		ParseResult r = parse_program(format_program(in.program));
		ASSERT_TRUE(r.program) << r.error.str() << "\n" << format_program(in.program);
		EXPECT_EQ(r.program->ops, in.program.ops);
		EXPECT_EQ(r.program->joins, in.program.joins);
		if ((n % 10 == 0 || !in.fail_events.empty()) && !g.empty()) {
			sched::ByteSchedule bs(in.schedule, sched::ByteSchedule::failing(in.fail_events));
			interleave::ScheduleOutcome o =
				interleave::run_schedule(in.program, Config{Arch::A64, Patch::v2, 12, Door::anon, false}, bs);
			EXPECT_NE(o.sched.outcome, sched::Outcome::diverged);
		}
	}
	EXPECT_GT(joined, 10);
	EXPECT_GT(failing, 20);
	// ByteSchedule fails the questions it lists: here the fault's VMA trylock
	Program p = parse("map value_size=8 max_entries=8192\nmmap A len=1p prot=rw\nload A thread=0\nload A thread=1\n");
	sched::ByteSchedule fail_first({}, {{0, 1}});
	interleave::ScheduleOutcome o =
		interleave::run_schedule(p, Config{Arch::A64, Patch::v2, 12, Door::anon, false}, fail_first);
	EXPECT_EQ(o.sched.fails, 1u);
	EXPECT_EQ(o.verdict(), "ok");
}

// The old inject_fault_race hook as a schedule: T0 is preempted between
// ->fault and finish_fault's page-table lock, T1 faults the page in, T0
// loses the race and must drop the handler's reference (docs/fault.md#finish_fault). Read
// faults reach finish_fault on v1/v2 and on v3 without fault-around (64K
// pages); write faults on every lazy level.
TEST(Interleave, FinishFaultLostRaceDoesNotLeak)
{
	for (Patch patch : {Patch::v1, Patch::v2, Patch::v3})
		for (unsigned shift : {12u, 16u})
			for (bool write : {false, true}) {
				if (patch == Patch::v3 && shift == 12 && !write)
					continue;  // fault-around maps the page without finish_fault
				Config c{Arch::A64, patch, shift, Door::anon, false};
				SCOPED_TRACE(c.name() + (write ? " write" : " read"));
				std::string ops = write ? "store A val=0x77 thread=0\nload A thread=1\n"
							: "load A thread=0\nload A thread=1\n";
				Program p = parse("map value_size=8 max_entries=8192\nmmap A len=1p prot=rw\n" + ops +
						  "at T0 finish_fault:spin_lock#1 switch T1\n");
				sched::Replay rep(p.schedule);
				interleave::ScheduleOutcome o = interleave::run_schedule(p, c, rep);
				EXPECT_EQ(o.verdict(), "ok");
				EXPECT_EQ(o.stats.lost_races, 1u);
				// the same schedule on the historical leak breaks the refcount
				c.historic = Historic::finish_fault_put;
				sched::Replay rep2(p.schedule);
				interleave::ScheduleOutcome bad = interleave::run_schedule(p, c, rep2);
				EXPECT_EQ(bad.violation.what, Invariant::page_refcount) << bad.verdict();
			}
}

// A lock failure is part of a finding: vma_start_read's trylock may fail
// spuriously (include/linux/mm.h: "allowed to occasionally yield false
// locked result"), the fault then runs under mmap_lock, and the historical
// finish_fault leak is still reached that way. The finding's text Program
// carries the "fail" record and replays to the same verdict; without the
// record the same switch takes the VMA-lock path (no failure counted).
TEST(Interleave, LockFailureFindingReplaysFromItsText)
{
	Config c{Arch::A64, Patch::v2, 12, Door::anon, false};
	c.historic = Historic::finish_fault_put;
	Program p = parse("map value_size=8 max_entries=8192\nmmap A len=1p prot=rw\n"
			  "store A val=0x77 thread=0\nload A thread=1\n"
			  "at T0 do_user_addr_fault:vma_start_read:trylock#1 fail\n"
			  "at T0 finish_fault:spin_lock#1 switch T1\n");
	sched::Replay rep(p.schedule);
	interleave::ScheduleOutcome o = interleave::run_schedule(p, c, rep);
	EXPECT_EQ(o.violation.what, Invariant::page_refcount) << o.verdict();
	EXPECT_EQ(o.sched.fails, 1u);
	ASSERT_EQ(o.sched.records.size(), 2u);
	EXPECT_EQ(sched::format_record(o.sched.records[0]), "at T0 do_user_addr_fault:vma_start_read:trylock#1 fail");

	Program found = interleave::finding_program(p, c, o);
	Program again = parse(format_program(found));
	EXPECT_EQ(again.schedule, o.sched.records);
	EXPECT_EQ(again.header.historic, c.historic);
	EXPECT_EQ(again.header.patch, c.patch);
	sched::Replay rep2(again.schedule);
	interleave::ScheduleOutcome o2 = interleave::run_schedule(again, c, rep2);
	EXPECT_EQ(o2.verdict(), o.verdict());
	EXPECT_EQ(o2.sched.trace_hash, o.sched.trace_hash);

	sched::Replay rep3({p.schedule[1]});
	interleave::ScheduleOutcome o3 = interleave::run_schedule(p, c, rep3);
	EXPECT_EQ(o3.sched.fails, 0u);
	EXPECT_NE(o3.sched.trace_hash, o.sched.trace_hash);
}

// A thread in two processes is no schedule run_schedule could run: it
// refuses the Program rather than run it sequentially as if it passed.
TEST(Interleave, RunScheduleRefusesAThreadInTwoProcesses)
{
	Program p = parse("map value_size=8 max_entries=8192\nmmap A len=1p prot=rw\nfork\n"
			  "load A thread=0\nload A proc=1 thread=0\n");
	Config c{Arch::A64, Patch::v2, 12, Door::anon, false};
	sched::Replay none({});
	EXPECT_THROW(interleave::run_schedule(p, c, none), std::invalid_argument);
}

// A second concurrent group, after a "join" or after a sequential op: a
// thread is one task over both groups, so T0's second finish_fault is #2 (its
// first was in group 1). The historical leak is found in group 2, and the
// finding's text (with its join line) replays to the same verdict.
TEST(Interleave, SecondGroupFindingReplaysFromItsText)
{
	for (const char *between : {"mmap B len=1p prot=rw thread=1\njoin\n", "mmap B len=1p prot=rw\n"}) {
		SCOPED_TRACE(between);
		Program p = parse(std::string("map value_size=8 max_entries=8192\nmmap A len=1p prot=rw\n"
					      "load A thread=0\n") +
				  between + "store B val=0x77 thread=0\nload B thread=1\nload A+8\n" +
				  "at T0 finish_fault:spin_lock#2 switch T1\n");
		std::string err;
		ASSERT_EQ(interleave::find_groups(p, &err).size(), 2u);
		Config c{Arch::A64, Patch::v2, 12, Door::anon, false};
		sched::Replay fixed(p.schedule);
		interleave::ScheduleOutcome ok = interleave::run_schedule(p, c, fixed);
		EXPECT_EQ(ok.verdict(), "ok");
		EXPECT_EQ(ok.stats.lost_races, 1u);
		EXPECT_EQ(ok.trace.events.size(), p.ops.size());

		c.historic = Historic::finish_fault_put;
		sched::Replay rep(p.schedule);
		interleave::ScheduleOutcome o = interleave::run_schedule(p, c, rep);
		EXPECT_EQ(o.violation.what, Invariant::page_refcount) << o.verdict();
		EXPECT_GE(o.violation_op, 3u);  // in the second group, not the first
		Program again = parse(format_program(interleave::finding_program(p, c, o)));
		EXPECT_EQ(again.joins, p.joins);
		sched::Replay rep2(again.schedule);
		interleave::ScheduleOutcome o2 = interleave::run_schedule(again, c, rep2);
		EXPECT_EQ(o2.verdict(), o.verdict());
		EXPECT_EQ(o2.sched.trace_hash, o.sched.trace_hash);
	}
}

// Threads of a forked child: the explorer's finding names the process on
// each op, and its text replays there (not in the parent, whose page the
// child's faults would otherwise hit).
TEST(Interleave, ChildProcessFindingReplaysFromItsText)
{
	Program p = parse("map value_size=8 max_entries=8192\nmmap A len=1p prot=rw\nfork\n"
			  "store A val=0x77 thread=0 proc=1\nload A thread=1 proc=1\nload A\n");
	Config c{Arch::A64, Patch::v2, 12, Door::anon, false, Historic::finish_fault_put};
	interleave::ExploreOptions o;
	o.kind = interleave::StrategyKind::bounded;
	o.seconds = 60;
	interleave::ExploreReport r = interleave::explore(p, c, o);
	ASSERT_TRUE(r.finding) << r.schedules << " schedules";
	EXPECT_EQ(r.finding->outcome.violation.what, Invariant::page_refcount) << r.finding->outcome.verdict();
	EXPECT_TRUE(r.finding->replay_error.empty()) << r.finding->replay_error;
	const std::string text = format_program(r.finding->program);
	EXPECT_NE(text.find("proc=1 thread=0"), std::string::npos) << text;
	Program again = parse(text);
	sched::Replay rep(again.schedule);
	interleave::ScheduleOutcome o2 = interleave::run_schedule(again, c, rep);
	EXPECT_EQ(o2.verdict(), r.finding->outcome.verdict());
	EXPECT_EQ(o2.sched.trace_hash, r.finding->outcome.sched.trace_hash);
	c.historic = Historic::none;
	EXPECT_FALSE(interleave::explore(p, c, o).finding);  // the fixed kernel: every schedule ok
}

// The bounded search branches on lock failures too: one thread's one fault
// has no pick to depart from, but its VMA trylock may fail (the mmap_lock
// fallback), so the search runs two schedules and is exhausted.
TEST(Interleave, BoundedSearchBranchesOnLockFailures)
{
	Program p = parse("map value_size=8 max_entries=8192\nmmap A len=1p prot=rw\nload A thread=0\n");
	interleave::ExploreOptions o;
	o.kind = interleave::StrategyKind::bounded;
	o.seconds = 60;
	interleave::ExploreReport r = interleave::explore(p, Config{Arch::A64, Patch::v2, 12, Door::anon, false}, o);
	EXPECT_TRUE(r.bounded_exhausted);
	EXPECT_EQ(r.bounded, 2u);
	EXPECT_EQ(r.distinct, 2u);
	EXPECT_FALSE(r.finding);
	// The portfolio (the swarm's) stops there with stop_when_exhausted,
	// instead of re-walking the same two schedules until the budget.
	o.kind = interleave::StrategyKind::portfolio;
	o.max_schedules = 50;
	o.stop_when_exhausted = true;
	r = interleave::explore(p, Config{Arch::A64, Patch::v2, 12, Door::anon, false}, o);
	EXPECT_TRUE(r.bounded_exhausted);
	EXPECT_EQ(r.schedules, 2u);
	o.stop_when_exhausted = false;
	r = interleave::explore(p, Config{Arch::A64, Patch::v2, 12, Door::anon, false}, o);
	EXPECT_EQ(r.schedules, 50u);
	EXPECT_EQ(r.repeats, 48u);
}

// The swarm, bounded by Programs and schedules (no wall clock decides): on a
// historical level a generated Program's finding is written as text and
// replays from it to the same verdict; the fixed kernel stays quiet on the
// same Programs.
TEST(Interleave, SwarmFindingReplaysFromItsTextAndFixedIsQuiet)
{
	interleave::SwarmOptions o;
	o.seed = 1;
	o.seconds = 1e9;
	o.max_programs = 300;
	o.program_seconds = 1e9;
	o.program_schedules = 100;
	Config c{Arch::A64, Patch::v2, 12, Door::anon, false};
	c.historic = Historic::freeze_mutex_2025;
	interleave::SwarmReport r = interleave::swarm(c, o);
	ASSERT_TRUE(r.finding) << r.programs << " programs";
	EXPECT_TRUE(r.finding->replay_error.empty()) << r.finding->replay_error;
	Program again = parse(format_program(r.finding->program));
	sched::Replay rep(again.schedule);
	EXPECT_EQ(interleave::run_schedule(again, c, rep).verdict(), r.finding->outcome.verdict());
	EXPECT_EQ(r.distinct + r.repeats + r.unclassified, r.schedules);

	c.historic = Historic::none;
	o.max_programs = 30;
	interleave::SwarmReport quiet = interleave::swarm(c, o);
	EXPECT_FALSE(quiet.finding) << quiet.finding->outcome.verdict();
	EXPECT_EQ(quiet.programs, 30u);
}

TEST(InterleaveText, JoinRoundTripsAndMisplacedJoinsAreErrors)
{
	const std::string head = "map value_size=8 max_entries=8192\nmmap A len=1p\n";
	Program p = parse(head + "load A thread=0\nload A thread=1\njoin\nload A thread=1\n");
	EXPECT_EQ(p.joins, (std::vector<uint32_t>{3}));
	EXPECT_EQ(format_program(parse(format_program(p))), format_program(p));
	const struct {
		const char *text;
		int line, col;
		const char *error;
	} bad[] = {
		{"join\nload A thread=0\n", 3, 1, "'join' must follow an op with thread="},
		{"load A\n join\nload A thread=0\n", 4, 2, "'join' must follow an op with thread="},
		{"load A thread=0\njoin\n", 4, 1, "'join' must be followed by an op with thread="},
		{"load A thread=0\njoin\nload A\n", 4, 1, "'join' must be followed by an op with thread="},
		{"load A thread=0\njoin\njoin\nload A thread=1\n", 5, 1, "two 'join' lines in a row"},
		{"load A thread=0\njoin now\nload A thread=1\n", 4, 6, "unexpected 'now' after 'join'"},
	};
	for (const auto &b : bad) {
		ParseResult r = parse_program(head + b.text);
		EXPECT_FALSE(r.program) << b.text;
		EXPECT_EQ(r.error.line, b.line) << b.text;
		EXPECT_EQ(r.error.column, b.col) << b.text;
		EXPECT_EQ(r.error.message, b.error) << b.text;
	}
}

// "points access" (a point at every declared shared access) is part of the
// Program: it round-trips, a run honours it without any flag, and bad forms
// are errors at their column.
TEST(InterleaveText, PointsAccessRoundTripsAndAddsPoints)
{
	const std::string head = "map value_size=8 max_entries=1 flags=mmapable\nclose thread=0\nclose thread=1\n";
	Program with = parse(head + "points access\n");
	Program without = parse(head);
	EXPECT_TRUE(with.access_points);
	EXPECT_FALSE(without.access_points);
	EXPECT_EQ(format_program(parse(format_program(with))), format_program(with));
	EXPECT_TRUE(parse(format_program(with)).access_points);
	const Config c{Arch::A64, Patch::v2, 12, Door::anon, false};
	sched::DefaultStrategy d1, d2;
	const uint64_t plain = interleave::run_schedule(without, c, d1).decisions;
	EXPECT_GT(interleave::run_schedule(with, c, d2).decisions, plain);
	const struct {
		const char *text;
		int col;
		const char *error;
	} bad[] = {
		{"points\n", 1, "'points' takes 'access'"},
		{"points locks\n", 8, "'points' takes 'access'"},
		{"points access now\n", 15, "unexpected 'now' after 'points access'"},
		{"points access\npoints access\n", 1, "duplicate 'points access'"},
	};
	for (const auto &b : bad) {
		ParseResult r = parse_program(head + b.text);
		EXPECT_FALSE(r.program) << b.text;
		EXPECT_EQ(r.error.column, b.col) << b.text;
		EXPECT_EQ(r.error.message, b.error) << b.text;
	}
}

// A concurrent store's bytes are whatever the interleaving left: the contents
// shadow learns them at the next read instead of reporting the old value
// (which it did for every explore Program before ContentsShadow::concurrent).
TEST(Interleave, ContentsShadowFollowsConcurrentWrites)
{
	Program p = parse("map value_size=8 max_entries=1024\nmmap A len=2p prot=rw\nload A thread=0\n"
			  "store A+1p val=0x11 thread=0\nupdate idx=1 val=5 thread=1\nmunmap A len=1p thread=1\n"
			  "load A+1p\nlookup idx=1\nstore A+1p val=0x22\nload A+1p\n");
	for (Patch patch : {Patch::v2, Patch::v3}) {
		sched::DefaultStrategy d;
		interleave::ScheduleOutcome o =
			interleave::run_schedule(p, Config{Arch::A64, patch, 12, Door::anon, false}, d);
		EXPECT_EQ(o.verdict(), "ok");
	}
}

// ---- the historical levels, from scratch and fixed -------------------------------

struct Level {
	const char *file;
	Invariant want;
};
const Level kLevels[] = {
	{"toctou_2021.fl", Invariant::frozen_stable},
	{"freeze_mutex_2025.fl", Invariant::lockdep},
	{"finish_fault_put.fl", Invariant::page_refcount},
};

Program load(const std::string &name)
{
	std::ifstream in(std::string(FL_SOURCE_DIR) + "/corpora/interleavings/" + name);
	std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	return parse(text);
}

TEST(Interleave, HistoricalLevelsFoundFromScratchAndFixesQuiet)
{
	for (const Level &l : kLevels) {
		SCOPED_TRACE(l.file);
		Program p = load(l.file);
		p.schedule.clear();  // from scratch
		ASSERT_EQ(p.configs().expand().size(), 1u);
		Config c = p.configs().expand()[0];
		ASSERT_NE(c.historic, Historic::none);
		interleave::ExploreOptions o;  // default settings
		interleave::ExploreReport r = interleave::explore(p, c, o);
		ASSERT_TRUE(r.finding);
		EXPECT_EQ(r.finding->outcome.violation.what, l.want) << r.finding->outcome.verdict();
		EXPECT_EQ(r.finding->replay_error, "");
		// The fix: every schedule within the bound, quiet.
		c.historic = Historic::none;
		o.kind = interleave::StrategyKind::bounded;
		interleave::ExploreReport fixed = interleave::explore(p, c, o);
		EXPECT_FALSE(fixed.finding) << fixed.finding->outcome.verdict();
		EXPECT_TRUE(fixed.bounded_exhausted);
	}
}

// Seeds name independent runs: the random walk from seeds 1-8 finds
// toctou_2021's race each with a seed of its own, in 7 different schedules.
// (With seed + i as schedule i's seed, all eight found it in one schedule,
// the walk of seed 36, at schedule 36 down to 29.) A finding's name is the
// seed its walk took: that walk alone takes the finding's schedule again.
TEST(Interleave, SeedsRunTheirOwnSchedules)
{
	Program p = load("toctou_2021.fl");
	p.schedule.clear();
	const Config c = p.configs().expand()[0];
	interleave::ExploreOptions o;
	o.kind = interleave::StrategyKind::random;
	o.seconds = 600;
	o.max_schedules = 1000;
	std::set<std::string> names;
	std::set<uint64_t> schedules;
	for (o.seed = 1; o.seed <= 8; o.seed++) {
		const interleave::ExploreReport r = interleave::explore(p, c, o);
		ASSERT_TRUE(r.finding) << "seed " << o.seed;
		const interleave::Finding &f = *r.finding;
		names.insert(f.strategy);
		schedules.insert(f.outcome.sched.trace_hash);
		unsigned long long seed = 0;
		ASSERT_EQ(std::sscanf(f.strategy.c_str(), "random(seed=%llu)", &seed), 1) << f.strategy;
		sched::RandomWalk named(seed);
		EXPECT_EQ(interleave::run_schedule(p, c, named).sched.trace_hash, f.outcome.sched.trace_hash) << f.strategy;
	}
	EXPECT_EQ(names.size(), 8u);
	EXPECT_GE(schedules.size(), 6u);
}

// ---- honest counts -----------------------------------------------------------------

TEST(ScheduleSet, CountsDistinctRepeatsAndUnclassifiedPastItsCap)
{
	ScheduleSet set(4);
	EXPECT_EQ(set.add(0), ScheduleSet::Seen::fresh);   // 0 is a hash like any other
	EXPECT_EQ(set.add(0), ScheduleSet::Seen::repeat);
	for (uint64_t h = 1; h <= 10; h++)
		set.add(h * 0x9e3779b97f4a7c15ull);
	EXPECT_EQ(set.distinct(), 4u);
	EXPECT_EQ(set.unclassified(), 7u);  // the set is full: neither distinct nor repeat
	EXPECT_EQ(set.add(1 * 0x9e3779b97f4a7c15ull), ScheduleSet::Seen::repeat);
	EXPECT_EQ(set.repeats(), 2u);
	EXPECT_EQ(set.runs(), 13u);
	ScheduleSet big;  // grows past its first table
	for (uint64_t h = 0; h < 5000; h++)
		big.add(h << 12);
	for (uint64_t h = 0; h < 5000; h++)
		big.add(h << 12);
	EXPECT_EQ(big.distinct(), 5000u);
	EXPECT_EQ(big.repeats(), 5000u);
}

uint64_t choose(uint64_t n, uint64_t k)
{
	uint64_t r = 1;
	for (uint64_t i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return r;
}

// Two threads that never block, with a and b scheduling points: a schedule
// is a merge of the two sequences of points that starts with T0's first, so
// there are C(a+b-1, a-1). The bounded search with enough departures runs
// each exactly once and exhausts; PCT and the random walk after it add no
// schedule and every one of their runs is a repeat.
TEST(Interleave, DistinctSchedulesAreCountedExactly)
{
	const Config c{Arch::A64, Patch::v2, 12, Door::anon, false};
	const std::string head = "map value_size=8 max_entries=1 flags=mmapable\n";
	for (const char *op : {"lookup idx=0", "update idx=0 val=1"}) {
		SCOPED_TRACE(op);
		sched::DefaultStrategy d;
		const uint64_t a = interleave::run_schedule(parse(head + op + " thread=0\n"), c, d).sched.decisions;
		ASSERT_GE(a, 2u);
		const uint64_t n = choose(2 * a - 1, a - 1);  // b == a: the same op
		Program p = parse(head + op + " thread=0\n" + op + " thread=1\n");
		interleave::ExploreOptions o;
		o.max_deviations = int(2 * a);
		o.seconds = 600;
		o.max_schedules = n + 200;
		interleave::ExploreReport r = interleave::explore(p, c, o);
		ASSERT_FALSE(r.finding);
		EXPECT_TRUE(r.bounded_exhausted);
		EXPECT_EQ(r.bounded, n);
		EXPECT_EQ(r.distinct, n);
		EXPECT_EQ(r.bounded_new, n);
		EXPECT_EQ(r.pct + r.random, 200u);
		EXPECT_EQ(r.pct_new + r.random_new, 0u);
		EXPECT_EQ(r.repeats, 200u);
		EXPECT_EQ(r.unclassified, 0u);
		// The random walk alone: never more than n, and its seeds cover a
		// small n (10 for two lookups) well within 20n runs.
		o.kind = interleave::StrategyKind::random;
		o.max_schedules = 20 * n;
		interleave::ExploreReport w = interleave::explore(p, c, o);
		EXPECT_LE(w.distinct, n);
		EXPECT_EQ(w.distinct + w.repeats, 20 * n);
		if (n <= 10) {
			EXPECT_EQ(w.distinct, n);
		}
	}
}

}  // namespace
}  // namespace fl
