// SPDX-License-Identifier: GPL-2.0-only
// The Z3 model of the array-map mmap arithmetic: one query per obligation x
// level x width x page size x assumption. The kernel expressions are built
// at the port's widths (unsigned long/pgoff_t = 32 or 64 bits, u32, u64)
// from the port's constants (hdr_pgoff = 1, PTRS_PER_PTE, fault_around);
// properties compare exactly-widened (128-bit) values.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config.h"

namespace fl::smt {

// How the VMA reached f_op->mmap (assumptions.cpp). `range` is `direct`
// plus only the syscall's reachable vm_pgoff range: it is asked for when a
// `direct` query fails, to say which assumption rescues the result.
enum class Assume : uint8_t { direct, anon, regular, range, none };
const char *to_string(Assume);

struct Setup {
	int obligation = 1;      // 1..6
	std::optional<Patch> level;  // none: obligation 5 (level-independent)
	unsigned bits = 64;      // BITS_PER_LONG
	unsigned shift = 12;     // PAGE_SHIFT
	Assume assume = Assume::anon;
	std::string key() const;   // "1 v1 32 4k direct": the smt/expected key
	std::string file() const;  // "o1-v1-arch32-4k-direct.smt2"
};

// The symbolic values a counterexample is read from.
struct Vars {
	z3::expr value_size, max_entries, bypass;  // map geometry (u32, u32, bool)
	z3::expr vm_pgoff, len, page;              // VMA (ulong) and page index in it
	z3::expr koff;    // the kernel offset (kaddr - vmalloc base) at the page; ulong
	z3::expr window;  // obligation 6: page index (in the VMA) of the bad window page
};

struct Query {
	Setup setup;
	z3::solver solver;  // asserts the negated property: unsat = proved
	Vars v;
	// Extra constraints that make a model replayable on the machine (small
	// map, short VMA; value_size 8 keeps the product linear), and a
	// preference (the kernel offset lands on the header page, which the
	// port flags as foreign_page) tried first.
	std::vector<z3::expr> small, small8, prefer;
};

// assumptions.cpp: the front door's constraints on (vm_pgoff, len).
z3::expr assumption(Assume, z3::context &, unsigned bits, unsigned shift, const z3::expr &vm_pgoff,
		    const z3::expr &len);

// obligations.cpp
// exact: (u64)max_entries * elem_size as a multiplication (slow; used to
// re-solve counterexamples) instead of its linear over-approximation.
Query build_query(z3::context &, const Setup &, bool exact = false);
std::vector<Setup> all_setups();  // the table, in order

}  // namespace fl::smt
