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
	uint64_t end;  /* exact: a sum past 2^64 is past any map (no __int128 on i386) */
	if (__builtin_add_overflow(vm_pgoff, len >> page_shift, &end))
		return false;
	return end <= visible_pages;
}

}  // namespace fl::props
