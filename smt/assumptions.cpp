// SPDX-License-Identifier: GPL-2.0-only
// The front doors as formulas over (vm_pgoff, len), both unsigned long:
// the syscall's reachable vm_pgoff (the machine's entry, src/sim) and the
// port's do_mmap offset checks with file_mmap_ok (computed from the port).
// Every door already has len != 0 and page aligned (do_mmap's PAGE_ALIGN;
// obligations.cpp asserts that for all of them). get_unmapped_area's
// len <= TASK_SIZE is left out on purpose: it only shrinks the set, and the
// proofs are stronger without it.
#include "smt/kmodel.h"
#include "smt/port/port.h"

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

expr assumption(Assume a, z3::context &c, unsigned shift, const UInt &pgoff, const UInt &len)
{
	port::Kernel k;
	k.bits = pgoff.bits;
	k.shift = shift;
	switch (a) {
	case Assume::direct:  /* any VMA reaches f_op->mmap */
	case Assume::none:
		return c.bool_val(true);
	case Assume::range:
		return reachable_pgoff(c, shift, pgoff);
	case Assume::anon:
	case Assume::regular:
		/* do_mmap's offset checks and file_mmap_ok, the port's own code,
		 * on the door's inode (port/runtime.cpp port_door_passes) */
		k.door = a == Assume::anon ? Door::anon : Door::regular;
		return reachable_pgoff(c, shift, pgoff) && port::door_passes(c, k, pgoff.v, len.v);
	}
	return c.bool_val(true);
}

}  // namespace fl::smt
