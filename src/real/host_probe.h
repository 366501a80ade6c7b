// SPDX-License-Identifier: GPL-2.0-only
// What the host executor checks before it runs anything: whether bpf(2) and
// mmap of a BPF map work here, which spec_v1 behaviour the kernel has, and
// whether a map is small enough to allocate for real.
#pragma once

#include <string>

#include "sim/machine.h"

namespace fl::real {

// The host allocates at most this much for one map: the machine's RAM
// (sim/arch/machine_impl.cpp kTotalRam). A bigger map fails with ENOMEM
// on the machine but could succeed here, so comparing it means nothing,
// and allocating it for real would starve the other jobs on the box.
inline constexpr uint64_t kMaxHostMapBytes = uint64_t(1) << 30;

// false + reason when array_map_alloc() would allocate more than
// kMaxHostMapBytes yet fit in the host's RAM (a bigger request fails fast
// with ENOMEM in vmalloc, as on the machine, and is allowed).
bool map_size_allowed(const MapSpec &, std::string *reason);

}  // namespace fl::real
