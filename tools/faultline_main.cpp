// SPDX-License-Identifier: GPL-2.0-only
// faultline-cli: the C++ side of ./faultline (which installs and builds).
// `help [CMD]`, `CMD --help` / `-h`: usage on stdout, exit 0.
// Exit codes, every command: 0 ok, 1 a finding (violation, disagreement,
// differing trace), 2 bad input (usage, unreadable or malformed file).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "interleave.h"
#include "options.h"
#include "oracle.h"
#include "reach.h"
#include "replay.h"
#include "repro.h"
#include "selftest.h"

namespace {

using Main = int (*)(const std::vector<std::string> &);

struct Command {
	const char *name;
	Main run;
	const char *usage;  // first line: the synopsis
};

const char kFilters[] = "  configuration filters (comma lists): --patch pre,v1,v2,v3  --arch 32,64  --page 4k,16k,64k\n"
			"                                       --door anon,regular,direct  --spec mask,bypass\n";

const Command kCommands[] = {
	{"replay", fl::cli::replay_main,
	 "replay [FILTERS] [--check-expect] [--quiet] FILE...\n"
	 "  run Programs under every configuration they allow (and the filters keep);\n"
	 "  --check-expect: exit 1 unless each verdict is what the Program's expect lines say\n"},
	{"summary", fl::cli::summary_main,
	 "summary [FILTERS] [--json FILE] FILE...\n  per-configuration verdict table over Programs\n"},
	{"decode", fl::cli::decode_main, "decode FILE...\n  print the Program a fuzzer input (bytes) decodes to\n"},
	{"oracle", fl::cli::oracle_main,
	 "oracle [--count N] [--seed S] [--time S] [--arena] [--allow-skip] [--verbose] [FILE...]\n"
	 "  Programs (and N random ones, or as many as --time seconds allow) on the host kernel against the\n"
	 "  port at the host's configuration (--arena: random arena-map Programs);\n"
	 "  exit 1 on a disagreement; without bpf(2): 'skipped: ...' and exit 2, or 0 with --allow-skip;\n"
	 "  on a host that refuses arena maps, arena Programs are skipped (a run of nothing else: as above)\n"},
	{"interleave", fl::cli::interleave_main,
	 "interleave [FILTERS] [--strategy portfolio|default|bounded|pct|random] [--seed S] [--depth D]\n"
	 "           [--deviations N] [--seconds T] [--schedules N] [--historic NAME] [--out DIR]\n"
	 "           [--replay] [--check-expect] [--keep-going] [--quiet] [--no-lockset] [--no-linearize]\n"
	 "           [--no-point-invariants] [--access-points] FILE...\n"
	 "interleave --swarm [FILTERS] [--seconds T] [--seed S] [--historic NAME] [--out DIR]\n"
	 "  explore (or replay) schedules of concurrent Programs (--swarm: of generated ones,\n"
	 "  bounded search then PCT each, T seconds per configuration); exit 1 on a finding\n"
	 "  (--no-lockset, --no-linearize, --no-point-invariants: without that checker, to measure its\n"
	 "  cost; --access-points: a scheduling point at every declared shared access, as a Program's\n"
	 "  \"points access\" line asks; its findings are written with that line)\n"},
	{"reach", fl::cli::reach_main,
	 "reach [--binary] [--random N --seed S] [FILE|DIR...]\n"
	 "  what Programs reach on the port: op kinds, geometry buckets, invariant checks (JSON)\n"},
	{"repro", fl::cli::repro_main,
	 "repro FILE [--arch 32,64] [--level L] [-o repro.c]\n"
	 "  a standalone C reproducer: raw syscalls, its own bpf(2) wrapper; builds with gcc -static and\n"
	 "  gcc -m32 -static; prints the kernel's trace, compares it with the port's at level L (default:\n"
	 "  the Program's pinned patch, else pre); the reproducer exits 0 same, 1 differs, 2 cannot run,\n"
	 "  77 bpf(2) not permitted\n"},
	{"selftest", fl::cli::selftest_main,
	 "selftest FILE [--level L] [--arch 64|32] [-o prog_tests/NAME.c]\n"
	 "  a tools/testing/selftests/bpf/prog_tests test (test__start_subtest, ASSERT_*, libbpf's\n"
	 "  bpf_map_create) asserting the port's trace at level L, spec bypass (test_progs runs as root);\n"
	 "  one-process Programs only\n"},
};

const Command *find(const std::string &name)
{
	for (const Command &c : kCommands)
		if (name == c.name)
			return &c;
	return nullptr;
}

void print_usage(FILE *to)
{
	std::fputs("usage: faultline-cli COMMAND [OPTIONS] [FILE...]   (faultline-cli help COMMAND)\n", to);
	for (const Command &c : kCommands) {
		const char *nl = std::strchr(c.usage, '\n');
		std::fprintf(to, "  %.*s\n", int(nl - c.usage), c.usage);
	}
	std::fputs(kFilters, to);
	std::fputs("exit: 0 ok, 1 a finding (violation, disagreement, differing trace), 2 bad input\n", to);
}

void print_help(const Command &c)
{
	std::printf("usage: faultline-cli %s", c.usage);
	if (!std::strcmp(c.name, "replay") || !std::strcmp(c.name, "summary") || !std::strcmp(c.name, "interleave"))
		std::fputs(kFilters, stdout);
	std::fputs("exit: 0 ok, 1 a finding, 2 bad input\n", stdout);
}

}  // namespace

int main(int argc, char **argv)
{
	std::vector<std::string> args(argv + 1, argv + argc);
	if (args.empty() || args[0] == "-h" || args[0] == "--help" || (args[0] == "help" && args.size() == 1)) {
		print_usage(args.empty() ? stderr : stdout);
		return args.empty() ? 2 : 0;
	}
	std::string cmd = args[0];
	args.erase(args.begin());
	const bool help = cmd == "help";
	if (help) {
		cmd = args[0];
		args.erase(args.begin());
	}
	const Command *c = find(cmd);
	if (!c) {
		std::fprintf(stderr, "faultline: unknown command '%s' (try faultline-cli help)\n", cmd.c_str());
		return 2;
	}
	bool asked = help;
	for (const std::string &a : args)
		asked = asked || a == "--help" || a == "-h";
	if (asked) {
		print_help(*c);
		return 0;
	}
	try {
		return c->run(args);
	} catch (const fl::cli::UsageError &e) {
		std::fprintf(stderr, "faultline: %s\n", e.what());
		return 2;
	}
}
