// SPDX-License-Identifier: GPL-2.0-only
// A benchmark backend: something that can be mmap()ed and munmap()ed the way
// the seed's arraymap-mmap bench maps a BPF_F_MMAPABLE array. One Backend per
// run (the shared object: a map, a memfd, a userfaultfd); one Worker per
// producer thread (its own mapping state, e.g. an arena's fixed address).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/config.h"

namespace fl::bench {

// The seed's sizing: value_size 8, max_entries = ceil(bytes / 8), and
// user space sees PAGE_ALIGN(max_entries * 8) bytes.
struct Geometry {
	uint64_t map_bytes = 8ull << 20;  // --map-size as given
	uint64_t page_size = 4096;
	uint32_t max_entries() const { return uint32_t((map_bytes + 7) / 8); }
	uint64_t mmap_bytes() const { return (uint64_t(max_entries()) * 8 + page_size - 1) & ~(page_size - 1); }
	uint64_t pages() const { return mmap_bytes() / page_size; }
};

// What one iteration does between mmap and munmap.
struct Pattern {
	bool populate = false;     // MAP_POPULATE (or its uffd equivalent)
	uint64_t touch_pages = 0;  // read one byte of each of the first N pages
	std::string name() const;  // "mmap", "mmap+touch", "populate", "populate+touch", or "...+touchN"
};

// The kernel the port-driven backends (uffd, model) run at.
struct PortLevel {
	Patch patch = Patch::v2;
	Arch arch = Arch::A64;
	Door door = Door::anon;  // mmap(2)'s front door; regular/direct reach v1's 32-bit wrap
};

class Worker {
public:
	virtual ~Worker() = default;
	// mmap the whole geometry; nullptr on failure, with the reason in *err.
	virtual void *map(bool populate, std::string *err) = 0;
	// munmap what map() returned; false (and *err) on failure.
	virtual bool unmap(void *addr, std::string *err) = 0;
};

class Backend {
public:
	virtual ~Backend() = default;
	// Per-thread state; nullptr and *err on failure.
	virtual std::unique_ptr<Worker> make_worker(std::string *err) = 0;
};

inline constexpr const char *kBackendNames[] = {"bpf-array", "bpf-arena", "memfd", "uffd", "anon", "model"};
bool is_backend_name(const std::string &);

// Creates a real (host) backend. nullptr with *skip set when the host does
// not let us (no privileges, no kernel support): the caller prints
// "skipped: <reason>" and carries on. "model" is not a real backend (model.h).
std::unique_ptr<Backend> make_backend(const std::string &name, const Geometry &, const PortLevel &,
				      std::string *skip);

}  // namespace fl::bench
