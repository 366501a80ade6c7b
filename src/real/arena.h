// SPDX-License-Identifier: GPL-2.0-only
// The executor's address-space window. The machine's processes own an
// empty address space; host processes carry libc, the stack and (under
// ASan) shadow memory. So every Program address lives in one hole the
// executor found first (the arena), which plays the top of the machine's
// address space: mappings without MAP_FIXED are placed there the way the
// machine's top-down allocator places them (mm_get_unmapped_area in
// src/kernel/mm/mmap.cpp), and an op that would reach outside is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fl::real {

struct Arena {
	uint64_t lo = 0, hi = 0;  // [lo, hi): free when found
	uint64_t mmap_base() const { return hi - (uint64_t(128) << 20); }  // as the machine's
	bool contains(uint64_t start, uint64_t len) const
	{
		return start >= lo && start <= hi && len <= hi - start;
	}
};

// Finds a free window (a fixed spot far from everything, else any hole of
// the size) and leaves it unmapped. nullopt + reason when there is none.
std::optional<Arena> find_arena(std::string *reason);

// The VMAs of process `pid` that intersect the arena, sorted, as [start, end).
std::vector<std::pair<uint64_t, uint64_t>> arena_vmas(int pid, const Arena &);

// Where the machine's mm_get_unmapped_area would put `len` bytes (with an
// optional hint) in that process, inside the arena; nullopt when the arena
// has no room (the caller then lets the kernel choose).
std::optional<uint64_t> place(int pid, const Arena &, uint64_t hint, uint64_t len, unsigned page_shift);

}  // namespace fl::real
