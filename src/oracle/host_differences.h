// SPDX-License-Identifier: GPL-2.0-only
// Differences between the host kernel and the port that are not port bugs:
// the oracle consults this list before it calls a difference a
// disagreement, and prints every entry it used.
#pragma once

#include <string>

#include "check/program.h"
#include "check/trace.h"

namespace fl::oracle {

enum class HostDifference : uint8_t {
	smaps_unmodelled_flags,  // VmFlags the port does not model
};
inline constexpr int kHostDifferences = 1;

const char *to_string(HostDifference);
const char *describe(HostDifference);  // one paragraph: what, and why it is not a port bug

// Rewrites the host's event as the port would print it, if a documented
// difference applies; returns whether it changed anything and which.
bool normalise(const Op &op, Event *host_event, HostDifference *which);

}  // namespace fl::oracle
