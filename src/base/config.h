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
// Historical concurrency bugs, each written from its fix: test targets of the
// interleaving explorer, never part of the verdict table.
//  toctou_2021       - syscall writers not counted in write-active ("bpf: Fix
//                      toctou on read-only map's constant scalar tracking")
//  freeze_mutex_2025 - freeze_mutex held across ->map_mmap ("bpf: avoid
//                      holding freeze_mutex during mmap operation")
//  finish_fault_put  - a fault that loses the race in finish_fault keeps the
//                      handler's page reference (planted: the put_page the
//                      NOPAGE path owes)
enum class Historic : uint8_t { none, toctou_2021, freeze_mutex_2025, finish_fault_put };
// The arena map's VMA lifetime handling (kernel/bpf/arena.c), by history:
//  fixed      - 2026 "Fix use-after-free in arena_vm_close on fork": VM_DONTCOPY,
//               ->may_split and ->mremap refuse (what this host runs)
//  fork_uaf   - 2024 "Fix remap of arena": ->open and the vma_list refcount, but
//               a forked/split/moved VMA shares the entry that points at the first VMA
//  mremap_uaf - the original arena: no ->open, the first ->close frees the shared entry
enum class ArenaFix : uint8_t { fixed, fork_uaf, mremap_uaf };

struct Config {
	Arch arch = Arch::A64;
	Patch patch = Patch::pre;
	unsigned page_shift = 12;
	Door door = Door::anon;
	bool bypass_spec_v1 = false;
	Historic historic = Historic::none;
	ArenaFix arena = ArenaFix::fixed;  // only arena maps look at it

	std::string name() const;  // e.g. "v2/arch32/4k/anon/mask" (+ "/arena-fork_uaf" off the default)
	bool operator==(const Config &) const = default;
};

const char *to_string(Arch);
const char *to_string(Patch);
const char *to_string(Door);
const char *to_string(ArenaFix);
std::optional<ArenaFix> parse_arena_fix(const std::string &);
std::optional<Arch> parse_arch(const std::string &);
std::optional<Patch> parse_patch(const std::string &);
std::optional<Door> parse_door(const std::string &);
std::optional<unsigned> parse_page_shift(const std::string &);  // "4k" | "16k" | "64k"
const char *to_string(Historic);
std::optional<Historic> parse_historic(const std::string &);
inline constexpr Historic kHistorics[] = {Historic::toctou_2021, Historic::freeze_mutex_2025,
					  Historic::finish_fault_put};
std::string page_size_name(unsigned page_shift);

inline constexpr Arch kArches[] = {Arch::A32, Arch::A64};
inline constexpr Patch kPatches[] = {Patch::pre, Patch::v1, Patch::v2, Patch::v3};
inline constexpr Door kDoors[] = {Door::anon, Door::regular, Door::direct};
inline constexpr unsigned kPageShifts[] = {12, 14, 16};
inline constexpr ArenaFix kArenaFixes[] = {ArenaFix::fixed, ArenaFix::fork_uaf, ArenaFix::mremap_uaf};

// A set of configurations: each axis either pinned or "all".
struct ConfigFilter {
	std::vector<Arch> arches{std::begin(kArches), std::end(kArches)};
	std::vector<Patch> patches{std::begin(kPatches), std::end(kPatches)};
	std::vector<unsigned> page_shifts{std::begin(kPageShifts), std::end(kPageShifts)};
	std::vector<Door> doors{std::begin(kDoors), std::end(kDoors)};
	std::vector<bool> spec_v1{false, true};
	std::vector<Historic> historics{Historic::none};  // not an axis: pinned by a header only
	std::vector<ArenaFix> arena{ArenaFix::fixed};  // historical levels only when a Program pins one

	std::vector<Config> expand() const;
	bool matches(const Config &) const;
};

}  // namespace fl
