// SPDX-License-Identifier: GPL-2.0-only
// Shrunk counterexamples as Program files under corpora/findings/, pinned to
// the configuration that failed and expecting what run_differential says
// about them, so that `faultline replay --check-expect FILE` reproduces them.
#pragma once

#include <string>

#include "check/program.h"
#include "base/config.h"

namespace fl::props {

// The Program with every configuration axis pinned in its header.
Program pin_config(const Program &, const Config &);
// pin_config plus the expectation line the replay will check, e.g. "expect violation foreign_page".
Program pin(const Program &, const Config &);
// Writes the file; returns its path ("" if it could not be written).
std::string export_finding(const Program &, const Config &, const std::string &property,
			   const std::string &comment);

}  // namespace fl::props
