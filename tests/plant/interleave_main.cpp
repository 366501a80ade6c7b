// SPDX-License-Identifier: GPL-2.0-only
// `faultline-cli interleave` over a port that carries one planted slip
// (test-only: CMakeLists.txt's FL_SCHED_PLANTS, tests/race_plants_test.sh).
#include <string>
#include <vector>

#include "interleave.h"

int main(int argc, char **argv)
{
	return fl::cli::interleave_main(std::vector<std::string>(argv + 1, argv + argc));
}
