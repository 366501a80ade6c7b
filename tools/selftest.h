// SPDX-License-Identifier: GPL-2.0-only
// faultline selftest FILE.fl [--level L] [--arch 64|32] [-o prog_tests/NAME.c]:
// the Program as a tools/testing/selftests/bpf/prog_tests test asserting
// the port's trace at the named level.
#pragma once

#include <string>
#include <vector>

namespace fl::cli {

int selftest_main(const std::vector<std::string> &args);

}  // namespace fl::cli
