// SPDX-License-Identifier: GPL-2.0-only
// The configuration a fuzz binary is built for: one binary per
// configuration (-DFL_FUZZ_CONFIG="v2/arch32/4k/direct/mask", or a prefix
// of it), so OSS-Fuzz/ClusterFuzz can run them unchanged.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "base/config.h"

#ifndef FL_FUZZ_CONFIG
#error "build fuzz targets with -DFL_FUZZ_CONFIG=\"patch/archNN/page/door/spec\""
#endif

namespace fl::fuzz {

// Parses "v2/arch32[/4k[/direct[/mask[/fork_uaf|threads|toctou_2021]]]]"; missing parts take defaults
// (4k, anon, mask). Exits on a bad string: the binary was built wrong.
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
	if (!ok || i < 2) {
		std::fprintf(stderr, "faultline fuzz: bad FL_FUZZ_CONFIG '%s'\n", s.c_str());
		std::exit(2);
	}
	return c;
}

inline const Config &build_config()
{
	static const Config c = parse_config(FL_FUZZ_CONFIG);
	return c;
}

// The program target's concurrent form: the config ends in "threads" (the
// fixed kernel) or names a historical level ("toctou_2021", ...).
inline bool build_concurrent()
{
	static const bool threads = [] {
		const std::string s = FL_FUZZ_CONFIG;
		const std::string last = s.substr(s.find_last_of('/') + 1);
		return last == "threads" || parse_historic(last).has_value();
	}();
	return threads;
}

}  // namespace fl::fuzz
