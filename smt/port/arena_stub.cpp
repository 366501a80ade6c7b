// SPDX-License-Identifier: GPL-2.0-only
// Not kernel: the symbolic build leaves the arena out (kernel/bpf/arena.cpp
// is not part of the array-map obligations); map_create names its ops table.
#include "bpf.h"

namespace fl::FL_ARCH_NS {

const bpf_map_ops arena_map_ops = {};

}  // namespace fl::FL_ARCH_NS
