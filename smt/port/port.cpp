// SPDX-License-Identifier: GPL-2.0-only
// port.h's entries: the width's symbolic build (fl::sym32 or fl::sym64).
#include "smt/port/entries.h"

namespace fl::smt::port {

// src/sim/arch/machine_impl.cpp's layouts (x86_64 4-level, i386 3G/1G)
uint64_t vmalloc_base(unsigned bits) { return bits == 64 ? 0xffffc90000000000ull : 0xf8800000ull; }
uint64_t vmalloc_end(unsigned bits) { return bits == 64 ? 0xffffe90000000000ull : 0xff000000ull; }

#define FL_PICK(call) (k.bits == 32 ? ::fl::sym32::call : ::fl::sym64::call)

z3::expr mmap_accepted(z3::context &c, const Kernel &k, const Map &m, const Vma &v,
		       const std::vector<z3::expr> &facts)
{
	return FL_PICK(port_mmap_accepted(c, k, m, v, facts));
}

Page page_of(z3::context &c, const Kernel &k, const Map &m, const Vma &v, const z3::expr &i,
	     const std::vector<z3::expr> &facts)
{
	return FL_PICK(port_page_of(c, k, m, v, i, facts));
}

z3::expr door_passes(z3::context &c, const Kernel &k, const z3::expr &pgoff, const z3::expr &len)
{
	return FL_PICK(port_door_passes(c, k, pgoff, len));
}

z3::expr split_breaks_index(z3::context &c, const Kernel &k, const Vma &v, const z3::expr &addr,
			    const z3::expr &x, const z3::expr &move_to, const std::vector<z3::expr> &facts)
{
	return FL_PICK(port_split_keeps_index(c, k, v, addr, x, move_to, facts));
}

z3::expr window_bad(z3::context &c, const Kernel &k, const Map &m, const Vma &v, const z3::expr &i,
		    const z3::expr &j, const std::vector<z3::expr> &facts)
{
	return FL_PICK(port_window_bad(c, k, m, v, i, j, facts));
}

Alloc map_alloc(z3::context &c, const Kernel &k, const z3::expr &value_size, const z3::expr &max_entries)
{
	return FL_PICK(port_map_alloc(c, k, value_size, max_entries));
}

}  // namespace fl::smt::port
