// SPDX-License-Identifier: GPL-2.0-only
// Differences between the host kernel and the port that are not port bugs:
// the oracle consults this list before it calls a difference a
// disagreement, and prints every entry it used.
#pragma once

#include <optional>
#include <string>

#include "check/program.h"
#include "sim/machine.h"

namespace fl::oracle {

enum class HostDifference : uint8_t {
	anon_vma_merge,          // the host merged adjacent anonymous VMAs; the port never merges
	anon_pages_unmodelled,   // the port has no anonymous pages: loads/stores there SIGSEGV
	mremap_multi_vma,        // 6.17+ mremap moves/shrinks ranges spanning several VMAs
};
inline constexpr int kHostDifferences = 3;

const char *to_string(HostDifference);
const char *describe(HostDifference);  // one paragraph: what, and why it is not a port bug

// Whether `op`, about to run on `m` with its address resolved to `addr`,
// reaches what the port leaves out on purpose: a boundary between two
// adjacent anonymous VMAs the host would have merged (anon_vma_merge), an
// anonymous page (anon_pages_unmodelled), or an mremap move or shrink of a
// range that spans more than one VMA (mremap_multi_vma). Anonymous = no "de": every
// BPF map VMA is VM_DONTEXPAND. A difference at such an op ends the
// comparison: the two sides no longer hold the same state.
std::optional<HostDifference> port_scope(const Machine &m, const Op &op, uint64_t addr, unsigned page_shift);

}  // namespace fl::oracle
