// SPDX-License-Identifier: GPL-2.0-only
// `faultline kernels diff`: a stock and a patched real kernel's traces of the
// same Program, compared directly (no port involved). The only differences
// allowed are the documented eager/lazy ones (src/check/differences.h),
// recognised from the two traces alone:
//   vm_mixedmap      smaps: the flags differ only by the stock side's " mm";
//   populate_timing  smaps: the Rss differs;
//   dontneed_refault a load/store SIGBUSes on stock but not on the patched
//                    kernel, after an MADV_DONTNEED both accepted (stock's
//                    zapped VM_MIXEDMAP page stays gone; the lazy one
//                    refaults). After a store that landed only on the
//                    patched side the data differ: the comparison stops.
#pragma once

#include <string>
#include <vector>

#include "check/differences.h"
#include "check/program.h"
#include "check/trace.h"

namespace fl::kernels {

struct KernelDiff {
	bool agree = true;     // no difference but named ones
	bool stopped = false;  // the comparison ended at op `op` (a store-refault)
	size_t op = 0;         // 0-based: the first unexplained (or stopping) op; kMapCreate for BPF_MAP_CREATE
	std::vector<std::pair<size_t, Difference>> named;
	static constexpr size_t kMapCreate = size_t(-1);
};

KernelDiff diff_kernels(const Program &p, const Trace &stock, const Trace &patched);

}  // namespace fl::kernels
