// SPDX-License-Identifier: GPL-2.0-only
// `faultline-cli interleave` over a port that carries one planted slip
// (test-only: CMakeLists.txt's FL_SCHED_PLANTS, tests/race_plants_test.sh).
#include <cstdio>
#include <string>
#include <vector>

#include "interleave.h"
#include "options.h"

int main(int argc, char **argv)
{
	try {
		return fl::cli::interleave_main(std::vector<std::string>(argv + 1, argv + argc));
	} catch (const fl::cli::UsageError &e) {
		std::fprintf(stderr, "faultline: %s\n", e.what());
		return 2;
	}
}
