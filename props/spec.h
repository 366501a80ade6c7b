// SPDX-License-Identifier: GPL-2.0-only
// The exact specification of the mmap decision for a read-only shared
// mapping of the array map, in exact (overflow-checked) arithmetic (nothing wraps here):
// accept iff [vm_pgoff, vm_pgoff + npages) lies inside the visible data.
// The inputs are what the kernel sees after the syscall ABI narrowed them.
#pragma once

#include <cstdint>

#include "base/config.h"

namespace fl::props {

// The vm_pgoff f_op->mmap sees for a Program pgoff (in pages) through the
// configuration's door, as MachineImpl::mmap narrows it:
//   direct        - (unsigned long)pgoff
//   64-bit anon/regular - sys_mmap's byte offset pgoff << PAGE_SHIFT in a u64
//   32-bit anon/regular - mmap2's 4K units in a 32-bit register
uint64_t delivered_vm_pgoff(const Config &, uint64_t pgoff);
// The length the kernel sees: the 64-bit length narrowed to unsigned long.
uint64_t delivered_len(const Config &, uint64_t len);
// The specification: accept iff vm_pgoff + pages(len) <= visible (len > 0,
// page-multiple).
bool spec_accepts(uint64_t vm_pgoff, uint64_t len, uint64_t visible_pages, unsigned page_shift);

}  // namespace fl::props
