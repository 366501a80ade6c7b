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

// A Program whose last ops (up to 6, over 2-3 threads T0..T2, aimed at
// mapping A's first pages and the first elements) run concurrently, after up
// to 3 sequential ones (usually A's mmap), with a schedule in the fuzzers'
// (delta, target) form (sched::ByteSchedule), the deltas mostly small: ops
// and schedule shrink together (ops away, threads and deltas toward 0).
rc::Gen<ConcurrentInput> gen_concurrent_case();

}  // namespace fl::props
