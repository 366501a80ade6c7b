// SPDX-License-Identifier: GPL-2.0-only
// The two bpf(2) map creations the bench needs, as raw syscalls (no libbpf).
#pragma once

#include <cstdint>
#include <string>

namespace fl::bench {

// BPF_MAP_TYPE_ARRAY, key 4, value 8, BPF_F_MMAPABLE. Returns the fd or -errno.
int bpf_create_mmapable_array(uint32_t max_entries);
// BPF_MAP_TYPE_ARENA (33; Debian's 6.1 headers lack it) of `pages` pages,
// BPF_F_MMAPABLE. Returns the fd or -errno.
int bpf_create_arena(uint32_t pages);
// true + reason when bpf(2) works here but the host refuses arena maps
// (the oracle's probe, host_arena_available: real/host_executor.h).
bool host_refuses_arena(std::string *reason);

}  // namespace fl::bench
