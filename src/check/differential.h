// SPDX-License-Identifier: GPL-2.0-only
// The differential runner: one Program on the configuration under test and,
// in lockstep, on the reference (default: same width/page/door/spec at
// `pre`). Traces are compared op by op; documented differences are named,
// and after one the two machines are resynchronised so that the rest of the
// comparison stays exact.
#pragma once

#include <optional>
#include <vector>

#include "check/differences.h"
#include "check/execution.h"

namespace fl {

struct SeenDifference {
	size_t op;  // 0-based
	Difference what;
};

struct Verdict {
	enum Kind { ok, violation, difference } kind = ok;
	Invariant invariant = Invariant::none;  // for violation
	std::string detail;
	size_t op = 0;                           // 0-based
	Config config;                           // where it happened
	std::string str() const;                 // "ok", "violation foreign_page at op 3 (v1/...)"
	bool operator==(const Verdict &o) const { return kind == o.kind && invariant == o.invariant; }
};

struct RunReport {
	Config config;
	Trace trace;                      // under test
	std::optional<Trace> reference;   // when a lockstep reference ran
	std::vector<SeenDifference> expected_differences;
	Verdict verdict;            // of the configuration under test
	Verdict reference_verdict;  // a violation on the reference side, if any
};

// Runs `p` on `cfg`; when cfg.patch != pre, also on the same config at `pre`
// in lockstep. The verdict is the first invariant violation of the
// configuration under test, else the first unexpected difference. Once the
// reference itself breaks an invariant it stops being an oracle: that is
// reported in reference_verdict (it is pre's own verdict), and comparing stops.
// Unless FL_MACHINE_REUSE=0, on this thread's Workspace for cfg (machines
// restored to their fresh state, not built anew: check/workspace.h).
RunReport run_differential(const Program &p, const Config &cfg);
// The same on machines nothing has run on yet (fresh, or restored): `ref`
// is the reference (null: none), at reference_config(test's config).
RunReport run_differential(const Program &p, Machine &test, Machine *ref);
// The lockstep reference of cfg: the same kernel at `pre`.
Config reference_config(const Config &cfg);

}  // namespace fl
