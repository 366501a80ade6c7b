// SPDX-License-Identifier: GPL-2.0-only
// faultline-prove-libarena: Z3 proofs of libarena's index arithmetic over
// the port's own functions (src/libarena/buddy_index.h), each
// counterexample replayed on the C types buddy.cpp runs.
//
//	faultline-prove-libarena [--obligation NAME[,NAME...]] [--plant SLIP] [--list]
//
// --plant (only the test-only build faultline-prove-libarena-planted) puts a
// planted slip in force: size_to_order, nibble, buddy_xor, split, addr_idx,
// carve_out. Exit 0 iff every obligation is proved; 1 on a counterexample
// or an undecided query; 2 on bad options.
#include <z3++.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "libarena/buddy_index.h"
#include "libarena/smt/obligations.h"

using namespace fl::libarena;
using namespace fl::libarena::smt;

namespace {

constexpr unsigned kRlimit = 50'000'000;  // deterministic: each query decides in well under 1 % of it
const char *kSlips[] = {"size_to_order", "nibble", "buddy_xor", "split", "addr_idx", "carve_out"};

int usage(const std::string &msg)
{
	std::fprintf(stderr,
		     "faultline-prove-libarena: %s\nusage: faultline-prove-libarena [--obligation NAME[,NAME...]] "
		     "[--plant SLIP] [--list]\n",
		     msg.c_str());
	return 2;
}

bool known_obligation(const std::string &n)
{
	for (const ObligationInfo &o : obligations())
		if (n == o.name)
			return true;
	return false;
}

}  // namespace

int main(int argc, char **argv)
{
	std::vector<std::string> only;
	std::string plant;
	for (int i = 1; i < argc; i++) {
		const std::string a = argv[i];
		if (a == "--list") {
			for (const ObligationInfo &o : obligations())
				std::printf("%-14s %s\n", o.name, o.what);
			return 0;
		} else if (a == "--obligation" && i + 1 < argc) {
			std::stringstream ss(argv[++i]);
			for (std::string n; std::getline(ss, n, ',');) {
				if (!known_obligation(n))
					return usage("no obligation '" + n + "' (--list names them)");
				only.push_back(n);
			}
		} else if (a == "--plant" && i + 1 < argc) {
			plant = argv[++i];
			bool known = false;
			for (const char *s : kSlips)
				known |= plant == s;
			if (!known)
				return usage("no planted slip '" + plant + "'");
		} else {
			return usage("unknown argument '" + a + "'");
		}
	}
#ifdef FL_LIBARENA_PLANT
	buddy_plant = plant.c_str();
	std::printf("TEST-ONLY BUILD: planted slip '%s' in force\n", plant.empty() ? "(none)" : plant.c_str());
#else
	if (!plant.empty())
		return usage("--plant needs the test-only build faultline-prove-libarena-planted");
#endif

	unsigned maj, min, build, rev;
	Z3_get_version(&maj, &min, &build, &rev);
	std::printf("libarena index arithmetic (src/libarena/buddy_index.h) under Z3 %u.%u.%u\n", maj, min, build);
	std::printf("%-14s %-15s %6s %9s  %s\n", "obligation", "verdict", "paths", "ms", "claim / counterexample");
	int proved = 0, found = 0, undecided = 0;
	double total = 0;
	for (const ObligationInfo &o : obligations()) {
		if (!only.empty() && std::find(only.begin(), only.end(), o.name) == only.end())
			continue;
		const Verdict v = decide(o.name, kRlimit);
		total += v.ms;
		if (v.proved) {
			proved++;
			std::printf("%-14s %-15s %6zu %9.1f  %s\n", v.name.c_str(), "proved", v.paths, v.ms, v.what.c_str());
		} else if (v.counterexample) {
			found++;
			std::printf("%-14s %-15s %6zu %9.1f  %s: %s (%s)\n", v.name.c_str(), "counterexample", v.paths,
				    v.ms, v.model.c_str(), v.detail.c_str(),
				    v.replays ? "replays on the concrete port" : "DOES NOT REPLAY");
		} else {
			undecided++;
			std::printf("%-14s %-15s %6zu %9.1f  %s\n", v.name.c_str(), "undecided", v.paths, v.ms,
				    v.what.c_str());
		}
	}
	std::printf("%d proved, %d counterexamples, %d undecided in %.1f ms\n", proved, found, undecided, total);
	return found || undecided ? 1 : 0;
}
