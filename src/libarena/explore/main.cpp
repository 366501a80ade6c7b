// SPDX-License-Identifier: GPL-2.0-only
// buddy-explore: the schedule explorer over allocator Programs (.bl files).
//   buddy-explore [--level L] [--seconds S] [--seed N] [--max-schedules N] [--out DIR] FILE...
//   buddy-explore --replay [--trace] [--level L] FILE...
// --replay runs each Program once, a concurrent one under the schedule its
// text records (how a fuzzer's finding is replayed), and prints its verdict.
// --level overrides each file's level line (to run the same Programs at
// series and at a historical level). Prints per file the schedules run and
// the first finding (the Program with its schedule, replayed). Exit 0: no
// finding; 1: a finding; 2: bad input.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "libarena/buddy_explore.h"

using namespace fl::libarena;

namespace {

int bad(const std::string &msg)
{
	std::fprintf(stderr, "buddy-explore: %s\n", msg.c_str());
	return 2;
}

}  // namespace

int main(int argc, char **argv)
{
	BuddyExploreOptions o;
	std::string out_dir;
	std::optional<buddy_level> level;
	std::vector<std::string> files;
	bool replay = false, trace = false;  // --trace: the replay's op-by-op trace
	for (int i = 1; i < argc; i++) {
		const std::string a = argv[i];
		auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
		const char *v = nullptr;
		try {
			if (a == "--seconds" && (v = value()))
				o.seconds = std::stod(v);
			else if (a == "--seed" && (v = value()))
				o.seed = std::stoull(v);
			else if (a == "--max-schedules" && (v = value()))
				o.max_schedules = std::stoull(v);
			else if (a == "--replay")
				replay = true;
			else if (a == "--trace")
				trace = true;
			else if (a == "--out" && (v = value()))
				out_dir = v;
			else if (a == "--level" && (v = value())) {
				for (buddy_level l : kBuddyLevels)
					if (!std::strcmp(v, to_string(l)))
						level = l;
				if (!level)
					return bad(std::string("unknown level '") + v + "'");
			} else if (!a.empty() && a[0] == '-')
				return bad("unknown option '" + a + "'");
			else
				files.push_back(a);
		} catch (...) {
			return bad("bad value for " + a);
		}
	}
	if (files.empty())
		return bad("no Program files (usage: buddy-explore [--level L] [--seconds S] [--seed N] FILE...)");
	if (!replay)
		std::printf("buddy-explore: seed %llu, %.1f s per Program\n", (unsigned long long)o.seed, o.seconds);
	int rc = 0;
	for (const std::string &f : files) {
		std::ifstream in(f);
		if (!in)
			return bad("cannot read " + f);
		std::stringstream ss;
		ss << in.rdbuf();
		std::string err;
		auto p = parse_buddy_program(ss.str(), &err);
		if (!p)
			return bad(f + ": " + err);
		if (level)
			p->level = *level;
		if (replay) {
			const BuddyVerdict v = run_buddy_program(*p);
			for (const std::string &line : trace ? v.trace : std::vector<std::string>{})
				std::printf("  %s\n", line.c_str());
			if (v.bad_input)
				std::printf("%s at %s: bad input: %s\n", f.c_str(), to_string(p->level), v.what.c_str());
			else if (v.ok)
				std::printf("%s at %s: ok%s%s\n", f.c_str(), to_string(p->level),
					    v.linearize_note.empty() ? "" : " (", v.linearize_note.empty() ? "" : (v.linearize_note + ")").c_str());
			else
				std::printf("%s at %s: violation at op %zu: %s\n", f.c_str(), to_string(p->level), v.op + 1,
					    v.what.c_str());
			rc = v.bad_input ? std::max(rc, 2) : !v.ok ? std::max(rc, 1) : rc;
			continue;
		}
		const BuddyExploreReport r = explore_buddy(*p, o);
		std::printf("%s at %s: %llu schedules in %.2f s (%llu distinct, %llu repeats", f.c_str(), to_string(p->level),
			    (unsigned long long)r.schedules, r.seconds, (unsigned long long)r.distinct,
			    (unsigned long long)r.repeats);
		if (r.unclassified)
			std::printf(", %llu unclassified: set full", (unsigned long long)r.unclassified);
		std::printf("; bounded search %llu%s)", (unsigned long long)r.bounded,
			    r.bounded_exhausted ? ", exhausted" : "");
		if (r.linearize_unchecked)
			std::printf(" (linearizability not checked on %llu: too many orders, a lock failed beside an NMI, or the schedule placed one)",
				    (unsigned long long)r.linearize_unchecked);
		if (!r.finding) {
			std::printf(", no finding\n");
			continue;
		}
		const BuddyFinding &x = *r.finding;
		if (x.verdict.bad_input)
			return bad(f + ": " + x.verdict.what);
		std::printf(", finding at schedule %llu (%s) after %.2f s: op %zu: %s%s\n", (unsigned long long)x.schedule,
			    x.strategy.c_str(), x.seconds, x.verdict.op + 1, x.verdict.what.c_str(),
			    x.replay_error.empty() ? " (replays)" : (" -- " + x.replay_error).c_str());
		const std::string text = "# expect violation " + x.verdict.what.substr(0, x.verdict.what.find(':')) +
					 " at op " + std::to_string(x.verdict.op + 1) + " at " + to_string(p->level) + "\n" +
					 format_buddy_program(x.program);
		std::printf("%s", text.c_str());
		if (!out_dir.empty()) {
			std::filesystem::create_directories(out_dir);
			const std::string name = std::filesystem::path(f).stem().string() + "-" + to_string(p->level) + ".bl";
			std::ofstream(std::filesystem::path(out_dir) / name) << text;
		}
		rc = 1;
	}
	return rc;
}
