// SPDX-License-Identifier: GPL-2.0-only
// Workspace: a thread's machines for one Config, reused from run to run.
// They are built once in the thread's arena (base/arena.h) and frozen right
// after construction (before map_create, which depends on the Program);
// every run restores that state (a copy of the few KiB two fresh machines
// occupy) and drops whatever the last run allocated, instead of building
// two machines and tearing them down again (kernel globals, neighbour
// areas, processes; exit_mmap and vfree of every page the run touched).
// The same input meets the same bytes at the same addresses every time.
//
// FL_MACHINE_REUSE=0 in the environment turns it off (every run builds its
// machines, as before): run_differential's results are the same either way
// (ctest machine_reuse.*).
#pragma once

#include "base/arena.h"
#include "check/differential.h"

namespace fl {

class Workspace {
public:
	// This thread's workspace for cfg (with the lockstep reference when
	// cfg is not at pre, unless `reference` is false), created on first
	// use; null when reuse is off (FL_MACHINE_REUSE=0).
	static Workspace *of(const Config &cfg, bool reference = true);

	// The machines restored to their state right after construction, for
	// as long as the Session lives; meanwhile every allocation on the thread
	// goes to the arena (and the next restore drops it). Not nested.
	class Session {
	public:
		explicit Session(Workspace &w) : w_(w.restored()), scope_(&arena::thread_arena()) {}
		Machine &test() { return *w_.test_; }
		Machine *reference() { return w_.ref_; }  // at reference_config(); null at pre
	private:
		Workspace &w_;
		arena::Scope scope_;
	};

	// run_differential(p, cfg) on the restored machines. The report lives
	// in the arena until this thread's next Session or new workspace; run()
	// returns a copy on the heap.
	const RunReport &run_in_arena(const Program &p);
	RunReport run(const Program &p) { return run_in_arena(p); }

	const Config &config() const { return cfg_; }

	Workspace(const Config &cfg, bool reference);
	Workspace(const Workspace &) = delete;
	Workspace &operator=(const Workspace &) = delete;

private:
	Workspace &restored();

	Config cfg_;
	Machine *test_ = nullptr, *ref_ = nullptr;  // in the arena's frozen prefix
	arena::Arena::Frozen frozen_;
	RunReport *report_ = nullptr;  // in the arena's scratch
};

bool machine_reuse();  // FL_MACHINE_REUSE is not "0"

}  // namespace fl
