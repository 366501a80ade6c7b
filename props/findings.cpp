// SPDX-License-Identifier: GPL-2.0-only
#include "props/findings.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/fnv.h"
#include "check/differential.h"
#include "check/program_text.h"

namespace fl::props {

Program pin_config(const Program &p, const Config &cfg)
{
	Program out = p;
	out.header.arch = cfg.arch;
	out.header.patch = cfg.patch;
	out.header.page_shift = cfg.page_shift;
	out.header.door = cfg.door;
	out.header.bypass_spec_v1 = cfg.bypass_spec_v1;
	return out;
}

Program pin(const Program &p, const Config &cfg)
{
	Program out = pin_config(p, cfg);
	out.expects.clear();
	Verdict v = run_differential(out, cfg).verdict;
	Expectation e;  // an empty ConfigFilter-less "expect ..." applies to the pinned config
	e.violation = v.kind == Verdict::violation ? v.invariant : Invariant::none;
	e.difference = v.kind == Verdict::difference;
	out.expects.push_back(e);
	return out;
}

std::string export_finding(const Program &p, const Config &cfg, const std::string &property,
			   const std::string &comment)
{
	Program pinned = pin(p, cfg);
	std::string text = format_program(pinned);
	uint64_t h = fnv1a(text);  // the same counterexample, the same name
	std::string cfgname = std::string(to_string(cfg.patch)) + "-arch" +
			      (cfg.arch == Arch::A32 ? "32" : "64") + "-" + to_string(cfg.door);
	char hash[16];
	std::snprintf(hash, sizeof hash, "%010llx", (unsigned long long)(h & 0xffffffffffull));
	// FL_FINDINGS_DIR: where faultline verify collects a run's findings
	// (the shipped corpora/findings/ stays as reviewed); else corpora/findings/,
	// or a planted build's own findings/ (props/CMakeLists.txt)
	const char *env = std::getenv("FL_FINDINGS_DIR");
	std::filesystem::path dir = env && *env ? std::filesystem::path(env) : std::filesystem::path(FL_FINDINGS_DEFAULT);
	std::filesystem::path file = dir / ("props-" + property + "-" + cfgname + "-" + hash + ".fl");
	std::error_code ec;
	std::filesystem::create_directories(dir, ec);
	std::ofstream out(file);
	if (!out)
		return "";
	out << "# found by RapidCheck property " << property << " on " << cfg.name() << "\n";
	std::istringstream lines(comment);
	for (std::string line; std::getline(lines, line);)
		out << "# " << line << "\n";
	out << text;
	return out ? file.string() : "";
}

}  // namespace fl::props
