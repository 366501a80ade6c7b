// SPDX-License-Identifier: GPL-2.0-only
// The front doors as formulas over (vm_pgoff, len), both unsigned long.
// Every door already has len != 0 and page aligned (do_mmap's PAGE_ALIGN;
// obligations.cpp asserts that for all of them). get_unmapped_area's
// len <= TASK_SIZE is left out on purpose: it only shrinks the set, and the
// proofs are stronger without it.
#include "smt/kmodel.h"

namespace fl::smt {

using z3::expr;

const char *to_string(Assume a)
{
	switch (a) {
	case Assume::direct: return "direct";
	case Assume::anon: return "anon";
	case Assume::regular: return "regular";
	case Assume::range: return "range";
	case Assume::none: return "-";
	}
	return "?";
}

// The vm_pgoff a syscall can produce (docs/mmap.md#do_mmap "Reachable
// vm_pgoff"; the port: MachineImpl::mmap).
//  64-bit sys_mmap(..., off): pgoff = off >> PAGE_SHIFT, so < 2^(64-PAGE_SHIFT).
//  32-bit sys_mmap_pgoff (mmap2): a 32-bit count of 4096-byte units,
//    rescaled: vm_pgoff = pgoff >> (PAGE_SHIFT - 12) < 2^(44-PAGE_SHIFT)
//    (every 32-bit value at 4K).
static expr reachable_pgoff(z3::context &c, unsigned shift, const UInt &pgoff)
{
	unsigned bits = pgoff.bits;
	unsigned limit_log2 = bits == 64 ? 64 - shift : 32 + 12 - shift;
	if (limit_log2 >= bits)
		return c.bool_val(true);
	return pgoff.v < two_to(c, limit_log2);
}

// mm/mmap.c do_mmap: "offset overflow?"
//	if ((pgoff + (len >> PAGE_SHIFT)) < pgoff) return -EOVERFLOW;
// computed in unsigned long.
static expr no_pgoff_wrap(unsigned shift, const UInt &pgoff, const UInt &len)
{
	return !ult(pgoff + (len >> shift), pgoff);
}

// include/linux/fs.h file_mmap_ok (u64 maxsize):
//	if (maxsize && len > maxsize) return false;
//	maxsize -= len;
//	if (pgoff > maxsize >> PAGE_SHIFT) return false;
static expr file_mmap_ok(z3::context &c, unsigned shift, uint64_t maxsize, const UInt &pgoff,
			 const UInt &len)
{
	UInt len64 = to_width(len, 64), pgoff64 = to_width(pgoff, 64);
	UInt max = uconst(c, maxsize, 64);
	expr fits = maxsize ? ule(len64, max) : c.bool_val(true);
	return fits && ule(pgoff64, (max - len64) >> shift);
}

// file_mmap_size_max: the typeless anon inode a BPF map fd sits on gets
// ULONG_MAX (docs/mmap.md#do_mmap); S_IFREG gets MAX_LFS_FILESIZE
// (include/linux/fs.h: 64-bit LLONG_MAX; 32-bit (loff_t)ULONG_MAX << PAGE_SHIFT).
static uint64_t ulong_max(unsigned bits)
{
	return bits == 64 ? ~0ull : 0xffffffffull;
}
static uint64_t max_lfs_filesize(unsigned bits, unsigned shift)
{
	return bits == 64 ? 0x7fffffffffffffffull : 0xffffffffull << shift;
}

expr assumption(Assume a, z3::context &c, unsigned shift, const UInt &pgoff, const UInt &len)
{
	unsigned bits = pgoff.bits;
	switch (a) {
	case Assume::direct:  /* any VMA reaches f_op->mmap */
	case Assume::none:
		return c.bool_val(true);
	case Assume::range:
		return reachable_pgoff(c, shift, pgoff);
	case Assume::anon:
		return reachable_pgoff(c, shift, pgoff) && no_pgoff_wrap(shift, pgoff, len) &&
		       file_mmap_ok(c, shift, ulong_max(bits), pgoff, len);
	case Assume::regular:
		return reachable_pgoff(c, shift, pgoff) && no_pgoff_wrap(shift, pgoff, len) &&
		       file_mmap_ok(c, shift, max_lfs_filesize(bits, shift), pgoff, len);
	}
	return c.bool_val(true);
}

}  // namespace fl::smt
