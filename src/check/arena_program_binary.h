// SPDX-License-Identifier: GPL-2.0-only
// The fuzzers' and the oracle's form of an arena Program (a
// BPF_MAP_TYPE_ARENA map and user-space ops on its mapping): any byte string
// decodes, deterministically. `kfuncs` adds the arena kfunc ops, which only
// the port can run (the host needs a BPF program for them).
#pragma once

#include <cstddef>
#include <cstdint>

#include "check/program.h"

namespace fl {

Program decode_arena_program(const uint8_t *data, size_t size, bool kfuncs);

inline constexpr int kMaxArenaOps = 24;

}  // namespace fl
