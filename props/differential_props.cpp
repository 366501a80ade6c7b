// SPDX-License-Identifier: GPL-2.0-only
// Lazy vs eager: every generated Program gives verdict ok from
// run_differential (which runs `pre` in lockstep and already names the
// documented differences, src/check/differences.h). On `pre` itself this
// is "no invariant breaks".
#include "check/differential.h"
#include "props/generators.h"
#include "props/property.h"

namespace fl::props {
namespace {

class Differential : public testing::TestWithParam<Config> {};

TEST_P(Differential, VerdictOk)
{
	const Config cfg = GetParam();
	check_property("differential", cfg, [cfg] {
		const Program p = *gen_program();
		dump_case("differential", p, cfg);
		RunReport r = run_differential(p, cfg);
		FL_PROP_ASSERT(r.verdict.kind == Verdict::ok, p, cfg, "verdict: " + r.verdict.str());
	});
}

INSTANTIATE_TEST_SUITE_P(Props, Differential, testing::ValuesIn(all_configs()), ConfigName());

}  // namespace
}  // namespace fl::props
