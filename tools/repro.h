// SPDX-License-Identifier: GPL-2.0-only
// faultline repro FILE.fl [--arch 32|64] [--level L] [-o repro.c]: a
// standalone C reproducer of a Program (tools/repro/ is its executor).
#pragma once

#include <string>
#include <vector>

namespace fl::cli {

int repro_main(const std::vector<std::string> &args);

// The C sources embedded at build time (tools/repro/*.c).
extern const char kReproPrelude[];
extern const char kReproExecutor[];

}  // namespace fl::cli
