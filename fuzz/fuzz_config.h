// SPDX-License-Identifier: GPL-2.0-only
// The configuration a fuzz binary runs, chosen at run time: each target is
// compiled and linked once per engine, and fuzz/build.sh gives that one
// binary a name per configuration (hard links), so OSS-Fuzz/ClusterFuzz
// still see one target per configuration while the port and the target are
// compiled once instead of once per configuration (issue 36).
//
//   program-v2-arch32-direct           v2/arch32/4k/direct/mask
//   program-v2-arch64-anon-threads     v2/arch64/4k/anon/mask/threads (or a historic level)
//   bounds-v1-arch32                   v1/arch32 (door, page, spec come from the input)
//   arena-pre-arch64-anon-fork_uaf     pre/arch64/4k/anon/mask/fork_uaf
//   buddy-series                       series (the libarena level)
//
// FL_FUZZ_CONFIG in the environment ("v2/arch32/16k/direct/bypass", or the
// level for buddy) wins over the name: it reaches the page sizes and the
// Spectre-v1 bypass that the names leave at 4k/mask.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "base/config.h"

namespace fl::fuzz {

// Exits 2 naming what it could not read: the binary was named or run wrong.
[[noreturn]] inline void bad_config(const std::string &what)
{
	std::fprintf(stderr,
		     "faultline fuzz: %s\n"
		     "  name the binary program-<patch>-arch<32|64>-<door>[-threads|-<historic>], bounds-<patch>-arch<NN>,\n"
		     "  arena-<patch>-arch<NN>-<door>-<arena level> or buddy-<level> (fuzz/build.sh makes these),\n"
		     "  or set FL_FUZZ_CONFIG=patch/archNN/page/door/spec[/level]\n",
		     what.c_str());
	std::exit(2);
}

// "program-v2-arch64-anon-threads" -> "v2/arch64/4k/anon/mask/threads": the
// words after the target's own, with the page size and spec the names leave out.
inline std::string config_of_name(const std::string &name)
{
	std::vector<std::string> w;
	std::stringstream ss(name);
	for (std::string part; std::getline(ss, part, '-');)
		w.push_back(part);
	if (w.size() < 2 || w.size() > 5)
		bad_config("cannot tell the configuration from the binary's name '" + name + "'");
	std::string c = w[1];  // the patch, or the buddy level
	if (w.size() > 2)
		c += "/" + w[2];
	if (w.size() > 3)
		c += "/4k/" + w[3] + "/mask";
	if (w.size() > 4)
		c += "/" + w[4];
	return c;
}

// The configuration's text and where it came from, printed once so that a
// run's log says what it fuzzed.
inline const std::string &config_text()
{
	static const std::string text = [] {
		const char *env = std::getenv("FL_FUZZ_CONFIG");
		const std::string name = program_invocation_short_name;
		std::string t = env && *env ? env : config_of_name(name);
		std::fprintf(stderr, "faultline fuzz: configuration %s (%s)\n", t.c_str(),
			     env && *env ? "FL_FUZZ_CONFIG" : ("from the name " + name).c_str());
		return t;
	}();
	return text;
}

// Parses "v2/arch32[/4k[/direct[/mask[/fork_uaf|threads|toctou_2021]]]]"; missing parts take defaults
// (4k, anon, mask).
inline Config parse_config(const std::string &s)
{
	Config c;
	std::stringstream ss(s);
	std::string part;
	int i = 0;
	bool ok = true;
	while (std::getline(ss, part, '/')) {
		switch (i++) {
		case 0: if (auto v = parse_patch(part)) c.patch = *v; else ok = false; break;
		case 1: if (auto v = parse_arch(part)) c.arch = *v; else ok = false; break;
		case 2: if (auto v = parse_page_shift(part)) c.page_shift = *v; else ok = false; break;
		case 3: if (auto v = parse_door(part)) c.door = *v; else ok = false; break;
		case 4: if (part == "mask" || part == "bypass") c.bypass_spec_v1 = part == "bypass"; else ok = false; break;
		case 5:  // arena targets: the arena level; program targets: threads or a historic level
			if (auto v = parse_arena_fix(part))
				c.arena = *v;
			else if (auto h = parse_historic(part))
				c.historic = *h;
			else if (part != "threads")
				ok = false;
			break;
		default: ok = false;
		}
	}
	if (!ok || i < 2)
		bad_config("bad configuration '" + s + "'");
	return c;
}

inline const Config &build_config()
{
	static const Config c = parse_config(config_text());
	return c;
}

// The program target's concurrent form: the config ends in "threads" (the
// fixed kernel) or names a historical level ("toctou_2021", ...).
inline bool build_concurrent()
{
	static const bool threads = [] {
		const std::string &s = config_text();
		const std::string last = s.substr(s.find_last_of('/') + 1);
		return last == "threads" || parse_historic(last).has_value();
	}();
	return threads;
}

}  // namespace fl::fuzz
