// SPDX-License-Identifier: GPL-2.0-only
// The fuzzers' form of a Program: any byte string decodes to a valid program
// (one that formats and parses back), so mutations never waste an input on a
// syntax error. The decoding leans towards small map geometries and towards
// offsets and lengths around the end of the map's data, where the mmap fault
// path has its edge cases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "check/program.h"

namespace fl {

// Deterministic and total: never fails; the empty input gives a small valid
// program. The header pins no configuration axis: the fuzz target chooses
// the configuration. At most kMaxDecodedOps ops, no expectations.
Program decode_program(const uint8_t *data, size_t size);

inline constexpr int kMaxDecodedOps = 24;

// The interleaving fuzzers' form: a Program whose last ops run concurrently,
// plus a schedule as (delta, target) picks (base/sched/strategy.h
// ByteSchedule). Layout: varint length L, L bytes of decode_program input,
// one byte for the thread count (2 or 3), one for the group size, one per
// group op for its thread, then (delta, target) byte pairs. Total: any byte
// string is a valid Program with a valid schedule.
struct ConcurrentInput {
	Program program;
	std::vector<std::pair<uint32_t, uint8_t>> schedule;
	// The fallible acquisitions (by Decision::event) that fail: the
	// generators' and the decoder's lock failures (sched::ByteSchedule).
	std::vector<uint32_t> fail_events = {};
};
ConcurrentInput decode_concurrent(const uint8_t *data, size_t size);
// One random input of the oracle's and the reach report's random batches
// (4..160 bytes): the same seed gives both the same Programs.
std::vector<uint8_t> random_program_bytes(std::mt19937_64 &);

}  // namespace fl
