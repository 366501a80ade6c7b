// SPDX-License-Identifier: GPL-2.0-only
// faultline reach: what a set of Programs (one technique's inputs) reaches
// when run on the port: op kinds, geometry buckets (map size, mmap offset
// and length, element offsets, page size, v3 fault-around windows) and how
// many invariant checks ran. The same runs, in the coverage build, give the
// technique's line/branch coverage of src/kernel (tools/verifylib/reach.py).
#pragma once

#include <string>
#include <vector>

namespace fl::cli {

// reach [--binary] [--random N --seed S] [filters] [FILE|DIR...]: JSON on stdout.
int reach_main(const std::vector<std::string> &args);

}  // namespace fl::cli
