// SPDX-License-Identifier: GPL-2.0-only
// Names of the configuration axes, as they appear in program headers,
// expectations, traces and report tables.
#include "base/config.h"

#include <algorithm>
#include <cctype>

namespace fl {

std::string Config::name() const
{
	std::string s = to_string(patch);
	s += "/arch";
	s += to_string(arch);
	s += '/';
	s += page_size_name(page_shift);
	s += '/';
	s += to_string(door);
	s += bypass_spec_v1 ? "/bypass" : "/mask";
	if (historic != Historic::none)
		s += std::string("/") + to_string(historic);
	if (arena != ArenaFix::fixed)
		s += std::string("/arena-") + to_string(arena);
	return s;
}

const char *to_string(Arch a)
{
	switch (a) {
	case Arch::A32: return "32";
	case Arch::A64: return "64";
	}
	return "?";
}

const char *to_string(Patch p)
{
	switch (p) {
	case Patch::pre: return "pre";
	case Patch::v1: return "v1";
	case Patch::v2: return "v2";
	case Patch::v3: return "v3";
	}
	return "?";
}

const char *to_string(Door d)
{
	switch (d) {
	case Door::anon: return "anon";
	case Door::regular: return "regular";
	case Door::direct: return "direct";
	}
	return "?";
}

const char *to_string(Historic h)
{
	switch (h) {
	case Historic::none: return "none";
	case Historic::toctou_2021: return "toctou_2021";
	case Historic::freeze_mutex_2025: return "freeze_mutex_2025";
	case Historic::finish_fault_put: return "finish_fault_put";
	}
	return "?";
}

const char *to_string(ArenaFix f)
{
	switch (f) {
	case ArenaFix::fixed: return "fixed";
	case ArenaFix::fork_uaf: return "fork_uaf";
	case ArenaFix::mremap_uaf: return "mremap_uaf";
	}
	return "?";
}

std::optional<Historic> parse_historic(const std::string &s)
{
	if (s == "none")
		return Historic::none;
	for (Historic h : kHistorics)
		if (s == to_string(h))
			return h;
	return std::nullopt;
}

std::optional<ArenaFix> parse_arena_fix(const std::string &s)
{
	for (ArenaFix f : kArenaFixes)
		if (s == to_string(f))
			return f;
	return std::nullopt;
}

std::optional<Arch> parse_arch(const std::string &s)
{
	if (s == "32" || s == "arch32")
		return Arch::A32;
	if (s == "64" || s == "arch64")
		return Arch::A64;
	return std::nullopt;
}

std::optional<Patch> parse_patch(const std::string &s)
{
	for (Patch p : kPatches)
		if (s == to_string(p))
			return p;
	return std::nullopt;
}

std::optional<Door> parse_door(const std::string &s)
{
	for (Door d : kDoors)
		if (s == to_string(d))
			return d;
	return std::nullopt;
}

std::optional<unsigned> parse_page_shift(const std::string &s)
{
	std::string l = s;
	std::transform(l.begin(), l.end(), l.begin(),
		       [](unsigned char c) { return char(std::tolower(c)); });
	if (l == "4k" || l == "4096")
		return 12u;
	if (l == "16k" || l == "16384")
		return 14u;
	if (l == "64k" || l == "65536")
		return 16u;
	return std::nullopt;
}

std::string page_size_name(unsigned page_shift)
{
	// Only 4k/16k/64k are configurations; anything else still gets a
	// readable (if unparsable) name rather than a crash in a report.
	if (page_shift >= 10 && page_shift < 64)
		return std::to_string(uint64_t(1) << (page_shift - 10)) + "k";
	if (page_shift < 10)
		return std::to_string(1u << page_shift);
	return "?";
}

std::vector<Config> ConfigFilter::expand() const
{
	std::vector<Config> out;
	for (Patch p : patches)
		for (Arch a : arches)
			for (unsigned s : page_shifts)
				for (Door d : doors)
					for (bool b : spec_v1)
						for (Historic h : historics)
							for (ArenaFix f : arena)
								out.push_back(Config{a, p, s, d, b, h, f});
	return out;
}

bool ConfigFilter::matches(const Config &c) const
{
	auto in = [](const auto &v, const auto &x) {
		return std::find(v.begin(), v.end(), x) != v.end();
	};
	return in(arches, c.arch) && in(patches, c.patch) && in(page_shifts, c.page_shift) &&
	       in(doors, c.door) && in(spec_v1, c.bypass_spec_v1) && in(historics, c.historic) &&
	       in(arena, c.arena);
}

}  // namespace fl
