// SPDX-License-Identifier: GPL-2.0-only
// Running one RapidCheck property on one configuration inside a gtest:
// the configurations, the failure bookkeeping (which Program failed, for
// export), and the classification of failures on configurations that the
// issue already names as broken.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "check/program.h"
#include "check/program_text.h"
#include "base/config.h"

namespace fl::props {

// Every patch level x width x door at 4K pages (Spectre-v1 masking on).
std::vector<Config> all_configs();
// "v1_arch32_direct": the gtest parameter name, also what `faultline props` filters on.
std::string config_test_name(const Config &);
struct ConfigName {
	std::string operator()(const testing::TestParamInfo<Config> &i) const { return config_test_name(i.param); }
};

// Configurations whose failures the issue already explains: `direct` hands
// f_op->mmap vm_pgoffs that mmap(2) cannot produce on 64-bit (and on 32-bit,
// skips file_mmap_ok), and v1 on Arch32 through `regular` has the 32-bit wrap.
bool known_broken(const Config &);

// Remembers the Program of the case that is about to fail (the last one
// remembered when RapidCheck stops is the shrunk counterexample).
void note_failing_case(const Program &, const Config &);

// With FL_PROPS_DUMP_DIR set, writes every generated case's Program there,
// its configuration pinned (the reach report reads what props generated).
void dump_case(const std::string &property, const Program &, const Config &);

// Runs `prop` as RapidCheck property `property` (id: gtest suite/name, so
// RC_PARAMS reproduce= strings work), prints RapidCheck's report and, on
// failure, exports the counterexample and fails the test unless the failure
// is classified as assumption-dependent on a known_broken configuration.
// FL_PROPS_STRICT=1 makes those fail too (`faultline props` sets it).
void check_property(const std::string &property, const Config &cfg, std::function<void()> prop);

}  // namespace fl::props

// RC_ASSERT with the Program text in the message, remembered for export.
#define FL_PROP_ASSERT(cond, prog, cfg, what)                                                   \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			::fl::props::note_failing_case((prog), (cfg));                          \
			RC_FAIL(std::string(what) + "\n--- Program ---\n" +                     \
				::fl::format_program(prog));                                    \
		}                                                                               \
	} while (0)
