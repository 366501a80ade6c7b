// SPDX-License-Identifier: GPL-2.0-only
#include "check/differences.h"

namespace fl {

const char *to_string(Difference d)
{
	switch (d) {
	case Difference::dontneed_refault: return "dontneed_refault";
	case Difference::vm_mixedmap: return "vm_mixedmap";
	case Difference::populate_timing: return "populate_timing";
	}
	return "?";
}

const char *describe(Difference d)
{
	switch (d) {
	case Difference::dontneed_refault:
		return "After MADV_DONTNEED zaps a page, the eager mapping has no .fault handler and the "
		       "next access SIGBUSes (do_fault: 'The VMA was not fully populated on mmap()'); the "
		       "lazy mapping refaults the same vmalloc page with its data intact. See docs/vma.md#fork; "
		       "seen on Debian 6.1 stock vs v2 kernels (docs/real-kernels.md#what-the-guest-checks).";
	case Difference::vm_mixedmap:
		return "vm_insert_page() sets VM_MIXEDMAP on eager VMAs; lazy VMAs never get it. smaps "
		       "VmFlags shows 'mm' only for eager mappings, and fork copies PTEs only for them "
		       "(vma_needs_copy); lazy children refault. See docs/vmalloc.md#remap_vmalloc_range, docs/vma.md#fork.";
	case Difference::populate_timing:
		return "The eager mapping has every PTE at mmap time; lazy mappings fill PTEs on first "
		       "touch, by MAP_POPULATE (read faults) or, in v3, a fault-around window at a time. "
		       "smaps Rss differs; the data never does. See docs/mmap.md#map_populate, docs/fault.md#fault-around.";
	}
	return "";
}

}  // namespace fl
