// SPDX-License-Identifier: GPL-2.0-only
// The entries of the symbolic port, once per width (runtime.cpp defines
// them in fl::sym32 and fl::sym64; port.cpp picks one by Kernel::bits).
#pragma once

#include "smt/port/port.h"

#define FL_PORT_ENTRIES                                                                                   \
	z3::expr port_mmap_accepted(z3::context &, const ::fl::smt::port::Kernel &,                       \
				    const ::fl::smt::port::Map &, const ::fl::smt::port::Vma &,           \
				    const std::vector<z3::expr> &);                                       \
	::fl::smt::port::Page port_page_of(z3::context &, const ::fl::smt::port::Kernel &,                \
					   const ::fl::smt::port::Map &, const ::fl::smt::port::Vma &,    \
					   const z3::expr &, const std::vector<z3::expr> &);              \
	z3::expr port_door_passes(z3::context &, const ::fl::smt::port::Kernel &, const z3::expr &,       \
				  const z3::expr &);                                                      \
	z3::expr port_split_keeps_index(z3::context &, const ::fl::smt::port::Kernel &,                   \
					const ::fl::smt::port::Vma &, const z3::expr &, const z3::expr &, \
					const z3::expr &, const std::vector<z3::expr> &);                 \
	z3::expr port_window_bad(z3::context &, const ::fl::smt::port::Kernel &,                          \
				 const ::fl::smt::port::Map &, const ::fl::smt::port::Vma &,              \
				 const z3::expr &, const z3::expr &, const std::vector<z3::expr> &);      \
	::fl::smt::port::Alloc port_map_alloc(z3::context &, const ::fl::smt::port::Kernel &,             \
					      const z3::expr &, const z3::expr &);

namespace fl::sym32 {
FL_PORT_ENTRIES
}
namespace fl::sym64 {
FL_PORT_ENTRIES
}
