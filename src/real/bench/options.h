// SPDX-License-Identifier: GPL-2.0-only
// faultline-bench's command line. Takes the seed bench's options
// (-p/--producers, --map-size, -d/--duration, -w/--warmup) without its
// argument bugs: the seed parsed --map-size with strtoull(arg, NULL, 0), so
// "8M" ran an 8-byte map, "-1" a 16 EiB one, "1e6" a 1-byte one, and an
// overflow ULLONG_MAX, all silently; it truncated max_entries to u32 above
// 32 GiB (mapping a different size than asked), never checked the size
// against memory, and (v1) set the thread count from validate() after the
// producers array was sized. Here every value is checked in full and a bad
// one is a one-line error (exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "real/bench/backend.h"
#include "real/bench/runner.h"

namespace fl::bench {

enum class Touch { none, all, count };

struct Options {
	Timing timing;
	Geometry geometry;
	std::string backend = "bpf-array";
	bool populate = false;
	Touch touch = Touch::none;
	uint64_t touch_count = 0;
	PortLevel level;
	// --matrix
	bool matrix = false;
	std::string out_dir = "bench-results";
	std::vector<int> threads_list{1, 4, 8, 16};
	std::vector<uint64_t> sizes{1ull << 20, 8ull << 20, 64ull << 20};
	std::vector<std::string> backends{"bpf-array", "bpf-arena", "memfd", "uffd", "anon", "model"};
	bool help = false;

	Pattern pattern() const;  // from populate/touch and the geometry
};

// Parses argv; nullopt and *err (one line) on bad input.
std::optional<Options> parse_options(int argc, char **argv, std::string *err);
// "8388608", "0x800000", "8M", "8MiB", "1G": bytes; nullopt on anything else
// (empty, signs, trailing garbage, overflow, zero).
std::optional<uint64_t> parse_size(const std::string &);
std::string usage();

}  // namespace fl::bench
