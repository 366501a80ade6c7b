// SPDX-License-Identifier: GPL-2.0-only
#include "props/spec.h"

namespace fl::props {

static uint64_t narrow(const Config &c, uint64_t v)
{
	return c.arch == Arch::A32 ? uint64_t(uint32_t(v)) : v;
}

uint64_t delivered_vm_pgoff(const Config &c, uint64_t pgoff)
{
	if (c.door == Door::direct)
		return narrow(c, pgoff);
	if (c.arch == Arch::A64)
		return (pgoff << c.page_shift) >> c.page_shift;
	unsigned shift = c.page_shift - 12;  // mmap2 units are 4K whatever PAGE_SIZE is
	return uint64_t(uint32_t(pgoff << shift)) >> shift;
}

uint64_t delivered_len(const Config &c, uint64_t len)
{
	return narrow(c, len);
}

bool spec_accepts(uint64_t vm_pgoff, uint64_t len, uint64_t visible_pages, unsigned page_shift)
{
	if (len == 0 || (len & ((uint64_t(1) << page_shift) - 1)))
		return false;
	unsigned __int128 end = (unsigned __int128)vm_pgoff + (len >> page_shift);
	return end <= visible_pages;
}

}  // namespace fl::props
