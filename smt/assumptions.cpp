// SPDX-License-Identifier: GPL-2.0-only
// What the port does not compute but a front door still decides: the
// vm_pgoff the syscall ABI can hand to do_mmap (the x86 entry points are
// not ported). do_mmap's offset checks and file_mmap_ok are the port's own
// code, run by every anon and regular row (smt/port/world.cpp).
#include "smt/kmodel.h"

namespace fl::smt {

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
// vm_pgoff"; the machine: MachineImpl::mmap).
//  64-bit sys_mmap(..., off): pgoff = off >> PAGE_SHIFT, so < 2^(64-PAGE_SHIFT).
//  32-bit sys_mmap_pgoff (mmap2): a 32-bit count of 4096-byte units,
//    rescaled: vm_pgoff = pgoff >> (PAGE_SHIFT - 12) < 2^(44-PAGE_SHIFT)
//    (every 32-bit value at 4K).
z3::expr reachable_pgoff(z3::context &c, unsigned bits, unsigned shift, const z3::expr &vm_pgoff)
{
	unsigned limit_log2 = bits == 64 ? 64 - shift : 32 + 12 - shift;
	if (limit_log2 >= bits)
		return c.bool_val(true);
	return vm_pgoff < fl::sym::int_of(fl::sym::pow2(limit_log2));
}

}  // namespace fl::smt
