// SPDX-License-Identifier: GPL-2.0-only
// Port of tools/testing/selftests/bpf/libarena/include/libarena/buddy.h:
// the buddy allocator's constants and the layout of its arena structures.
// The structures live in arena memory, so here they are offsets from their
// arena address (struct buddy_chunk at the start of each 1 MiB chunk,
// struct buddy among the arena globals), read and written through the
// program's view of the arena (common.h).
//
// Levels (buddy_level):
//   before        - etsal/linux@2bf69ffa: upstream's single-lock allocator with
//                   arena_spin_lock_irqsave, plus buddy_alloc_bulk / buddy_free_bulk;
//   nmi_deferred  - before plus the NMI handling of etsal/linux@a1829e03 (H):
//                   alloc in NMI returns NULL, free in NMI pushes the object on
//                   buddy->deferred_free, drained under the lock by the next
//                   free / free_bulk; with buddy_free's error kept (ret = ret ?: drain);
//   ret_overwrite - historical (H, I, J as stored): buddy_free assigns the
//                   drain's result over its own, so a double free reports 0.
// The series' per-CPU and transfer caches (seed 002) are not built here.
#pragma once

#include "libarena/common.h"

namespace fl::libarena {

inline constexpr u64 BUDDY_MIN_ALLOC_SHIFT = 4;
inline constexpr u64 BUDDY_MIN_ALLOC_BYTES = 1ull << BUDDY_MIN_ALLOC_SHIFT;
inline constexpr u64 BUDDY_CHUNK_NUM_ORDERS = 16;
inline constexpr u64 BUDDY_CHUNK_BYTES = BUDDY_MIN_ALLOC_BYTES << BUDDY_CHUNK_NUM_ORDERS;  // 1 MiB
inline constexpr u64 BUDDY_HEADER_OFF = 8;
inline constexpr u64 BUDDY_CHUNK_ITEMS = 1ull << BUDDY_CHUNK_NUM_ORDERS;  // also the list sentinel
inline constexpr u64 BUDDY_CHUNK_OFFSET_MASK = BUDDY_CHUNK_BYTES - 1;
inline constexpr u64 BUDDY_VADDR_OFFSET = BUDDY_CHUNK_BYTES;
inline constexpr u64 BUDDY_VADDR_SIZE = BUDDY_CHUNK_BYTES << 10;  // 1 GiB
inline constexpr u64 BUDDY_CHUNK_PAGES = BUDDY_CHUNK_BYTES / __PAGE_SIZE;

// struct buddy_header { u32 prev_index, next_index; } at block + BUDDY_HEADER_OFF
inline constexpr u64 HDR_PREV = 0, HDR_NEXT = 4, SIZEOF_BUDDY_HEADER = 8;

// struct buddy_chunk { u8 orders[ITEMS/2]; u8 allocated[ITEMS/8]; u64 freelists[ORDERS]; chunk *next; }
inline constexpr u64 CHUNK_ORDERS = 0;
inline constexpr u64 CHUNK_ALLOCATED = CHUNK_ORDERS + BUDDY_CHUNK_ITEMS / 2;
inline constexpr u64 CHUNK_FREELISTS = CHUNK_ALLOCATED + BUDDY_CHUNK_ITEMS / 8;
inline constexpr u64 CHUNK_NEXT = CHUNK_FREELISTS + 8 * BUDDY_CHUNK_NUM_ORDERS;
inline constexpr u64 SIZEOF_BUDDY_CHUNK = CHUNK_NEXT + 8;  // 41,096

// struct buddy { struct buddy_chunk *first_chunk; arena_spinlock_t lock; u64 vaddr;
//                void *deferred_free (nmi levels); }
inline constexpr u64 BUDDY_FIRST_CHUNK = 0, BUDDY_LOCK = 8, BUDDY_VADDR = 16, BUDDY_DEFERRED_FREE = 24,
		     SIZEOF_BUDDY = 32;

enum class buddy_level { before, nmi_deferred, ret_overwrite };
const char *to_string(buddy_level);

// The may_goto budget of a loop whose length the data decides (the deferred list).
inline constexpr u64 CAN_LOOP_BUDGET = 1u << 16;

// Not libarena: the harness's handles on the things BPF would not let a
// test control (lock failure, the can_loop budget).
struct buddy_faults {
	int lock_fail_next = 0;     // the next N arena_spin_lock_irqsave calls give -ETIMEDOUT
	// An NMI at a named point inside an op: called right after the lock is
	// taken (point "lock_held"), once, then cleared.
	void (*nmi_at_lock_held)(void *arg) = nullptr;
	void *nmi_arg = nullptr;
};

// One allocator: `buddy` is the arena address of its struct buddy.
struct buddy_ctx {
	Arena *arena;
	u64 buddy;
	buddy_faults *faults;
	buddy_level level = buddy_level::before;
	bool in_nmi = false;  // bpf_in_nmi()
};

// src/buddy.bpf.c: the API (arena pointers are u64 user addresses; 0 is NULL)
int buddy_init(buddy_ctx *b);
int buddy_destroy(buddy_ctx *b);
u64 buddy_alloc(buddy_ctx *b, u64 size);
int buddy_alloc_bulk(buddy_ctx *b, u64 size, u64 norder, u64 *out);
int buddy_free(buddy_ctx *b, u64 addr);
int buddy_free_bulk(buddy_ctx *b, const u64 *addrs, u64 naddrs);
// Exposed for the proofs and the shadow model: the index arithmetic.
u64 size_to_order(u64 size);
u64 arena_next_pow2(u64 n);

}  // namespace fl::libarena
