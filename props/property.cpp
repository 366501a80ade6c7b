// SPDX-License-Identifier: GPL-2.0-only
#include "props/property.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <rapidcheck/detail/Results.h>
#include <rapidcheck/detail/TestMetadata.h>

#include "check/differential.h"
#include "props/findings.h"

namespace fl::props {
namespace {

struct Noted {
	Program program;
	Config config;
};
std::optional<Noted> g_noted;

bool env_set(const char *name)
{
	const char *v = std::getenv(name);
	return v && *v && std::string(v) != "0";
}

// A failure on a known-broken configuration is assumption-dependent when
// the same Program is fine through the `anon` door (today's anon inode:
// do_mmap's offset checks with maxsize ULONG_MAX), i.e. it needs a vm_pgoff
// that mmap(2) on an anon inode cannot deliver.
std::string classify(const Program &p, const Config &cfg)
{
	if (!known_broken(cfg))
		return "";
	Config anon = cfg;
	anon.door = Door::anon;
	Verdict v = run_differential(p, anon).verdict;
	if (v.kind != Verdict::ok)
		return "";
	return std::string("assumption-dependent: ") + to_string(cfg.door) +
	       " door only (the same Program is ok through anon: " + anon.name() + ")";
}

}  // namespace

std::vector<Config> all_configs()
{
	std::vector<Config> out;
	for (Patch p : kPatches)
		for (Arch a : kArches)
			for (Door d : kDoors) {
				Config c;
				c.patch = p;
				c.arch = a;
				c.door = d;
				c.page_shift = 12;
				out.push_back(c);
			}
	return out;
}

std::string config_test_name(const Config &c)
{
	return std::string(to_string(c.patch)) + (c.arch == Arch::A32 ? "_arch32_" : "_arch64_") + to_string(c.door);
}

bool known_broken(const Config &c)
{
	return c.door == Door::direct || (c.patch == Patch::v1 && c.arch == Arch::A32 && c.door == Door::regular);
}

void note_failing_case(const Program &p, const Config &cfg)
{
	g_noted = Noted{p, cfg};
}

void dump_case(const std::string &property, const Program &p, const Config &cfg)
{
	static const char *dir = std::getenv("FL_PROPS_DUMP_DIR");
	static uint64_t n = 0;
	if (!dir || !*dir)
		return;
	std::ofstream(std::string(dir) + "/" + property + "-" + config_test_name(cfg) + "-" + std::to_string(n++) + ".fl")
		<< format_program(pin_config(p, cfg));
}

void check_property(const std::string &property, const Config &cfg, std::function<void()> prop)
{
	using namespace rc::detail;
	const auto *info = testing::UnitTest::GetInstance()->current_test_info();
	TestMetadata md;
	md.id = std::string(info->test_suite_name()) + "/" + info->name();
	md.description = md.id;
	g_noted.reset();
	std::cout << "- " << md.id << " (" << cfg.name() << ")" << std::endl;
	TestResult result = checkTestable(prop, md);
	std::ostringstream report;
	printResultMessage(result, report);
	std::cout << report.str() << std::endl;

	FailureResult failure;
	if (!result.match(failure)) {
		EXPECT_TRUE(result.template is<SuccessResult>()) << report.str();
		return;
	}
	if (!g_noted) {
		ADD_FAILURE() << "property failed without a noted Program (an exception?)\n" << report.str();
		return;
	}
	std::string why = classify(g_noted->program, cfg);
	bool strict = env_set("FL_PROPS_STRICT");
	std::cout << "tests to failure: " << failure.numSuccess + 1 << "\n";
	if (!why.empty())
		std::cout << "classified: " << why << "\n";
	if (why.empty() || strict || !env_set("FL_PROPS_NO_EXPORT")) {
		std::string comment = "after " + std::to_string(failure.numSuccess + 1) + " tests, shrunk\n" +
				      (why.empty() ? std::string("unclassified: a defect of this level?") : why) +
				      "\n" + failure.description;
		std::string path = export_finding(g_noted->program, cfg, property, comment.substr(0, 2000));
		std::cout << "counterexample written to " << (path.empty() ? "(write failed)" : path) << std::endl;
	}
	if (why.empty() || strict)
		ADD_FAILURE() << property << " falsified on " << cfg.name() << "\n" << report.str();
}

}  // namespace fl::props
