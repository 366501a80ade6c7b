// SPDX-License-Identifier: GPL-2.0-only
#include "check/workspace.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace fl {

bool machine_reuse()
{
	static const bool on = [] {
		const char *e = std::getenv("FL_MACHINE_REUSE");
		return !e || std::strcmp(e, "0") != 0;
	}();
	return on;
}

Workspace *Workspace::of(const Config &cfg, bool reference)
{
	if (!machine_reuse())
		return nullptr;
	arena::Pause heap;  /* the registry outlives every run */
	thread_local std::vector<std::unique_ptr<Workspace>> all;
	reference = reference && cfg.patch != Patch::pre;
	for (auto &w : all)
		if (w->cfg_ == cfg && (w->ref_ != nullptr) == reference)
			return w.get();
	all.push_back(std::make_unique<Workspace>(cfg, reference));
	return all.back().get();
}

Workspace::Workspace(const Config &cfg, bool reference) : cfg_(cfg)
{
	arena::Arena &a = arena::thread_arena();
	a.begin_freeze();
	{
		arena::Scope in(&a);
		test_ = make_machine(cfg).release();
		if (reference)
			ref_ = make_machine(reference_config(cfg)).release();
	}
	arena::Pause heap;
	frozen_ = a.freeze();
}

Workspace &Workspace::restored()
{
	if (arena::active()) {
		std::fprintf(stderr, "faultline: a Workspace session inside an arena scope\n");
		std::abort();
	}
	arena::thread_arena().restore(frozen_);
	return *this;
}

const RunReport &Workspace::run_in_arena(const Program &p)
{
	Session s(*this);
	report_ = new RunReport(run_differential(p, s.test(), s.reference()));
	return *report_;
}

}  // namespace fl
