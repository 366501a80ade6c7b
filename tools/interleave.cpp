// SPDX-License-Identifier: GPL-2.0-only
// faultline interleave: the interleaving explorer alone. Explores schedules
// of Programs with a concurrent group (thread= ops), or replays the schedule
// a Program carries (--replay), on every configuration it allows.
#include "interleave.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "check/interleave/explore.h"
#include "check/interleave/swarm.h"
#include "check/program_text.h"
#include "options.h"
#include "base/sched/fiber.h"
#include "base/sched/strategy.h"

namespace fl::cli {

namespace {

struct Values {
	interleave::ExploreOptions explore;
	std::optional<Historic> historic;
	std::string out_dir;
	bool seed_given = false;
};

uint64_t number(const std::string &flag, const std::string &v)
{
	try {
		size_t used = 0;
		unsigned long long n = std::stoull(v, &used, 0);
		if (used == v.size())
			return n;
	} catch (const std::exception &) {
	}
	throw UsageError("bad number for " + flag + ": '" + v + "'");
}

// Takes the value options out of args; the rest goes to parse_options.
std::vector<std::string> take_values(const std::vector<std::string> &args, Values *v)
{
	std::vector<std::string> rest;
	for (size_t i = 0; i < args.size(); i++) {
		const std::string &a = args[i];
		auto value = [&]() -> std::string {
			if (i + 1 >= args.size())
				throw UsageError("missing value for " + a);
			return args[++i];
		};
		if (a == "--strategy") {
			std::string s = value();
			auto k = interleave::parse_strategy(s);
			if (!k)
				throw UsageError("bad strategy '" + s + "' (portfolio, default, bounded, pct, random)");
			v->explore.kind = *k;
		} else if (a == "--seed") {
			v->explore.seed = number(a, value());
			v->seed_given = true;
		} else if (a == "--depth") {
			v->explore.pct_depth = int(number(a, value()));
			if (v->explore.pct_depth < 1 || v->explore.pct_depth > 16)
				throw UsageError("--depth must be 1..16");
		} else if (a == "--deviations") {
			v->explore.max_deviations = int(number(a, value()));
		} else if (a == "--seconds") {
			try {
				v->explore.seconds = std::stod(value());
			} catch (const std::exception &) {
				throw UsageError("bad number for --seconds");
			}
		} else if (a == "--schedules") {
			v->explore.max_schedules = number(a, value());
		} else if (a == "--historic") {
			std::string s = value();
			v->historic = parse_historic(s);
			if (!v->historic)
				throw UsageError("bad historic '" + s + "' (none, toctou_2021, freeze_mutex_2025, finish_fault_put)");
		} else if (a == "--out") {
			v->out_dir = value();
		} else {
			rest.push_back(a);
		}
	}
	return rest;
}

std::vector<Config> configs_of(const Program &p, const Options &o, const Values &v)
{
	std::vector<Config> out;
	for (Config c : p.configs().expand()) {
		if (v.historic)
			c.historic = *v.historic;
		ConfigFilter f = o.filter;
		f.historics = {c.historic};
		if (f.matches(c))
			out.push_back(c);
	}
	return out;
}

Invariant expected(const Program &p, const Config &c)
{
	// An expect condition names no historic level: it applies to the
	// level the header (or --historic) selects.
	Config m = c;
	m.historic = Historic::none;
	for (const Expectation &e : p.expects)
		if (e.when.matches(m))
			return e.violation;
	return Invariant::none;
}

// A finding's Program text into DIR (created if missing); a write that
// fails is the user's to hear about, not a "written to" for a file that is not there.
void write_finding(const std::string &dir, const std::string &name, const std::string &text)
{
	std::error_code ec;
	std::filesystem::create_directories(dir, ec);
	const std::string path = dir + "/" + name;
	std::ofstream out(path);
	out << text;
	if (ec || !out.flush())
		throw UsageError("cannot write " + path + (ec ? ": " + ec.message() : std::string()));
	std::printf("  written to %s\n", path.c_str());
}

int replay_one(const std::string &file, const Program &p, const Config &c, const Values &v, bool check_expect,
	       bool quiet)
{
	sched::Replay rep(p.schedule);
	interleave::ScheduleOutcome o = interleave::run_schedule(p, c, rep, v.explore.checks);
	const bool diverged = o.sched.outcome == sched::Outcome::diverged;
	if (!quiet || diverged)
		std::printf("%s %s: %s\n", file.c_str(), c.name().c_str(), o.verdict().c_str());
	if (!o.linearize_note.empty())
		std::printf("%s %s: %s\n", file.c_str(), c.name().c_str(), o.linearize_note.c_str());
	if (diverged) {
		std::fprintf(stderr, "faultline: %s: %s: the schedule diverged: %s\n", file.c_str(), c.name().c_str(),
			     o.sched.report.c_str());
		return 1;
	}
	if (check_expect) {
		Invariant want = expected(p, c);
		if (o.violation.what != want) {
			std::printf("%s %s: expected %s, got %s\n", file.c_str(), c.name().c_str(),
				    want == Invariant::none ? "ok" : to_string(want), o.verdict().c_str());
			return 1;
		}
		return 0;
	}
	return o.finding() ? 1 : 0;
}

int explore_one(const std::string &file, const Program &p, const Config &c, const Values &v, bool quiet)
{
	interleave::ExploreReport r = interleave::explore(p, c, v.explore);
	using ull = unsigned long long;
	// Runs, then how many took a schedule no earlier run took (by trace
	// hash), per strategy; "exhausted": every schedule within the bound ran.
	const std::string unclassified =
		r.unclassified ? ", " + std::to_string(r.unclassified) + " unclassified (set full)" : "";
	std::printf("%s %s: %s, %llu schedules: %llu distinct, %llu repeats%s (bounded %llu: %llu new%s, pct %llu: %llu "
		    "new, random %llu: %llu new), %.2f s, %.0f schedules/s, max %llu steps: %s\n",
		    file.c_str(), c.name().c_str(), to_string(v.explore.kind), (ull)r.schedules, (ull)r.distinct,
		    (ull)r.repeats, unclassified.c_str(), (ull)r.bounded, (ull)r.bounded_new,
		    r.bounded_exhausted ? ", exhausted" : "", (ull)r.pct, (ull)r.pct_new, (ull)r.random,
		    (ull)r.random_new, r.seconds, r.seconds > 0 ? double(r.schedules) / r.seconds : 0.0,
		    (ull)r.max_steps, r.finding ? "FINDING" : "no finding");
	// after the finding's line, which scripts read right under this one
	const std::string unchecked = r.linearize_unchecked.line();
	if (!r.finding) {
		std::printf("%s", unchecked.c_str());
		return 0;
	}
	const interleave::Finding &f = *r.finding;
	std::string text = format_program(f.program);
	std::printf("  found by %s at schedule %llu after %.3f s: %s\n%s", f.strategy.c_str(),
		    (unsigned long long)f.schedule, f.seconds, f.outcome.verdict().c_str(), unchecked.c_str());
	if (!quiet)
		std::printf("%s", text.c_str());
	if (!v.out_dir.empty())
		write_finding(v.out_dir,
			      "interleave-" + std::string(to_string(f.outcome.violation.what)) + "-" +
				      std::to_string(f.outcome.sched.trace_hash % 100000000) + ".fl",
			      "# found by faultline interleave (" + f.strategy + ") from " + file + "\n" + text);
	if (!f.replay_error.empty()) {
		std::fprintf(stderr, "faultline: %s: %s\n", file.c_str(), f.replay_error.c_str());
		return 3;
	}
	return 1;
}

// --swarm: generated Programs (swarm.h) on every configuration the filters
// leave, --seconds each. 0 quiet, 1 a finding (written with --out), 3 a
// finding that does not replay. Of N configurations the i-th draws from
// seed --seed x N + i (its line prints it; `--seed` that value on that
// configuration alone runs the same Programs): a slip in code every
// configuration shares (the fd table, the VMA tree) is then searched with as
// many different Programs as there are configurations, not the same ones
// again, and runs of different seeds share none (with --seed + i, seed 2's
// cells ran seed 1's Programs one cell over).
int swarm_main(const Options &o, const Values &v)
{
	int rc = 0;
	Program any;  // no header: every configuration, narrowed by the filters
	const std::vector<Config> configs = configs_of(any, o, v);
	uint64_t cell_seed = v.explore.seed * configs.size();
	for (Config c : configs) {
		interleave::SwarmOptions so;
		so.seed = cell_seed++;
		so.seconds = v.explore.seconds;
		so.stop_at_first = v.explore.stop_at_first;
		so.checks = v.explore.checks;
		interleave::SwarmReport r = interleave::swarm(c, so);
		using ull = unsigned long long;
		std::printf("swarm %s seed %llu: %llu programs (%llu exhausted), %llu schedules (%llu distinct, "
			    "%llu repeats, %llu unclassified), %.2f s, %.0f distinct/s: %s\n",
			    c.name().c_str(), (ull)so.seed, (ull)r.programs, (ull)r.exhausted, (ull)r.schedules,
			    (ull)r.distinct, (ull)r.repeats, (ull)r.unclassified, r.seconds,
			    r.seconds > 0 ? double(r.distinct) / r.seconds : 0.0, r.finding ? "FINDING" : "no finding");
		const std::string unchecked = r.linearize_unchecked.line();
		if (!r.finding) {
			std::printf("%s", unchecked.c_str());
			continue;
		}
		const interleave::Finding &f = *r.finding;
		std::printf("  program %llu, found by %s at schedule %llu: %s\n%s", (ull)r.finding_program,
			    f.strategy.c_str(), (ull)f.schedule, f.outcome.verdict().c_str(), unchecked.c_str());
		std::string text = format_program(f.program);
		if (!o.has("--quiet"))
			std::printf("%s", text.c_str());
		if (!v.out_dir.empty())
			write_finding(v.out_dir,
				      "swarm-" + std::string(to_string(f.outcome.violation.what)) + "-seed" +
					      std::to_string(so.seed) + "-" + std::to_string(r.finding_program) + ".fl",
				      "# found by faultline interleave --swarm (seed " + std::to_string(so.seed) + ", " +
					      f.strategy + ")\n" + text);
		if (!f.replay_error.empty()) {
			std::fprintf(stderr, "faultline: swarm: %s\n", f.replay_error.c_str());
			rc = 3;
		} else
			rc = std::max(rc, 1);
	}
	return rc == 3 ? 1 : rc;
}

// The checkers a run keeps (ScheduleChecks): every one on unless switched
// off; access points (a scheduling point at each declared shared access)
// when asked (or the Program says "points access"; its findings are written
// with that line, so they replay from their text).
interleave::ScheduleChecks checks_of(const Options &o)
{
	interleave::ScheduleChecks c;
	c.lockset = !o.has("--no-lockset");
	c.linearize = !o.has("--no-linearize");
	c.point_invariants = !o.has("--no-point-invariants");
	c.access_points = o.has("--access-points");
	return c;
}

}  // namespace

int interleave_main(const std::vector<std::string> &args)
{
	Values v;
	Options o = parse_options(take_values(args, &v),
				  {"--replay", "--check-expect", "--quiet", "--keep-going", "--no-lockset", "--no-linearize",
				   "--no-point-invariants", "--access-points", "--swarm"});
	v.explore.checks = checks_of(o);
	if (o.has("--swarm")) {
		if (!o.files.empty() || o.has("--replay") || o.has("--check-expect"))
			throw UsageError("interleave --swarm takes no Program files and no --replay");
		v.explore.stop_at_first = !o.has("--keep-going");
		std::printf("fibers: %s; seed %llu\n", sched::fiber_backend(), (unsigned long long)v.explore.seed);
		return swarm_main(o, v);
	}
	if (o.files.empty())
		throw UsageError("interleave: no Program files");
	v.explore.stop_at_first = !o.has("--keep-going");
	const bool replay = o.has("--replay") || o.has("--check-expect");
	if (!replay && !o.has("--quiet"))
		std::printf("fibers: %s; seed %llu\n", sched::fiber_backend(), (unsigned long long)v.explore.seed);
	int rc = 0;
	for (const std::string &file : o.files) {
		Program p = load_program(file);
		std::string err;
		interleave::find_group(p, &err);
		if (!err.empty())
			throw UsageError(file + ": " + err);
		std::vector<Config> cs = configs_of(p, o, v);
		if (cs.empty())
			throw UsageError(file + ": no configuration left after the filters");
		for (const Config &c : cs) {
			int r = replay ? replay_one(file, p, c, v, o.has("--check-expect"), o.has("--quiet"))
				       : explore_one(file, p, c, v, o.has("--quiet"));
			rc = std::max(rc, r);
		}
	}
	return rc == 3 ? 1 : rc;
}

}  // namespace fl::cli
