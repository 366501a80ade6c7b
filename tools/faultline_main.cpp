// SPDX-License-Identifier: GPL-2.0-only
// faultline-cli: the C++ side of ./faultline (which installs and builds).
#include <cstdio>
#include <string>
#include <vector>

#include "options.h"
#include "oracle.h"
#include "reach.h"
#include "replay.h"

namespace {

const char kUsage[] =
	"usage: faultline-cli COMMAND [OPTIONS] [FILE...]\n"
	"  replay [--check-expect] [--quiet] FILE...   run Programs under every configuration they allow\n"
	"  summary FILE...                             per-configuration verdict table over Programs\n"
	"  decode FILE...                              print the Program a fuzzer input (bytes) decodes to\n"
	"  oracle [--count N] [--seed S] [--allow-skip] [--verbose] [FILE...]\n"
	"                                              Programs on the host kernel against the port\n"
	"  reach [--binary] [--random N --seed S] [FILE|DIR...]\n"
	"                                              what Programs reach on the port (JSON)\n"
	"configuration filters (comma lists): --patch pre,v1,v2,v3  --arch 32,64  --page 4k,16k,64k\n"
	"                                     --door anon,regular,direct  --spec mask,bypass\n";

}  // namespace

int main(int argc, char **argv)
{
	std::vector<std::string> args(argv + 1, argv + argc);
	if (args.empty() || args[0] == "-h" || args[0] == "--help") {
		std::fputs(kUsage, args.empty() ? stderr : stdout);
		return args.empty() ? 2 : 0;
	}
	std::string cmd = args[0];
	args.erase(args.begin());
	try {
		if (cmd == "replay")
			return fl::cli::replay_main(args);
		if (cmd == "summary")
			return fl::cli::summary_main(args);
		if (cmd == "decode")
			return fl::cli::decode_main(args);
		if (cmd == "reach")
			return fl::cli::reach_main(args);
		if (cmd == "oracle")
			return fl::cli::oracle_main(args);
		throw fl::cli::UsageError("unknown command '" + cmd + "'");
	} catch (const fl::cli::UsageError &e) {
		std::fprintf(stderr, "faultline: %s\n", e.what());
		return 2;
	}
}
