// SPDX-License-Identifier: GPL-2.0-only
// Trace: what user space observed at each op of a Program. Addresses never
// appear (mappings are labels), so traces from the machine, the host kernel
// and QEMU guests compare directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check/program.h"

namespace fl {

struct Event {
	int64_t ret = 0;            // return value (>= 0) or -errno
	int sig = 0;                // SIGBUS / SIGSEGV raised by a load or store
	std::vector<uint8_t> data;  // loaded bytes, or the looked-up value
	std::string info;           // smaps: "VmFlags ... | rss N"; skipped ops: why
	bool operator==(const Event &) const = default;
};

struct Trace {
	int64_t map_ret = 0;  // BPF_MAP_CREATE: 0 or -errno
	std::vector<Event> events;
	bool operator==(const Trace &) const = default;
};

std::string errno_name(int64_t err);  // 22 -> "EINVAL"
// One line: the op as text, then what user space saw.
std::string format_event(const Program &, const Op &, const Event &);
std::string format_result(const Op &, const Event &);

}  // namespace fl
