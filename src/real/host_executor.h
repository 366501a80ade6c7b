// SPDX-License-Identifier: GPL-2.0-only
// The host-kernel executor: runs a Program against the running kernel's
// real BPF_MAP_TYPE_ARRAY (BPF_F_MMAPABLE) through raw bpf(2), mmap(2) and
// friends, and returns the same Trace the machine produces.
//
// Depends only on the Program/Trace vocabulary (src/check/program.h,
// trace.h) and libc: no libbpf, no simulator, so it links with -static and
// -m32 -static for the QEMU guest runners. Every Program runs in a forked
// process tree of its own; loads and stores that fault are captured as
// SIGBUS/SIGSEGV events, and a wild op cannot hurt the caller.
#pragma once

#include <optional>
#include <string>

#include "check/trace.h"

namespace fl {

// Cheap probe: can this process create an mmapable BPF array and mmap it?
// false + reason (e.g. "bpf(BPF_MAP_CREATE): Operation not permitted")
// when not; the reason is one line, without a "skipped:" prefix.
bool host_bpf_available(std::string *reason);

// Whether this process can create a BPF_MAP_TYPE_ARENA (4 pages,
// BPF_F_MMAPABLE): probed once, on first use. false + a one-line reason
// ("the host refuses BPF_MAP_TYPE_ARENA (-EPERM)", or host_bpf_available's)
// when not. Setting kRefuseArenaEnv (to anything) makes it false without a
// probe: the tests of every arena skip path use it.
inline constexpr const char *kRefuseArenaEnv = "FL_HOST_REFUSE_ARENA";
bool host_arena_available(std::string *reason);

// Whether this kernel's array_map_alloc() skips the Spectre-v1 rounding of
// the allocation to a power of two (bpf_bypass_spec_v1: CAP_PERFMON or
// mitigations=off), found by a probe the two behaviours answer differently
// (host_probe.cpp). nullopt + reason when bpf(2) is not available.
std::optional<bool> host_bypass_spec_v1(std::string *reason);

// Runs `p` on the host kernel at the host's page size. Addresses are
// placed in a region the executor reserved first (the Program's labels
// map into it the way the machine's top-down allocator lays them out).
// nullopt + a one-line reason when it cannot be run here; the reason starts
// with one of
//   "skipped: "      bpf(2) or mmap of a BPF map is not permitted, or the
//                    Program's map is an arena and host_arena_available() is false,
//   "unsupported: "  an op would reach outside the executor's region,
//   "error: "        the process tree died or hung.
std::optional<Trace> run_on_host(const Program &p, std::string *skip_reason);

}  // namespace fl
