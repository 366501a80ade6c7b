// SPDX-License-Identifier: GPL-2.0-only
#include "real/arena.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "real/sys.h"

namespace fl::real {

namespace {

// Far from the binary, the heap, the libraries and the stack, and (on
// x86_64) above ASan's shadow (which ends at 0x10007fff8000) and below its
// allocator (0x600000000000).
#if UINTPTR_MAX > 0xffffffffu
constexpr uint64_t kArenaLo = 0x300000000000, kArenaSize = uint64_t(1) << 40;
#else
constexpr uint64_t kArenaLo = 0x18000000, kArenaSize = 0x38000000;
#endif

constexpr int kNoReserve = 0x4000;  // MAP_NORESERVE

bool probe(uint64_t lo, uint64_t size, int extra_flags, uint64_t *got)
{
	int64_t r = sys::mmap(lo, size, uapi::PROT_NONE,
			      uapi::MAP_PRIVATE | uapi::MAP_ANONYMOUS | kNoReserve | extra_flags, -1, 0, 12);
	if (r < 0)
		return false;
	*got = uint64_t(r);
	sys::munmap(*got, size);
	return true;
}

}  // namespace

std::optional<Arena> find_arena(std::string *reason)
{
	uint64_t got = 0;
	if (probe(kArenaLo, kArenaSize, uapi::MAP_FIXED_NOREPLACE, &got) && got == kArenaLo)
		return Arena{got, got + kArenaSize};
	for (uint64_t size = kArenaSize; size >= (uint64_t(256) << 20); size /= 2)
		if (probe(0, size, 0, &got))
			return Arena{got, got + size};
	if (reason)
		*reason = "no free address-space window for the executor's arena";
	return std::nullopt;
}

std::vector<std::pair<uint64_t, uint64_t>> arena_vmas(int pid, const Arena &a)
{
	std::vector<std::pair<uint64_t, uint64_t>> out;
	char path[64];
	std::snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = std::fopen(path, "r");
	if (!f)
		return out;
	char line[512];
	while (std::fgets(line, sizeof line, f)) {
		unsigned long long s = 0, e = 0;
		if (std::sscanf(line, "%llx-%llx", &s, &e) == 2 && e > a.lo && s < a.hi)
			out.emplace_back(s, e);
		if (!std::strchr(line, '\n'))  // a long path: skip the rest of the line
			for (int c; (c = std::fgetc(f)) != EOF && c != '\n';)
				;
	}
	std::fclose(f);
	return out;
}

std::optional<uint64_t> place(int pid, const Arena &a, uint64_t hint, uint64_t len, unsigned page_shift)
{
	const uint64_t page = uint64_t(1) << page_shift;
	const uint64_t task_size = a.hi - page, mmap_min = a.lo;
	if (len == 0 || len > task_size - mmap_min)
		return std::nullopt;
	len = (len + page - 1) & ~(page - 1);
	auto vmas = arena_vmas(pid, a);
	if (hint) {
		uint64_t addr = (hint + page - 1) & ~(page - 1);
		bool free = true;
		for (auto [s, e] : vmas)
			free = free && (e <= addr || s >= addr + len);
		if (addr >= hint && task_size - len >= addr && addr >= mmap_min && free)
			return addr;
	}
	// The machine's unmapped_area_topdown: the highest gap below mmap_base.
	uint64_t gap_end = a.mmap_base();
	for (auto it = vmas.rbegin(); it != vmas.rend(); ++it) {
		if (it->first >= gap_end)
			continue;
		if (it->second <= gap_end && gap_end - it->second >= len)
			return gap_end - len;
		gap_end = std::min(gap_end, it->first);
	}
	if (gap_end >= mmap_min && gap_end - mmap_min >= len)
		return gap_end - len;
	return std::nullopt;
}

}  // namespace fl::real
