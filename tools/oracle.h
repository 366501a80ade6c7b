// SPDX-License-Identifier: GPL-2.0-only
// faultline oracle: Programs on the host kernel against the port.
#pragma once

#include <string>
#include <vector>

namespace fl::cli {

int oracle_main(const std::vector<std::string> &args);

}  // namespace fl::cli
