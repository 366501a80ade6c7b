// SPDX-License-Identifier: GPL-2.0-only
#include "guest_config.h"

#include <cctype>
#include <cstdio>
#include <sstream>
#include <vector>

namespace fl::kernels {

std::optional<GuestKernel> parse_guest_kernel(const std::string &text)
{
	for (size_t i = 0; i < text.size(); i++) {
		int major = 0, minor = 0, used = 0;
		if ((i == 0 || !std::isdigit((unsigned char)text[i - 1])) &&
		    std::sscanf(text.c_str() + i, "%d.%d%n", &major, &minor, &used) == 2 && major > 0)
			return GuestKernel{major, minor};
	}
	return std::nullopt;
}

std::string to_string(GuestKernel k)
{
	return std::to_string(k.major) + "." + std::to_string(k.minor);
}

std::optional<Config> guest_config(const Program &p, Arch arch, Patch patch, GuestKernel k)
{
	/* BPF_MAP_TYPE_ARENA arrived in 6.9, and kernel/bpf/Makefile builds arena.o only with CONFIG_64BIT */
	if (p.map.map_type == uapi::BPF_MAP_TYPE_ARENA && (k < GuestKernel{6, 9} || arch != Arch::A64))
		return std::nullopt;
	Config c;
	c.arch = arch;
	c.patch = patch;
	c.page_shift = 12;
	c.door = Door::anon;
	c.bypass_spec_v1 = !p.header.bypass_spec_v1.has_value() || *p.header.bypass_spec_v1;
	if (!p.configs().matches(c))
		return std::nullopt;
	return c;
}

std::optional<Config> parse_config_name(const std::string &name)
{
	std::vector<std::string> part;
	std::stringstream in(name);
	for (std::string s; std::getline(in, s, '/');)
		part.push_back(s);
	if (part.size() != 5 || part[1].rfind("arch", 0) != 0)
		return std::nullopt;
	auto patch = parse_patch(part[0]);
	auto arch = parse_arch(part[1].substr(4));
	auto page = parse_page_shift(part[2]);
	auto door = parse_door(part[3]);
	if (!patch || !arch || !page || !door || (part[4] != "mask" && part[4] != "bypass"))
		return std::nullopt;
	return Config{*arch, *patch, *page, *door, part[4] == "bypass"};
}

}  // namespace fl::kernels
