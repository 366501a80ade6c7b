// SPDX-License-Identifier: GPL-2.0-only
// The obligation table over the port itself. A row runs the port's own code
// over symbolic integers (smt/port/: mmap through do_mmap and the front
// door, the fault through handle_mm_fault, __split_vma, map_create), one run
// per feasible path, and states the obligation over what those runs did:
// the PTEs they installed, what f_op->mmap returned, the page offsets. So
// a change to the port changes the proof.
//
// The map is the one map_create leaves, with its geometry symbolic and
// bound by facts (obligations.cpp: geometry_facts) that obligation 7 proves
// over array_map_alloc's own arithmetic for every value_size, max_entries
// and bypass_spec_v1: an over-approximation, so unsat proves the property
// for every real map, and every sat model is re-solved with a real
// geometry and replayed through the concrete port (replay.cpp).
#pragma once

#include <z3++.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/config.h"
#include "smt/port/explore.h"
#include "smt/port/world.h"

namespace fl::smt {

// How the VMA reached f_op->mmap. anon and regular: do_mmap with its
// offset checks and file_mmap_ok for that inode, plus the reachable
// vm_pgoff of the syscall ABI (assumptions.cpp); direct: do_mmap without
// them (the port's direct door); range: direct plus the ABI's vm_pgoff,
// asked when a direct row fails, to say which assumption rescues it.
enum class Assume : uint8_t { direct, anon, regular, range, none };
const char *to_string(Assume);

struct Setup {
	int obligation = 1;          // 1..6; 7: the geometry facts (geometry_facts)
	std::optional<Patch> level;  // none: obligations 5 and 7 (level-independent)
	unsigned bits = 64;          // BITS_PER_LONG
	unsigned shift = 12;         // PAGE_SHIFT
	Assume assume = Assume::anon;
	bool bypass = true;          // obligation 7: bpf_bypass_spec_v1()
	std::string key() const;     // "1 v1 32 4k direct": the smt/expected key
	std::string file() const;    // "o1-v1-arch32-4k-direct.smt2"
};
std::vector<Setup> all_setups();  // the table, in order

// One width, page size and door: a Session with the map's inputs and
// geometry, and the explorations of mmap (and the fault) of each level its
// rows ask for, path by path, shared by the rows of obligations 1-4 and 6
// and the direct rows' range questions (obligations.cpp; which levels
// share one: faultline-prove's scenario_key). Its rows run one after the
// other, on one thread.
struct Scenario;
std::shared_ptr<Scenario> make_scenario(const Setup &);  // st's setting

// One row's question: the negated property as one disjunct per explored
// path, handed out as the row asks for them (a row with a counterexample
// stops early; a proof needs every path). Solving it: every disjunct unsat
// (and no path unfinished) proves the row; a sat one is a counterexample.
struct Query {
	Setup setup;
	std::shared_ptr<fl::sym::Session> session;
	std::shared_ptr<Scenario> scenario;   // rows over mmap_fault
	const port::Inputs *in = nullptr;     // the scenario's inputs, for the replay
	std::function<std::optional<z3::expr>(Query &)> next_part;  // none: every path seen
	std::vector<z3::expr> parts;          // the disjuncts handed out so far
	unsigned paths = 0, cut = 0;          // explored paths; those not finished
	std::string cut_why;                  // the first unfinished path's reason
	bool exhausted = false;               // every path seen
	// the i-th disjunct, exploring on as far as it needs; null past the last
	const z3::expr *part(size_t i);
	bool complete() const { return exhausted && cut == 0; }
	std::vector<z3::expr> assumed;        // beyond the session's domain (range: the reachable vm_pgoff)
	z3::expr assumptions() const;
};
// st's row; obligations 1-4 and 6 in scenario (make_scenario of st's
// setting), obligations 5 and 7 in a session of their own
Query build_query(const Setup &st, std::shared_ptr<Scenario> scenario = nullptr);
// A direct row's `range` question over the same paths (scenario: the
// direct row's): the reachable vm_pgoff only narrows the direct door's
// executions, so its paths cover them, and each disjunct gets the ABI's
// bound as one more assumption
Query build_range_query(const Setup &direct, std::shared_ptr<Scenario> scenario);

// assumptions.cpp: the vm_pgoff the syscall ABI reaches (64-bit mmap's byte
// offset, 32-bit mmap2's 4096-byte units), for anon, regular and range
z3::expr reachable_pgoff(z3::context &, unsigned bits, unsigned shift, const z3::expr &vm_pgoff);

// obligations.cpp: what every map map_create leaves satisfies (proved by
// obligation 7 over array_map_alloc; assumed by every other row)
z3::expr geometry_facts(z3::context &, const port::Kernel &, const port::Geometry &);

}  // namespace fl::smt
