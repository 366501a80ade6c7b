// SPDX-License-Identifier: GPL-2.0-only
// The oracle: a Program on the host kernel (src/real) against the port at
// the host's configuration (pre, Arch64, the host's page size, anon front
// door, the host's spec_v1 behaviour), compared op by op, exactly; the
// documented host-kernel differences (host_differences.h) are consulted
// before a difference counts as a disagreement.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/trace.h"
#include "oracle/host_differences.h"
#include "base/config.h"

namespace fl::oracle {

// The port configuration that the host kernel is: nullopt + reason when
// bpf(2) is not available (so neither is the spec_v1 probe).
std::optional<Config> host_config(std::string *reason);

// Runs `p` on the port; the Trace only (invariants are replay's job).
// `scope`, when given, gets port_scope() of every op, taken just before
// the op runs.
using Scope = std::vector<std::optional<HostDifference>>;
Trace run_port(const Program &p, const Config &cfg, Scope *scope = nullptr);

struct Comparison {
	bool agree = true;
	bool stopped = false;  // at op `op`, by a difference outside the port's scope (port_scope)
	// The first op (0-based) whose events differ in a way no documented
	// host difference explains; kMapCreate when BPF_MAP_CREATE differs.
	size_t op = 0;
	std::vector<HostDifference> explained;  // the documented difference that ended the comparison
	static constexpr size_t kMapCreate = size_t(-1);
};

Comparison compare(const Program &p, const Trace &port, const Trace &host,
		   const Scope *scope = nullptr);

// The outcome of one Program on both sides.
struct Outcome {
	// skipped: the host cannot run it at all (e.g. an arena Program on a
	// host that refuses arena maps); neither side ran, nothing is compared.
	enum Kind { agree, disagree, unsupported, skipped, error } kind = agree;
	std::string reason;  // unsupported / skipped / error: the executor's reason
	Trace port, host;
	Comparison cmp;
};

// The host side is a parameter so that tests can substitute it.
using HostRunner = std::function<std::optional<Trace>(const Program &, std::string *)>;

Outcome run_both(const Program &p, const Config &cfg, const HostRunner &host);

// Drops ops (last first, repeatedly) while the Program still disagrees.
Program minimise(const Program &p, const Config &cfg, const HostRunner &host);

// Both traces side by side, one op a line, differing lines marked "<<".
std::string side_by_side(const Program &p, const Trace &port, const Trace &host);

}  // namespace fl::oracle
