// SPDX-License-Identifier: GPL-2.0-only
// What a QEMU guest kernel is, in the port's terms, and which Programs it can
// answer for: the guest runs 4K pages, mmap(2) through today's anon inode
// (door anon), and root or root without CAP_PERFMON (spec bypass or mask).
#pragma once

#include <optional>
#include <string>

#include "check/program.h"

namespace fl::kernels {

// The guest's configuration for `p`: arch/patch from the kernel, page 4k,
// door anon, spec_v1 as the Program pins it (bypass, root's default, if not).
// nullopt when the Program's header excludes this kernel altogether, or when
// it needs a map the guest's 6.1 lacks (an arena: 6.9+).
std::optional<Config> guest_config(const Program &p, Arch arch, Patch patch);

// "v2/arch32/4k/anon/bypass" back into a Config (Config::name()'s inverse).
std::optional<Config> parse_config_name(const std::string &name);

}  // namespace fl::kernels
