// SPDX-License-Identifier: GPL-2.0-only
// The contents invariant: a shadow of every byte of the map's data, kept
// from the ops a Program runs and what they returned (update, user stores
// through any shared mapping of the map, the differential's resynchronising
// kernel writes), and checked against every lookup and user load. It reads
// the machine only through its public interface (vma_at), so it holds the
// same at every patch level, `pre` included: a slip that eager and lazy
// share (an update that lands in the wrong element) still shows here, where
// the differential, comparing the two, is blind to it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "check/offset_ranges.h"
#include "check/trace.h"

namespace fl {

class ContentsShadow {
public:
	// `map_ret`: BPF_MAP_CREATE's result; a failed create leaves nothing to check.
	ContentsShadow(const MapSpec &, int64_t map_ret, unsigned page_shift);

	// Observes one op that ran, with its event, at address `addr` (resolved
	// by the caller; ignored for bpf(2) ops). Returns a description of the
	// first byte that differs from the shadow, or "" when all agree. Updates
	// the shadow with what the op wrote.
	std::string observe(Machine &, const Op &, uint64_t addr, const Event &);
	// An op that ran concurrently with others (the interleaving explorer's
	// group). What its writes leave depends on the interleaving, so the bytes
	// an update wrote become unknown, and after a user store every byte does
	// (its address may reach another offset by the time the group ends); the
	// next lookup or load that reads an unknown byte learns it. Checks
	// nothing: a concurrent read may see either side of a concurrent write.
	void concurrent(const Op &, const Event &);
	// A kernel-side write at a byte offset into the map's data.
	void kernel_write(uint64_t offset, const std::vector<uint8_t> &bytes);
	// How many bytes a lookup or load compared so far (for the reach report).
	uint64_t bytes_checked() const { return checked_; }

private:
	// The map offset user address `a` reaches through `vma` when that is a
	// shared mapping of the map that holds `a`, exactly (no wrap); false
	// when it is not or the offset lies past the visible data.
	bool user_offset(const VmaEntry &vma, uint64_t a, uint64_t *off) const;
	uint8_t byte(uint64_t off) const;
	bool known(uint64_t off) const;
	bool all_known() const { return !all_unknown_ && unknown_.empty(); }
	// The end of the run of unknown bytes that starts at `off` (not known), at most `limit`.
	uint64_t unknown_run_end(uint64_t off, uint64_t limit) const;
	void learn(uint64_t from, uint64_t to);  // [from, to) holds what the shadow says (after concurrent writes)
	void set(uint64_t off, uint8_t v);
	void zero_range(uint64_t from, uint64_t to);
	// The first of `n` bytes at `off` that differs from `data`, or n.
	size_t first_difference(uint64_t off, const uint8_t *data, size_t n) const;

	bool live_ = false;
	uint64_t elem_ = 0, value_size_ = 0, max_entries_ = 0, visible_bytes_ = 0;
	unsigned page_shift_ = 12;
	// Sparse, in 64-byte chunks keyed by offset / 64: an absent chunk is zero
	// (__GFP_ZERO). Chunks, not bytes: a lookup compares a chunk at a time.
	static constexpr uint64_t kChunk = 64;
	using Chunk = std::array<uint8_t, kChunk>;
	std::unordered_map<uint64_t, Chunk> bytes_;
	// After concurrent writes: offsets whose value is unknown, or (all_unknown_)
	// every offset but those written or read since.
	OffsetRanges unknown_, known_;
	bool all_unknown_ = false;
	uint64_t checked_ = 0;
};

}  // namespace fl
