// SPDX-License-Identifier: GPL-2.0-only
// RapidCheck generators of fl::Program, the type the fuzzers decode and
// `faultline replay` runs. Numbers lean toward the places where the mmap
// bound arithmetic turns (the visible end, 2^20, 2^32, 2^52 and 2^64 pages
// or bytes) without naming any particular bug. Everything is built from
// rc::Gen combinators, so RapidCheck shrinks ops away and numbers toward 0.
#pragma once

#include <cstdint>
#include <ostream>

#include <rapidcheck.h>

#include "check/program.h"
#include "check/program_binary.h"

namespace fl {
// RapidCheck prints values with showValue (found by argument-dependent
// lookup): a Program shows as its canonical text.
void showValue(const Program &, std::ostream &);
void showValue(const MapSpec &, std::ostream &);
}  // namespace fl

namespace fl::props {

inline constexpr unsigned kPageShift = 12;  // the properties run at 4K pages
inline constexpr uint64_t kPage = uint64_t(1) << kPageShift;

// Visible data pages of an array map: PAGE_ALIGN(max_entries * elem_size).
uint64_t visible_pages(const MapSpec &);

rc::Gen<MapSpec> gen_map_spec();
// Geometries at the big numbers: data past 4 GiB, value_size x max_entries
// near 2^31 and 2^32, non-power-of-two entries, maps spanning PTE tables.
rc::Gen<MapSpec> gen_big_map_spec();
// A page count near a turning point: small, around `visible`, or around
// 2^20 / 2^32 / 2^52 / 2^64 (and their ULONG_MAX-like neighbours).
rc::Gen<uint64_t> gen_pages_near_edges(uint64_t visible);
// A Program: one map, up to `max_ops` ops over labels A..D (mappings) and
// R, S (reservations for MAP_FIXED / MREMAP_FIXED targets). No header, no
// expectations; labels are defined before use (it formats and parses back).
rc::Gen<Program> gen_program(size_t max_ops = 16);

// A generated concurrent case: the Program, its preemptions as PCT's change
// points (each a share of the counted steps of the Program's default run, in
// 1/kShareOf, and a sched::ByteSchedule target: which of the other runnable
// tasks), and the lock failures (by Decision::event).
struct ConcurrentCase {
	static constexpr uint32_t kShareOf = 1024;
	Program program;
	std::vector<std::pair<uint32_t, uint8_t>> preemptions;
	std::vector<uint32_t> fail_events;
};

// A concurrent Program and its schedule, generated and shrunk together: up
// to 3 sequential ops (usually mappings A and B; a fork gives a second
// process), then up to 6 ops over threads T0..T2 (each in the process of its
// first op) aimed at the first pages of A and B and the first elements, cut
// into several groups by "join" lines or sequential ops, then up to 2 ops
// after the groups; a map of 64 or 128 KiB (every 1-2 page mapping valid at
// 4K, 16K and 64K pages). The schedule: most often one or two preemptions
// anywhere in the run, and a few lock failures. Shrinking removes ops, cuts,
// preemptions and failures and moves threads and preemptions toward 0.
rc::Gen<ConcurrentCase> gen_concurrent_case();

}  // namespace fl::props
