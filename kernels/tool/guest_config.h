// SPDX-License-Identifier: GPL-2.0-only
// What a QEMU guest kernel is, in the port's terms, and which Programs it can
// answer for: the guest runs 4K pages, mmap(2) through today's anon inode
// (door anon), and root or root without CAP_PERFMON (spec bypass or mask).
#pragma once

#include <compare>
#include <optional>
#include <string>

#include "check/program.h"

namespace fl::kernels {

// The guest's kernel release (Debian's linux-source-6.12 or -6.1): which
// maps it has and which documented differences from upstream it still shows.
struct GuestKernel {
	int major = 6, minor = 12;
	auto operator<=>(const GuestKernel &) const = default;
};

// "6.12", "6.12.117-1~deb12u1", or a recorded KERNEL line such as
// "linux-source-6.1 6.1.192-3 x86_64, tree ..." (the first "N.M" in it).
std::optional<GuestKernel> parse_guest_kernel(const std::string &text);
std::string to_string(GuestKernel k);

// The guest's configuration for `p`: arch/patch from the kernel, page 4k,
// door anon, spec_v1 as the Program pins it (bypass, root's default, if not).
// nullopt when the Program's header excludes this kernel altogether, or when
// it needs a map the guest lacks (an arena: 6.9+, and 64-bit only).
std::optional<Config> guest_config(const Program &p, Arch arch, Patch patch, GuestKernel k);

// "v2/arch32/4k/anon/bypass" back into a Config (Config::name()'s inverse).
std::optional<Config> parse_config_name(const std::string &name);

}  // namespace fl::kernels
