// SPDX-License-Identifier: GPL-2.0-only
// What the host executor checks before it runs anything: whether bpf(2) and
// mmap of a BPF map work here, which spec_v1 behaviour the kernel has, and
// whether a map is small enough to allocate for real.
#pragma once

#include <string>

#include "sim/machine.h"

namespace fl::real {

// The host allocates at most this much for one map: allocating more for real
// would starve the other jobs on the box.
inline constexpr uint64_t kMaxHostMapBytes = uint64_t(1) << 30;

// false + reason when array_map_alloc() would allocate more than
// kMaxHostMapBytes and the outcome is not the machine's: the map fits in the
// host's RAM (it would be allocated for real) or in the machine's RAM of
// this width (kMachineRam*: the machine allocates it, the host fails with
// ENOMEM). A map too big for both fails fast with ENOMEM on both and is allowed.
bool map_size_allowed(const MapSpec &, std::string *reason);

}  // namespace fl::real
