// SPDX-License-Identifier: GPL-2.0-only
// The symbolic kernel the obligations run the port in (world.cpp, compiled
// once per width with the port's symbolic build): kernel globals with the
// map's vmalloc area and a neighbouring one, the direct map, one process, a
// BPF array map whose geometry is symbolic, and its file behind a front door.
// Each entry point is one run of the port, for the explorer: the same code
// the machine runs (do_mmap, bpf_map_mmap, array_map_mmap, remap_vmalloc_range,
// handle_mm_fault, the fault handlers, do_fault_around, __split_vma,
// linear_page_index, map_create and array_map_alloc), over Words.
#pragma once

#include <z3++.h>

#include "base/config.h"
#include "smt/port/explore.h"

namespace fl::smt::port {

// vm_struct ids in the world: the map's area and a neighbouring one
constexpr int kNeighbourId = 0, kMapAreaId = 1;

struct Kernel {
	Patch patch = Patch::pre;
	unsigned bits = 64;   // BITS_PER_LONG
	unsigned shift = 12;  // PAGE_SHIFT
	Door door = Door::anon;
	bool bypass_spec_v1 = true;
	bool fault = true;  // mmap_fault: false stops after mmap (what f_op->mmap said is all a row asks)
};

// One input: a term over Session variables, the range and alignment the
// session's domain asserts for it (the Word built from it knows them too).
struct Input {
	z3::expr e;
	fl::sym::u128 lo, hi;
	unsigned tz;
};

// The map as map_create leaves it, the neighbouring area, and the mmap and
// fault of a row. Areas are page aligned and inside the vmalloc space,
// elem_size a multiple of 8 up to 2^31 (round_up(value_size, 8) of a
// value_size <= INT_MAX): the facts' ranges, in the domain.
struct Inputs {
	Input max_entries, elem_size;  // u32: array->map.max_entries, array->elem_size
	Input base, size;              // ulong: the map area's addr and size (guard page included)
	Input nbase, nsize;            // ulong: a neighbouring area
	Input vm_pgoff, len, page;     // ulong: mmap(len, pgoff) and the faulting page of the VMA
	static Inputs make(fl::sym::Session &, const Kernel &);
};

// What the geometry facts (obligations.cpp) talk about, as the port
// computes it from a map: the area, array_map_vmalloc_addr(array), the
// bound array_map_mmap compares with, PAGE_ALIGN(sizeof(struct bpf_array)).
struct Geometry {
	z3::expr addr, size;  // area->addr, area->size
	z3::expr vmalloc_addr;  // array_map_vmalloc_addr(array)
	z3::expr visible;       // PAGE_ALIGN((u64)max_entries * elem_size), u64
	z3::expr elem_size;
	uint64_t hdr_bytes;
	uint64_t vmalloc_start, vmalloc_end;
};

struct Mapped {            // a done path of mmap_fault
	bool accepted = false;  // do_mmap returned an address
	bool faulted = false;   // and the page is inside the VMA: the fault ran
	z3::expr vm_start, vm_end, fault;  // the VMA, the faulting address
};

struct Allocated {  // a done path of alloc: map_create succeeded
	bool ok = false;
	Geometry g;
	z3::expr max_entries;  // map->max_entries as created
};

struct Split {  // a done path of split
	z3::expr index;            // linear_page_index(original VMA, addr)
	z3::expr after_split;      // ... of the piece that holds addr after __split_vma
	z3::expr after_dup;        // ... of vm_area_dup of that piece (fork)
};

// One width's entry points (world.cpp); each runs inside Explorer::explore.
struct World {
	// the map directly as array_map_alloc and vmalloc leave it (facts: obligations.cpp)
	Geometry (*geometry)(const Kernel &, const Inputs &);
	// mmap(NULL, len, PROT_READ, MAP_SHARED, map_fd, pgoff) through the
	// front door, then (lazy levels) a read fault at the VMA's page `page`
	Mapped (*mmap_fault)(const Kernel &, const Inputs &);
	// map_create(BPF_MAP_TYPE_ARRAY, BPF_F_MMAPABLE, value_size, max_entries)
	Allocated (*alloc)(const Kernel &, const z3::expr &value_size, const z3::expr &max_entries);
	// __split_vma of [start, start + len) at `at` (new_below 0 or 1), then
	// vm_area_dup of the piece holding addr; linear_page_index before and after
	Split (*split)(const Kernel &, const z3::expr &start, const z3::expr &len, const z3::expr &pgoff,
		       const z3::expr &at, const z3::expr &addr, int new_below);
};
const World &world(unsigned bits);

}  // namespace fl::smt::port
