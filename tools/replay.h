// SPDX-License-Identifier: GPL-2.0-only
// faultline replay / summary / decode: run Program files under every
// configuration they allow and print traces and verdicts; show the Program
// behind a fuzzer input.
#pragma once

#include <string>
#include <vector>

namespace fl::cli {

int replay_main(const std::vector<std::string> &args);
int summary_main(const std::vector<std::string> &args);
int decode_main(const std::vector<std::string> &args);

}  // namespace fl::cli
