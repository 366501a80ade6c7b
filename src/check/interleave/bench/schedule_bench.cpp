// SPDX-License-Identifier: GPL-2.0-only
// How fast the interleaving explorer runs (a benchmark: prints figures,
// asserts nothing). For each Program file given (default: the explore
// corpus and the historical levels on the fixed kernel), on one
// configuration: schedules per second on this core under the random walk
// and PCT, the decisions and fiber switches one schedule takes, and, for
// scale, the same Program run sequentially without any scheduler (what the
// machine alone costs). Then the checkers' cost per schedule, side by side
// in the same run: the random walk with every checker on, with each one off
// (lockset, linearizability, the count invariants at every point) and with
// all three off. Rates are per CPU-second of this process. Then the cost of
// one fiber switch on this build's backend. Built in every preset: run it
// from build/release and from build/default (ASan+UBSan) side by side.
//
//   interleave-bench [--seconds S] [--config v2/arch64/4k/anon] FILE...
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "base/sched/fiber.h"
#include "check/execution.h"
#include "check/interleave/explore.h"
#include "check/program_text.h"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0)
{
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

// This process's CPU seconds: the rates are per CPU-second (per core),
// which the machine's other load changes far less than wall-clock rates.
double cpu_seconds()
{
	timespec ts{};
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

[[noreturn]] void usage(const std::string &why)
{
	std::fprintf(stderr, "interleave-bench: %s\nusage: interleave-bench [--seconds S] [--config patch/archNN/page/door] FILE...\n",
		     why.c_str());
	std::exit(2);
}

fl::Config parse_config(const std::string &s)
{
	fl::Config c{fl::Arch::A64, fl::Patch::v2, 12, fl::Door::anon, false};
	std::stringstream ss(s);
	std::string part;
	for (int i = 0; std::getline(ss, part, '/'); i++) {
		bool ok = false;
		switch (i) {
		case 0: if (auto v = fl::parse_patch(part)) { c.patch = *v; ok = true; } break;
		case 1: if (auto v = fl::parse_arch(part)) { c.arch = *v; ok = true; } break;
		case 2: if (auto v = fl::parse_page_shift(part)) { c.page_shift = *v; ok = true; } break;
		case 3: if (auto v = fl::parse_door(part)) { c.door = *v; ok = true; } break;
		default: break;
		}
		if (!ok)
			usage("bad --config '" + s + "'");
	}
	return c;
}

fl::Program load(const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		usage("cannot read " + path);
	std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	fl::ParseResult r = fl::parse_program(text);
	if (!r.program)
		usage(path + ": " + r.error.str());
	fl::Program p = *r.program;
	p.schedule.clear();  // explored, not replayed
	p.header.historic.reset();
	return p;
}

// The machine alone: the Program's ops in order, no scheduler, no fibers.
double sequential_per_second(const fl::Program &p, const fl::Config &c, double seconds)
{
	auto t0 = Clock::now();
	const double c0 = cpu_seconds();
	uint64_t n = 0;
	while (since(t0) < seconds) {
		fl::Execution e(p, c);
		while (!e.done() && !e.violation())
			e.step();
		n++;
	}
	return double(n) / (cpu_seconds() - c0);
}

struct Figures {
	double per_second = 0;
	double decisions = 0, switches = 0;  // per schedule
	bool finding = false;
};

Figures explore_rate(const fl::Program &p, const fl::Config &c, fl::interleave::StrategyKind k, double seconds,
		     const fl::interleave::ScheduleChecks &checks = {})
{
	fl::interleave::ExploreOptions o;
	o.checks = checks;
	o.kind = k;
	o.seconds = seconds;
	o.stop_at_first = false;
	const double c0 = cpu_seconds();
	fl::interleave::ExploreReport r = fl::interleave::explore(p, c, o);
	const double cpu = cpu_seconds() - c0;
	Figures f;
	f.per_second = cpu > 0 ? double(r.schedules) / cpu : 0;
	f.decisions = r.schedules ? double(r.decisions) / double(r.schedules) : 0;
	f.switches = r.schedules ? double(r.switches) / double(r.schedules) : 0;
	f.finding = r.finding.has_value();
	return f;
}

// One fiber switch: a ping-pong between the thread's stack and a fiber.
fl::sched::Context *g_main;
fl::sched::Fiber *g_fiber;
long g_rounds;

void ping(void *)
{
	for (long i = 0; i < g_rounds; i++)
		fl::sched::Fiber::switch_to(g_fiber->context(), g_main);
	fl::sched::Fiber::exit_to(g_fiber->context(), g_main);
}

double switch_ns(long rounds)
{
	g_rounds = rounds;
	g_main = fl::sched::Fiber::main();
	fl::sched::Fiber f(ping, nullptr);
	g_fiber = &f;
	const double c0 = cpu_seconds();
	for (long i = 0; i <= rounds; i++)
		fl::sched::Fiber::switch_to(g_main, f.context());
	return (cpu_seconds() - c0) * 1e9 / (2.0 * double(rounds));
}

}  // namespace

int main(int argc, char **argv)
{
	double seconds = 1.0;
	fl::Config cfg = parse_config("v2/arch64/4k/anon");
	std::vector<std::string> files;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if ((a == "--seconds" || a == "--config") && i + 1 >= argc)
			usage("missing value for " + a);
		if (a == "--seconds") {
			seconds = std::atof(argv[++i]);
			if (!(seconds > 0))
				usage("--seconds must be positive");
		} else if (a == "--config") {
			cfg = parse_config(argv[++i]);
		} else if (a.rfind("--", 0) == 0) {
			usage("unknown option " + a);
		} else {
			files.push_back(a);
		}
	}
	if (files.empty())
		usage("no Program files (e.g. corpora/interleavings/explore/*.fl)");
#if defined(__SANITIZE_ADDRESS__)
	const char *build = "ASan+UBSan";
#elif defined(__OPTIMIZE__)
	const char *build = "optimised";
#else
	const char *build = "unoptimised";
#endif
	std::printf("interleave-bench: %s build, fibers %s, %s, %.1f s per figure, rates per CPU-second\n", build,
		    fl::sched::fiber_backend(), cfg.name().c_str(), seconds);
	std::printf("%-28s %12s %12s %10s %10s %14s\n", "program", "random/s", "pct/s", "decisions", "switches",
		    "sequential/s");
	double sum_rand = 0, sum_pct = 0;
	std::vector<fl::Program> programs;
	std::vector<std::string> names;
	for (const std::string &file : files) {
		programs.push_back(load(file));
		names.push_back(file.substr(file.find_last_of('/') + 1));
		const fl::Program &p = programs.back();
		Figures r = explore_rate(p, cfg, fl::interleave::StrategyKind::random, seconds);
		Figures q = explore_rate(p, cfg, fl::interleave::StrategyKind::pct, seconds);
		double seq = sequential_per_second(p, cfg, seconds / 2);
		sum_rand += r.per_second;
		sum_pct += q.per_second;
		std::printf("%-28s %12.0f %12.0f %10.1f %10.1f %14.0f%s\n", names.back().c_str(), r.per_second,
			    q.per_second, r.decisions, r.switches, seq,
			    r.finding || q.finding ? "  (a finding: not a fixed kernel?)" : "");
	}
	std::printf("mean schedules/s: random %.0f, pct %.0f\n", sum_rand / double(files.size()),
		    sum_pct / double(files.size()));

	// The checkers' cost: the random walk with each one switched off.
	struct Variant {
		const char *name;
		fl::interleave::ScheduleChecks checks;
	};
	std::vector<Variant> variants{{"all on", {}}, {"-lockset", {}}, {"-linearize", {}}, {"-points", {}},
				      {"all off", {}}};
	variants[1].checks.lockset = false;
	variants[2].checks.linearize = false;
	variants[3].checks.point_invariants = false;
	variants[4].checks.lockset = variants[4].checks.linearize = variants[4].checks.point_invariants = false;
	std::printf("\nchecker cost (random walk, schedules/s; us per schedule in the mean row)\n%-28s", "program");
	for (const Variant &v : variants)
		std::printf(" %12s", v.name);
	std::printf("\n");
	std::vector<double> sums(variants.size());
	for (size_t i = 0; i < programs.size(); i++) {
		std::printf("%-28s", names[i].c_str());
		for (size_t k = 0; k < variants.size(); k++) {
			Figures f = explore_rate(programs[i], cfg, fl::interleave::StrategyKind::random, seconds,
						 variants[k].checks);
			sums[k] += f.per_second;
			std::printf(" %12.0f", f.per_second);
		}
		std::printf("\n");
	}
	std::printf("%-28s", "mean");
	for (size_t k = 0; k < variants.size(); k++)
		std::printf(" %12.0f", sums[k] / double(programs.size()));
	std::printf("\n%-28s", "us per schedule (mean rate)");
	for (size_t k = 0; k < variants.size(); k++)
		std::printf(" %12.1f", sums[k] > 0 ? 1e6 * double(programs.size()) / sums[k] : 0.0);
	std::printf("\n");
	std::printf("fiber switch (%s): %.1f ns\n", fl::sched::fiber_backend(), switch_ns(2000000));
	return 0;
}
