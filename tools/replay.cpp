// SPDX-License-Identifier: GPL-2.0-only
#include "replay.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>

#include "check/differential.h"
#include "check/json.h"
#include "check/program_binary.h"
#include "check/program_text.h"
#include "options.h"

namespace fl::cli {

namespace {

// What a Program expects of one configuration ("ok" when nothing matches).
Verdict expected_verdict(const Program &p, const Config &c)
{
	Config any_level = c;  // expectations have no arena condition: the header pins the level
	any_level.arena = ArenaFix::fixed;
	for (const Expectation &e : p.expects)
		if (e.when.matches(any_level)) {
			Verdict v;
			v.kind = e.difference ? Verdict::difference : e.violation != Invariant::none ? Verdict::violation
												      : Verdict::ok;
			v.invariant = e.violation;
			return v;
		}
	return Verdict{};
}

std::string short_verdict(const Verdict &v)
{
	if (v.kind == Verdict::violation)
		return std::string("violation ") + to_string(v.invariant);
	return v.kind == Verdict::difference ? "difference" : "ok";
}

std::vector<Config> configs_of(const Program &p, const Options &o)
{
	std::vector<Config> out;
	ConfigFilter f = o.filter;  // no option narrows the arena level: a Program's header pins it
	f.arena.assign(std::begin(kArenaFixes), std::end(kArenaFixes));
	for (const Config &c : p.configs().expand())
		if (f.matches(c))
			out.push_back(c);
	return out;
}

void print_trace(const Program &p, const Trace &t, const std::vector<std::string> &names)
{
	std::printf("-- %zu configuration%s: %s%s\n", names.size(), names.size() == 1 ? "" : "s",
		    names.front().c_str(), names.size() > 1 ? ", ..." : "");
	if (t.map_ret)
		std::printf("   map: -%s\n", errno_name(-t.map_ret).c_str());
	for (size_t i = 0; i < p.ops.size() && i < t.events.size(); i++)
		std::printf("   %2zu  %s\n", i + 1, format_event(p, p.ops[i], t.events[i]).c_str());
}

}  // namespace

int replay_main(const std::vector<std::string> &args)
{
	Options o = parse_options(args, {"--check-expect", "--quiet"});
	if (o.files.empty())
		throw UsageError("replay needs at least one Program file");
	std::vector<Program> programs;
	for (const std::string &f : o.files)
		programs.push_back(load_program(f));

	bool any_bad = false, any_mismatch = false;
	for (size_t fi = 0; fi < programs.size(); fi++) {
		const Program &p = programs[fi];
		std::vector<Config> configs = configs_of(p, o);
		if (configs.empty())
			throw UsageError(o.files[fi] + ": no configuration left after the filters");
		std::printf("== %s (%zu configurations)\n", o.files[fi].c_str(), configs.size());

		// Identical traces are printed once, with the configurations that gave them.
		std::vector<std::pair<Trace, std::vector<std::string>>> groups;
		std::map<std::string, size_t> diff_counts;
		Verdict first_bad;
		size_t n_ok = 0, n_violation = 0, n_difference = 0;
		for (const Config &c : configs) {
			RunReport r = run_differential(p, c);
			auto g = std::find_if(groups.begin(), groups.end(), [&](auto &x) { return x.first == r.trace; });
			if (g == groups.end())
				groups.push_back({r.trace, {c.name()}});
			else
				g->second.push_back(c.name());
			for (const SeenDifference &d : r.expected_differences)
				diff_counts[to_string(d.what)]++;
			if (r.reference_verdict.kind != Verdict::ok && !o.has("--quiet"))
				std::printf("   %s: reference broke, comparison stopped: %s\n", c.name().c_str(),
					    r.reference_verdict.str().c_str());
			const Verdict &v = r.verdict;
			(v.kind == Verdict::ok ? n_ok : v.kind == Verdict::violation ? n_violation : n_difference)++;
			if (v.kind != Verdict::ok) {
				any_bad = true;
				if (first_bad.kind == Verdict::ok)
					first_bad = v;
				if (!o.has("--quiet"))
					std::printf("   %s: %s: %s\n", c.name().c_str(), v.str().c_str(), v.detail.c_str());
			}
			if (o.has("--check-expect")) {
				Verdict want = expected_verdict(p, c);
				if (!(want == v)) {
					any_mismatch = true;
					std::printf("   MISMATCH %s: expected %s, got %s%s%s\n", c.name().c_str(),
						    short_verdict(want).c_str(), v.str().c_str(),
						    v.detail.empty() ? "" : ": ", v.detail.c_str());
				}
			}
		}
		if (!o.has("--quiet"))
			for (auto &[trace, names] : groups)
				print_trace(p, trace, names);
		for (auto &[name, n] : diff_counts)
			std::printf("   documented difference %s seen %zu time%s\n", name.c_str(), n, n == 1 ? "" : "s");
		std::printf("   configurations: %zu ok, %zu violation, %zu difference\n", n_ok, n_violation, n_difference);
		std::printf("verdict: %s\n", first_bad.str().c_str());
	}
	if (o.has("--check-expect"))
		return any_mismatch ? 1 : 0;
	return any_bad ? 1 : 0;
}

namespace {

// "--json FILE" is the one option with a value besides the filters.
std::string take_json_option(std::vector<std::string> &args)
{
	for (size_t i = 0; i < args.size(); i++) {
		if (args[i] != "--json" && args[i].rfind("--json=", 0) != 0)
			continue;
		std::string file = args[i].size() > 6 ? args[i].substr(7) : (i + 1 < args.size() ? args[i + 1] : "");
		if (file.empty())
			throw UsageError("--json needs a file");
		args.erase(args.begin() + i, args.begin() + i + (args[i].size() > 6 ? 1 : 2));
		return file;
	}
	return "";
}

}  // namespace

// A per-configuration summary over many Programs (patch x arch x door).
// With --json FILE, also every run's verdict and documented differences, for
// faultline verify's report.
int summary_main(const std::vector<std::string> &raw_args)
{
	std::vector<std::string> args = raw_args;
	std::string json_file = take_json_option(args);
	Options o = parse_options(args, {});
	if (o.files.empty())
		throw UsageError("summary needs Program files");
	struct Row { size_t runs = 0, ok = 0, violation = 0, difference = 0, expected_diffs = 0; std::map<std::string, size_t> what; };
	std::map<std::string, Row> rows;
	std::vector<std::string> json_runs;
	size_t mismatches = 0;
	for (const std::string &f : o.files) {
		Program p = load_program(f);
		for (const Config &c : configs_of(p, o)) {
			RunReport r = run_differential(p, c);
			std::string key = std::string(to_string(c.patch)) + "/arch" + to_string(c.arch) + "/" + to_string(c.door);
			Row &row = rows[key];
			row.runs++;
			row.expected_diffs += r.expected_differences.size();
			const Verdict &v = r.verdict;
			if (v.kind == Verdict::ok)
				row.ok++;
			else {
				(v.kind == Verdict::violation ? row.violation : row.difference)++;
				row.what[short_verdict(v)]++;
			}
			bool matches = expected_verdict(p, c) == v;
			if (!matches)
				mismatches++;
			if (!json_file.empty()) {
				std::string diffs;
				for (const SeenDifference &d : r.expected_differences)
					diffs += (diffs.empty() ? "" : ",") + json_string(to_string(d.what));
				json_runs.push_back("{\"file\":" + json_string(f) + ",\"config\":" + json_string(c.name()) +
						    ",\"cell\":" + json_string(key) + ",\"verdict\":" + json_string(short_verdict(v)) +
						    ",\"ops\":" + std::to_string(p.ops.size()) +
						    ",\"matches_expect\":" + (matches ? "true" : "false") +
						    ",\"differences\":[" + diffs + "]}");
			}
		}
	}
	std::printf("%-22s %6s %6s %9s %10s %9s  %s\n", "configuration", "runs", "ok", "violation", "difference",
		    "doc-diffs", "findings");
	for (auto &[key, row] : rows) {
		std::string what;
		for (auto &[w, n] : row.what)
			what += (what.empty() ? "" : ", ") + w + " x" + std::to_string(n);
		std::printf("%-22s %6zu %6zu %9zu %10zu %9zu  %s\n", key.c_str(), row.runs, row.ok, row.violation,
			    row.difference, row.expected_diffs, what.c_str());
	}
	std::printf("programs: %zu, verdicts differing from their files' expectations: %zu\n", o.files.size(), mismatches);
	if (!json_file.empty()) {
		std::ofstream out(json_file);
		out << "[\n";
		for (size_t i = 0; i < json_runs.size(); i++)
			out << json_runs[i] << (i + 1 < json_runs.size() ? ",\n" : "\n");
		out << "]\n";
		if (!out)
			throw UsageError("cannot write " + json_file);
	}
	return mismatches ? 1 : 0;
}

// The Program a fuzzer input decodes to (the `program` target's decoding).
int decode_main(const std::vector<std::string> &args)
{
	Options o = parse_options(args, {});
	if (o.files.empty())
		throw UsageError("decode needs fuzzer input files");
	for (const std::string &f : o.files) {
		std::ifstream in(f, std::ios::binary);
		if (!in)
			throw UsageError("cannot read " + f);
		std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
		std::printf("# %s (%zu bytes)\n%s", f.c_str(), bytes.size(),
			    format_program(decode_program(bytes.data(), bytes.size())).c_str());
	}
	return 0;
}

}  // namespace fl::cli
