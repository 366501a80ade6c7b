// SPDX-License-Identifier: GPL-2.0-only
// The Z3 model of the array-map mmap arithmetic: one query per obligation x
// level x width x page size x assumption. The kernel expressions are built
// at the port's widths (unsigned long/pgoff_t = 32 or 64 bits, u32, u64)
// from the port's constants (hdr_pgoff = 1, PTRS_PER_PTE, fault_around) as
// exact integers reduced mod 2^width where C wraps (uint.h); properties
// compare the unreduced integers, so no wrap can hide inside a property.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/config.h"
#include "smt/uint.h"

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

// The symbolic values a counterexample is read from (Ints, see uint.h).
struct Vars {
	z3::expr value_size, max_entries, bypass;  // map geometry (u32, u32, bool)
	z3::expr vm_pgoff, len, page;              // VMA (ulong) and page index in it
	z3::expr koff;    // the kernel offset (kaddr - vmalloc base) at the page; ulong
	z3::expr window;  // obligation 6: page index (in the VMA) of the bad window page
};
// The tactic every query is solved with (and the emitted .smt2 files name in
// their check-sat-using): purify-arith gives each div/mod its own variable
// with its defining linear constraints, so the SMT core's arithmetic solver
// sees plain linear arithmetic. Z3's default solver for these files (QF_LIA
// or no logic) times out on many of them; elim-uncnstr and propagate-values
// decide o3-v1-arch32-4k-regular, which the shorter chain left undecided.
inline const std::vector<const char *> kTactic = {"simplify", "purify-arith", "propagate-values",
						  "solve-eqs", "elim-uncnstr", "smt"};
std::string tactic_smt2();  // "(check-sat-using (then simplify ...))"
z3::solver make_solver(z3::context &);

struct Query {
	Setup setup;
	z3::solver solver;  // asserts the negated property: unsat = proved
	Vars v;
	// Extra constraints that make a model replayable on the machine (small
	// map, short VMA; value_size 8 and bypass_spec_v1 keep the exact
	// geometry linear: alloc = product = 8 * max_entries), and a
	// preference (the kernel offset lands on the header page, which the
	// port flags as foreign_page) tried first.
	std::vector<z3::expr> small, small8, prefer;
};

// assumptions.cpp: the front door's constraints on (vm_pgoff, len), both
// unsigned long.
z3::expr assumption(Assume, z3::context &, unsigned shift, const UInt &vm_pgoff, const UInt &len);

// obligations.cpp
// exact: the map geometry from value_size, max_entries and bypass
// (nonlinear; used to re-solve counterexamples) instead of the
// over-approximating (visible, array_size) pair the table's queries use.
Query build_query(z3::context &, const Setup &, bool exact = false);
std::vector<Setup> all_setups();  // the table, in order

}  // namespace fl::smt
