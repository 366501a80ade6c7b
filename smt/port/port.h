// SPDX-License-Identifier: GPL-2.0-only
// What the port's functions compute, as Z3 terms (issue 16): each entry
// runs the port's own text, compiled over symbolic integers
// (smt/port/runtime.cpp, once per unsigned-long width), once per path, and
// joins the paths into one formula over the caller's variables. Inputs and
// outputs are Ints (values of the C types, uint.h's encoding).
#pragma once

#include <z3++.h>

#include <optional>
#include <string>
#include <vector>

#include "sim/config.h"

namespace fl::smt::port {

struct Kernel {
	unsigned bits = 64, shift = 12;  // BITS_PER_LONG, PAGE_SHIFT
	Patch level = Patch::pre;
	bool bypass_spec_v1 = false;
	Door door = Door::anon;
};

// The map as array_map_mmap and the fault handlers see it: its u32 fields
// and its vmalloc area (array_size = get_vm_area_size, the guard page
// excluded). `product`, if set, stands for (u64)max_entries * elem_size
// wherever the port multiplies the two (the table's linear abstraction);
// otherwise the product is exact (nonlinear).
struct Map {
	z3::expr max_entries, elem_size, array_size;
	std::optional<z3::expr> product;
};

struct Vma {
	z3::expr vm_start, vm_pgoff, len;  // unsigned long each; vm_end = vm_start + len
};

// The page a VMA page ends up mapping: one of the map's area (its index in
// the area), or none / another (in_area false).
struct Page {
	z3::expr in_area, index;
};

// The machine's vmalloc space (src/sim/arch/machine_impl.cpp), where
// array_map_alloc's area goes in the geometry query.
uint64_t vmalloc_base(unsigned bits);
uint64_t vmalloc_end(unsigned bits);
// Where the table's queries put the map's area: address 0. Which page
// vmalloc_to_page returns for the map's kernel address does not depend on
// the base: the kernel address is base + X (mod 2^W) for an offset X the
// port computes, and it is in [base, base + size) iff X mod 2^W < size,
// for every base with base + size <= 2^W (a larger X wraps below the
// base). At 0 the solver has one wrap less per address.
constexpr uint64_t kAreaAddr = 0;

// array_map_mmap at k.level returns 0 (pre: remap_vmalloc_range included).
z3::expr mmap_accepted(z3::context &, const Kernel &, const Map &, const Vma &,
		       const std::vector<z3::expr> &facts);
// The page VMA page `i` maps: lazy levels - what ->fault (array_map_mmap_fault)
// got from vmalloc_to_page at linear_page_index(vma, vm_start + i pages);
// pre - what remap_vmalloc_range's loop inserted at that address. The loop
// runs twice in the port's code (the first two pages, with vmalloc_to_page
// on each); page i is where i of its steps take the kernel address (the
// second page's minus the first's), looked up by the port's
// vmalloc_to_page. The one extrapolated step of the proof: the loop body
// advances by the same amount every time (it adds constants).
Page page_of(z3::context &, const Kernel &, const Map &, const Vma &, const z3::expr &i,
	     const std::vector<z3::expr> &facts);
// do_mmap's two offset checks (pgoff wrap, file_mmap_ok with
// file_mmap_size_max of the door's inode) let (vm_pgoff, len) through.
z3::expr door_passes(z3::context &, const Kernel &, const z3::expr &pgoff, const z3::expr &len);
// __split_vma(vma, addr, new_below) for both new_below: true iff in one of
// the two pieces holding address x, or in that piece moved to move_to
// (mremap's move keeps vm_pgoff), linear_page_index of x differs from the
// original VMA's (or a BUG_ON fires).
z3::expr split_breaks_index(z3::context &, const Kernel &, const Vma &, const z3::expr &addr,
			    const z3::expr &x, const z3::expr &move_to, const std::vector<z3::expr> &facts);
// v3: do_fault_around at VMA page `i` hands array_map_mmap_pages a window;
// true iff its slot j is outside the VMA or in another PTE table than the
// faulting address, or one of the slots the port installed (the first two)
// is not at its VMA page's address or not the page ->fault maps there.
z3::expr window_bad(z3::context &, const Kernel &, const Map &, const Vma &, const z3::expr &i,
		    const z3::expr &j, const std::vector<z3::expr> &facts);
// array_map_alloc_check + array_map_alloc on symbolic attributes: `ok`
// when the map is created, with the u32 fields it stores and the size of
// its vmalloc area (without the guard page); `bug` when a BUG_ON fires.
struct Alloc {
	z3::expr ok, bug, max_entries, elem_size, array_size;  // bug: a BUG_ON fired
};
Alloc map_alloc(z3::context &, const Kernel &, const z3::expr &value_size, const z3::expr &max_entries);

}  // namespace fl::smt::port
