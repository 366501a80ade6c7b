// SPDX-License-Identifier: GPL-2.0-only
// The native build's arena (not libarena code, and not the port's arena
// map): a 4 GiB range of this process's address space, aligned to 4 GiB as
// libarena's user_vm_start is, with bpf_arena_alloc_pages / free_pages /
// reserve_pages semantics (a page is free, reserved or allocated; allocated
// pages are zeroed and read-write, the rest PROT_NONE). User addresses are
// the real addresses, so the allocator's loads and stores are plain
// (relaxed atomic) memory accesses: the same buddy.cpp, timed on real threads.
// Page operations take a mutex (they run only when a chunk is taken or
// given back); loads and stores are lock-free.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace fl::libarena {

class NativeArena {
public:
	NativeArena();  // reserves the range; ok() says whether it could
	~NativeArena();
	NativeArena(const NativeArena &) = delete;
	NativeArena &operator=(const NativeArena &) = delete;

	bool ok() const { return base_ != 0; }
	uint64_t base() const { return base_; }  // user_vm_start: 4 GiB aligned

	// bpf_arena_alloc_pages with an address: 0 unless every page is free.
	uint64_t alloc_pages(uint64_t addr, uint32_t cnt);
	// bpf_arena_free_pages: frees (zaps) allocated pages, unreserves reserved ones.
	void free_pages(uint64_t addr, uint32_t cnt);
	// bpf_arena_reserve_pages: 0, -EINVAL (range), -EBUSY (a page is allocated); unaligned: 0, nothing reserved.
	int reserve_pages(uint64_t addr, uint32_t cnt);

	uint8_t load8(uint64_t a) { return __atomic_load_n(reinterpret_cast<uint8_t *>(a), __ATOMIC_RELAXED); }
	uint32_t load32(uint64_t a) { return __atomic_load_n(reinterpret_cast<uint32_t *>(a), __ATOMIC_RELAXED); }
	uint64_t load64(uint64_t a) { return __atomic_load_n(reinterpret_cast<uint64_t *>(a), __ATOMIC_RELAXED); }
	void store8(uint64_t a, uint8_t v) { __atomic_store_n(reinterpret_cast<uint8_t *>(a), v, __ATOMIC_RELAXED); }
	void store32(uint64_t a, uint32_t v) { __atomic_store_n(reinterpret_cast<uint32_t *>(a), v, __ATOMIC_RELAXED); }
	void store64(uint64_t a, uint64_t v) { __atomic_store_n(reinterpret_cast<uint64_t *>(a), v, __ATOMIC_RELAXED); }
	// The lock words and the vaddr CAS of buddy_sync.h.
	uint32_t *word32(uint64_t a) { return reinterpret_cast<uint32_t *>(a); }
	uint64_t *word64(uint64_t a) { return reinterpret_cast<uint64_t *>(a); }
	bool present(uint64_t a);  // the page at a is allocated

	// The invariant checker's reads (buddy_invariants.cpp reads the
	// simulated arena as machine().arena_kernel_read): false unless every
	// page of [addr, addr + n) is allocated. Between ops only.
	NativeArena &machine() { return *this; }
	bool arena_kernel_read(uint64_t addr, void *dst, uint32_t n);

private:
	enum : uint8_t { kFree, kReserved, kAllocated };
	bool range(uint64_t addr, uint64_t cnt, uint64_t *first) const;  // page index of addr, in range

	std::mutex lock_;
	std::vector<uint8_t> state_;  // per page
	void *map_ = nullptr;
	uint64_t map_len_ = 0;
	uint64_t base_ = 0;
};

}  // namespace fl::libarena
