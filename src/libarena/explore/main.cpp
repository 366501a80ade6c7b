// SPDX-License-Identifier: GPL-2.0-only
// buddy-explore: the schedule explorer over allocator Programs (.bl files).
//   buddy-explore [--level L] [--seconds S] [--seed N] [--max-schedules N] [--out DIR] FILE...
//   buddy-explore --replay [--trace] [--level L] FILE...
//   buddy-explore --swarm [--level L] [--seconds S] [--seed N] [--max-programs N] [--out DIR]
// --replay runs each Program once, a concurrent one under the schedule its
// text records (how a fuzzer's finding is replayed), and prints its verdict.
// --level overrides each file's level line (to run the same Programs at
// series and at a historical level). Prints per file the schedules run and
// the first finding (the Program with its schedule, replayed). --swarm
// explores generated Programs instead of files (buddy_swarm.h; --seconds is
// the whole budget, default level series). --no-lockset, --no-point-checks
// and --no-linearize turn a checker off, to measure its cost
// (tools/checker_cost.sh). Exit 0: no finding; 1: a finding; 2: bad input.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "libarena/buddy_explore.h"
#include "libarena/buddy_swarm.h"

using namespace fl::libarena;

namespace {

int bad(const std::string &msg)
{
	std::fprintf(stderr, "buddy-explore: %s\n", msg.c_str());
	return 2;
}

// A finding as the .bl text it replays from, with the expect comment.
std::string finding_text(const BuddyFinding &x, buddy_level level, const std::string &origin)
{
	return "# " + origin + "\n# expect violation " + x.verdict.what.substr(0, x.verdict.what.find(':')) +
	       " at op " + std::to_string(x.verdict.op + 1) + " at " + to_string(level) + "\n" +
	       format_buddy_program(x.program);
}

void write_finding(const std::string &out_dir, const std::string &name, const std::string &text)
{
	if (out_dir.empty())
		return;
	std::filesystem::create_directories(out_dir);
	std::ofstream(std::filesystem::path(out_dir) / name) << text;
	std::printf("  written to %s\n", (std::filesystem::path(out_dir) / name).c_str());
}

int swarm_main(buddy_level level, const BuddyExploreOptions &e, uint64_t max_programs, const std::string &out_dir)
{
	BuddySwarmOptions o;
	o.level = level;
	o.seed = e.seed;
	o.seconds = e.seconds;
	o.max_programs = max_programs;
	const BuddySwarmReport r = buddy_swarm(o);
	using ull = unsigned long long;
	std::printf("buddy swarm %s seed %llu: %llu programs (%llu exhausted), %llu schedules (%llu distinct, %llu "
		    "repeats, %llu unclassified), %.2f s, %.0f distinct/s: %s\n",
		    to_string(level), (ull)o.seed, (ull)r.programs, (ull)r.exhausted, (ull)r.schedules, (ull)r.distinct,
		    (ull)r.repeats, (ull)r.unclassified, r.seconds, r.seconds > 0 ? double(r.distinct) / r.seconds : 0.0,
		    r.finding ? "FINDING" : "no finding");
	const std::string unchecked = r.linearize_unchecked.line();
	if (!r.finding) {
		std::printf("%s", unchecked.c_str());
		return 0;
	}
	const BuddyFinding &x = *r.finding;
	if (x.verdict.bad_input)
		return bad("generated Program " + std::to_string(r.finding_program) + ": " + x.verdict.what);
	std::printf("  program %llu (generator seed %llu), found by %s at schedule %llu after %.2f s: op %zu: %s%s\n",
		    (ull)r.finding_program, (ull)r.finding_seed, x.strategy.c_str(), (ull)x.schedule, r.seconds,
		    x.verdict.op + 1, x.verdict.what.c_str(), x.replay_error.empty() ? " (replays)" : (" -- " + x.replay_error).c_str());
	std::printf("%s", unchecked.c_str());
	const std::string text = finding_text(x, level,
					      "found by buddy-explore --swarm --level " + std::string(to_string(level)) +
						      " --seed " + std::to_string(o.seed) + " (program " +
						      std::to_string(r.finding_program) + ", " + x.strategy + ")");
	std::printf("%s", text.c_str());
	write_finding(out_dir, "swarm-" + std::string(to_string(level)) + "-seed" + std::to_string(o.seed) + "-" +
				       std::to_string(r.finding_program) + ".bl",
		      text);
	return 1;
}

}  // namespace

int main(int argc, char **argv)
{
	BuddyExploreOptions o;
	std::string out_dir;
	std::optional<buddy_level> level;
	std::vector<std::string> files;
	bool replay = false, trace = false;  // --trace: the replay's op-by-op trace
	bool swarm = false;
	uint64_t max_programs = 0;
	BuddyCheckers checkers;  // --no-*: what the checkers cost (docs/interleavings.md)
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
			else if (a == "--swarm")
				swarm = true;
			else if (a == "--max-programs" && (v = value()))
				max_programs = std::stoull(v);
			else if (a == "--replay")
				replay = true;
			else if (a == "--trace")
				trace = true;
			else if (a == "--no-lockset")
				checkers.lockset = false;
			else if (a == "--no-point-checks")
				checkers.point_checks = false;
			else if (a == "--no-linearize")
				checkers.linearize = false;
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
	set_buddy_checkers(checkers);
	if (swarm) {
		if (!files.empty() || replay)
			return bad("--swarm takes no Program files and no --replay");
		return swarm_main(level.value_or(buddy_level::series), o, max_programs, out_dir);
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
		std::printf("; bounded %llu%s)", (unsigned long long)r.bounded, r.bounded_exhausted ? ", exhausted" : "");
		const std::string unchecked = r.linearize_unchecked.line();
		if (!r.finding) {
			std::printf(", no finding\n%s", unchecked.c_str());
			continue;
		}
		const BuddyFinding &x = *r.finding;
		if (x.verdict.bad_input)
			return bad(f + ": " + x.verdict.what);
		std::printf(", finding at schedule %llu (%s) after %.2f s: op %zu: %s%s\n", (unsigned long long)x.schedule,
			    x.strategy.c_str(), x.seconds, x.verdict.op + 1, x.verdict.what.c_str(),
			    x.replay_error.empty() ? " (replays)" : (" -- " + x.replay_error).c_str());
		std::printf("%s", unchecked.c_str());
		const std::string text = finding_text(x, p->level, "found by buddy-explore from " + f + " (seed " +
								       std::to_string(o.seed) + ", " + x.strategy + ")");
		std::printf("%s", text.c_str());
		write_finding(out_dir, std::filesystem::path(f).stem().string() + "-" + to_string(p->level) + ".bl", text);
		rc = 1;
	}
	return rc;
}
