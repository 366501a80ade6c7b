// SPDX-License-Identifier: GPL-2.0-only
// faultline interleave: explore or replay the schedules of Programs with a
// concurrent group (src/check/interleave/).
#pragma once

#include <string>
#include <vector>

namespace fl::cli {

int interleave_main(const std::vector<std::string> &args);

}  // namespace fl::cli
