// SPDX-License-Identifier: GPL-2.0-only
// The knobs that select one kernel: patch level, unsigned-long width, page
// size, mmap front door and Spectre-v1 bypass. Arch-neutral: everything above
// src/kernel speaks in these terms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fl {

enum class Arch : uint8_t { A32, A64 };
enum class Patch : uint8_t { pre, v1, v2, v3 };
// How a VMA reaches f_op->mmap:
//  anon    - today's typeless anon inode: do_mmap checks, file_mmap_ok max = ULONG_MAX
//  regular - S_IFREG rules: do_mmap checks, file_mmap_ok max = MAX_LFS_FILESIZE
//  direct  - no do_mmap offset checks: any vm_pgoff/length reaches array_map_mmap
enum class Door : uint8_t { anon, regular, direct };

struct Config {
	Arch arch = Arch::A64;
	Patch patch = Patch::pre;
	unsigned page_shift = 12;
	Door door = Door::anon;
	bool bypass_spec_v1 = false;

	std::string name() const;  // e.g. "v2/arch32/4k/anon/mask"
	bool operator==(const Config &) const = default;
};

const char *to_string(Arch);
const char *to_string(Patch);
const char *to_string(Door);
std::optional<Arch> parse_arch(const std::string &);
std::optional<Patch> parse_patch(const std::string &);
std::optional<Door> parse_door(const std::string &);
std::optional<unsigned> parse_page_shift(const std::string &);  // "4k" | "16k" | "64k"
std::string page_size_name(unsigned page_shift);

inline constexpr Arch kArches[] = {Arch::A32, Arch::A64};
inline constexpr Patch kPatches[] = {Patch::pre, Patch::v1, Patch::v2, Patch::v3};
inline constexpr Door kDoors[] = {Door::anon, Door::regular, Door::direct};
inline constexpr unsigned kPageShifts[] = {12, 14, 16};

// A set of configurations: each axis either pinned or "all".
struct ConfigFilter {
	std::vector<Arch> arches{std::begin(kArches), std::end(kArches)};
	std::vector<Patch> patches{std::begin(kPatches), std::end(kPatches)};
	std::vector<unsigned> page_shifts{std::begin(kPageShifts), std::end(kPageShifts)};
	std::vector<Door> doors{std::begin(kDoors), std::end(kDoors)};
	std::vector<bool> spec_v1{false, true};

	std::vector<Config> expand() const;
	bool matches(const Config &) const;
};

}  // namespace fl
