// SPDX-License-Identifier: GPL-2.0-only
// include/linux/pagemap.h: the one helper of it the port calls. Apart from
// mm.h because a planted slip lives in it (smt/mutants/linear_index_u32):
// only its callers' preprocessed text depends on FL_PLANT_LINEAR_INDEX_U32,
// so ccache shares every other object of the mutant's port with the real one.
#pragma once

#include "mm.h"

namespace fl::FL_ARCH_NS {

// include/linux/pagemap.h: linear_page_index (non-hugetlb).
inline pgoff_t linear_page_index(const vm_area_struct *vma, ulong address)
{
	pgoff_t pgoff;
#if defined(FL_PLANT_LINEAR_INDEX_U32)
	/* planted slip (test-only build, -DFL_PLANT=linear_index_u32): the
	 * offset into the VMA in u32, so a fault 4 GiB or more past vm_start
	 * gets the page 4 GiB before it */
	pgoff = (u32)(address - vma->vm_start) >> PAGE_SHIFT;
#else
	pgoff = (address - vma->vm_start) >> PAGE_SHIFT;
#endif
	pgoff += vma->vm_pgoff;
	return pgoff;
}

}  // namespace fl::FL_ARCH_NS
