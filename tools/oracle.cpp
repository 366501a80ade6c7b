// SPDX-License-Identifier: GPL-2.0-only
// faultline oracle [--count N] [--seed S] [--time S] [--arena] [--allow-skip] [--verbose] [FILE...]
//
// Every FILE, then N random Programs (the fuzzers' decoder on bytes from a
// seeded PRNG), run on the host kernel and on the port at the host's
// configuration. Exit 0: all agree; 1: a disagreement (printed minimised,
// both traces side by side) or a broken host run; 2: bad input, or bpf(2)
// not permitted without --allow-skip. On a host that refuses arena maps,
// arena Programs are not compared: counted as skipped, the reason printed
// once; when every Program of the run is one, it is a skip like bpf(2)'s.
#include "oracle.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>

#include "check/arena_program_binary.h"
#include "check/program_binary.h"
#include "check/program_text.h"
#include "options.h"
#include "oracle/oracle.h"
#include "real/host_executor.h"

namespace fl::cli {

namespace {

uint64_t parse_u64(const std::string &opt, const std::string &v)
{
	try {
		size_t used = 0;
		unsigned long long n = std::stoull(v, &used, 0);
		if (used == v.size() && !v.empty() && v[0] != '-')
			return n;
	} catch (const std::exception &) {
	}
	throw UsageError("bad value '" + v + "' for " + opt);
}

struct Args {
	uint64_t count = 0;
	std::optional<uint64_t> seed;
	uint64_t time = 0;  // seconds for the random batch (0: no limit); it stops early, saying how many ran
	bool allow_skip = false, verbose = false;
	bool arena = false;  // random Programs on a BPF arena map (src/check/arena_program_binary.h)
	std::vector<std::string> files;
};

Args parse(const std::vector<std::string> &args)
{
	Args a;
	for (size_t i = 0; i < args.size(); i++) {
		const std::string &s = args[i];
		std::string name = s.substr(0, s.find('='));
		auto value = [&]() -> std::string {
			if (size_t eq = s.find('='); eq != std::string::npos)
				return s.substr(eq + 1);
			if (i + 1 >= args.size())
				throw UsageError(s + " needs a value");
			return args[++i];
		};
		if (name == "--count")
			a.count = parse_u64(name, value());
		else if (name == "--seed")
			a.seed = parse_u64(name, value());
		else if (name == "--time")
			a.time = parse_u64(name, value());
		else if (s == "--arena")
			a.arena = true;
		else if (s == "--allow-skip")
			a.allow_skip = true;
		else if (s == "--verbose")
			a.verbose = true;
		else if (s.size() > 1 && s[0] == '-')
			throw UsageError("unknown option " + s);
		else
			a.files.push_back(s);
	}
	if (a.files.empty() && a.count == 0)
		throw UsageError("oracle needs Program files or --count N");
	return a;
}

// "a map of 1635 MiB (...)" -> "a map of N MiB (...)": one line per kind of reason.
std::string without_numbers(const std::string &s)
{
	std::string out;
	for (size_t i = 0; i < s.size(); i++) {
		if (std::isdigit((unsigned char)s[i])) {
			while (i + 1 < s.size() && std::isdigit((unsigned char)s[i + 1]))
				i++;
			out += 'N';
		} else {
			out += s[i];
		}
	}
	return out;
}

struct Tally {
	uint64_t programs = 0, agree = 0, stopped = 0, disagree = 0, unsupported = 0, errors = 0;
	std::array<uint64_t, kOpKinds> ops_run{};  // ops the host executed (not skipped)
	std::map<oracle::HostDifference, uint64_t> explained;
	std::map<std::string, uint64_t> unsupported_reasons;
	std::map<std::pair<bool, std::string>, uint64_t> skipped;  // (arena?, reason) -> Programs
};

bool is_arena(const Program &p)
{
	return p.map.map_type == uapi::BPF_MAP_TYPE_ARENA;
}

void report_disagreement(const std::string &source, const Program &p, const Config &cfg,
			 const oracle::HostRunner &host)
{
	Program small = oracle::minimise(p, cfg, host);
	oracle::Outcome o = oracle::run_both(small, cfg, host);
	std::printf("\ndisagreement: %s (minimised from %zu to %zu ops)\n", source.c_str(), p.ops.size(),
		    small.ops.size());
	std::printf("%s", format_program(small).c_str());
	if (o.kind == oracle::Outcome::disagree)
		std::printf("%s", oracle::side_by_side(small, o.port, o.host).c_str());
	else  // flaky: the minimised program agreed on the re-run; show the original
		std::printf("(the minimised program agreed when re-run: %s)\n", o.reason.c_str());
}

}  // namespace

int oracle_main(const std::vector<std::string> &args)
{
	Args a = parse(args);
	std::vector<std::pair<std::string, Program>> files;
	for (const std::string &f : a.files)
		files.emplace_back(f, load_program(f));

	std::string why;
	std::optional<Config> cfg = oracle::host_config(&why);
	if (!cfg) {
		std::printf("skipped: %s\n", why.c_str());
		return a.allow_skip ? 0 : 2;
	}
	// A host that refuses arena maps runs no arena Program (run_on_host says
	// "skipped: ..."); a run of nothing else is skipped as a whole.
	const bool only_arena = (a.arena || a.count == 0) &&
				std::all_of(files.begin(), files.end(), [](const auto &f) { return is_arena(f.second); });
	if (only_arena && !host_arena_available(&why)) {
		std::printf("skipped: %s\n", why.c_str());
		return a.allow_skip ? 0 : 2;
	}
	const uint64_t seed = a.seed ? *a.seed : std::random_device{}();
	std::printf("oracle: host kernel vs port %s; %zu file%s, %llu random (seed %llu)\n", cfg->name().c_str(),
		    files.size(), files.size() == 1 ? "" : "s", (unsigned long long)a.count,
		    (unsigned long long)seed);
	std::fflush(stdout);

	const oracle::HostRunner host = run_on_host;
	Tally t;
	auto start = std::chrono::steady_clock::now();
	auto one = [&](const std::string &source, const Program &p) {
		t.programs++;
		auto t0 = std::chrono::steady_clock::now();
		oracle::Outcome o = oracle::run_both(p, *cfg, host);
		switch (o.kind) {
		case oracle::Outcome::unsupported:
			t.unsupported++;
			t.unsupported_reasons[without_numbers(o.reason)]++;
			if (a.verbose)
				std::printf("%s: %s\n", source.c_str(), o.reason.c_str());
			return;
		case oracle::Outcome::skipped:
			t.skipped[{is_arena(p), o.reason.substr(o.reason.find(' ') + 1)}]++;
			if (a.verbose)
				std::printf("%s: %s\n", source.c_str(), o.reason.c_str());
			return;
		case oracle::Outcome::error:
			t.errors++;
			std::printf("%s: %s\n%s", source.c_str(), o.reason.c_str(), format_program(p).c_str());
			return;
		case oracle::Outcome::agree:
			t.agree++;
			t.stopped += o.cmp.stopped;
			break;
		case oracle::Outcome::disagree:
			t.disagree++;
			report_disagreement(source, p, *cfg, host);
			break;
		}
		for (oracle::HostDifference d : o.cmp.explained)
			t.explained[d]++;
		for (size_t i = 0; i < p.ops.size() && i < o.host.events.size(); i++)
			if (o.host.events[i].info.rfind("skipped:", 0) != 0)
				t.ops_run[size_t(p.ops[i].kind)]++;
		if (a.verbose)
			std::printf("%s: %s (%.1f ms)\n", source.c_str(), o.kind == oracle::Outcome::agree ? "agree" : "DISAGREE",
				    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
	};
	for (const auto &[name, p] : files)
		one(name, p);
	std::mt19937_64 rng(seed);
	for (uint64_t i = 0; i < a.count; i++) {
		if (a.time && std::chrono::steady_clock::now() - start >= std::chrono::seconds(a.time)) {
			std::printf("oracle: --time %llu s is up after %llu of %llu random Programs\n",
				    (unsigned long long)a.time, (unsigned long long)i, (unsigned long long)a.count);
			break;
		}
		std::vector<uint8_t> bytes = random_program_bytes(rng);
		one("random #" + std::to_string(i) + " (seed " + std::to_string(seed) + ")",
		    a.arena ? decode_arena_program(bytes.data(), bytes.size(), false)
			    : decode_program(bytes.data(), bytes.size()));
		if ((i + 1) % 1000 == 0)  // long runs: a sign of life on stderr
			std::fprintf(stderr, "oracle: %llu/%llu random Programs\n", (unsigned long long)(i + 1),
				     (unsigned long long)a.count);
	}
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

	uint64_t total_ops = 0;
	for (uint64_t n : t.ops_run)
		total_ops += n;
	std::printf("\nops the host ran, by kind (%llu in all):\n", (unsigned long long)total_ops);
	for (int k = 0; k < kOpKinds; k++)
		if (t.ops_run[k])
			std::printf("  %-9s %8llu  %5.1f%%\n", to_string(OpKind(k)), (unsigned long long)t.ops_run[k],
				    100.0 * double(t.ops_run[k]) / double(total_ops));
	for (const auto &[reason, n] : t.unsupported_reasons)
		std::printf("unsupported x%llu: %s\n", (unsigned long long)n, reason.c_str());
	uint64_t skipped = 0;
	for (const auto &[why, n] : t.skipped) {
		std::printf("skipped: %llu %sProgram%s: %s\n", (unsigned long long)n, why.first ? "arena " : "",
			    n == 1 ? "" : "s", why.second.c_str());
		skipped += n;
	}
	if (!t.explained.empty())
		std::printf("documented host differences seen:\n");
	for (const auto &[d, n] : t.explained)
		std::printf("  %s x%llu: %s\n", oracle::to_string(d), (unsigned long long)n, oracle::describe(d));
	std::printf("oracle: %llu programs in %.1f s: %llu agree (%llu up to a documented difference), %llu disagree, "
		    "%llu unsupported, %llu errors, %llu skipped (seed %llu)\n",
		    (unsigned long long)t.programs, secs, (unsigned long long)t.agree, (unsigned long long)t.stopped,
		    (unsigned long long)t.disagree,
		    (unsigned long long)t.unsupported, (unsigned long long)t.errors, (unsigned long long)skipped,
		    (unsigned long long)seed);
	return t.disagree || t.errors ? 1 : 0;
}

}  // namespace fl::cli
