// SPDX-License-Identifier: GPL-2.0-only
// The index arithmetic of tools/testing/selftests/bpf/libarena/src/buddy.bpf.c,
// written once over a family of integer types W (W::u8, W::u32, W::u64) so
// that the allocator (buddy.cpp, W = buddy_words: the C types) and the Z3
// proofs (src/libarena/smt/, W = symbolic bit-vectors of the same widths)
// run the same code. Each function is the expression or loop the named
// libarena function computes inline, with its control flow; buddy.cpp calls
// these instead of repeating them.
//
// FL_LIBARENA_PLANT (test-only builds of the proofs, never the allocator)
// compiles in the planted slips the proofs must catch; buddy_plant names the
// one in force. The inline namespace keeps a planted build's instantiations
// apart from the real ones.
#pragma once

#include "libarena/buddy.h"

#ifdef FL_LIBARENA_PLANT
#include <cstring>
#endif

namespace fl::libarena {

#ifdef FL_LIBARENA_PLANT
inline namespace planted {
inline const char *buddy_plant = "";  // the planted slip in force ("" : none)
inline bool buddy_planted(const char *name) { return std::strcmp(buddy_plant, name) == 0; }
#else
inline namespace real {
constexpr bool buddy_planted(const char *) { return false; }
#endif

// The C types: what buddy.cpp instantiates.
struct buddy_words {
	using u8 = fl::libarena::u8;
	using u32 = fl::libarena::u32;
	using u64 = fl::libarena::u64;
};

// src/common.bpf.c: arena_fls for any word family (the symbolic family
// overloads arena_fls itself; this one is for the C types).
inline u64 arena_fls_of(u64 x) { return arena_fls(x); }

// src/buddy.bpf.c: arena_next_pow2
template <class W>
typename W::u64 buddy_next_pow2(typename W::u64 n)
{
	n--;
	n |= n >> 1;
	n |= n >> 2;
	n |= n >> 4;
	n |= n >> 8;
	n |= n >> 16;
	n |= n >> 32;
	n++;

	return n;
}

// src/buddy.bpf.c: size_to_order (64 makes the caller reject the size)
template <class W>
typename W::u64 buddy_size_to_order(typename W::u64 size)
{
	using u64 = typename W::u64;
	u64 order;

	if (size == u64(0) || size > u64(1ull << 32))
		return u64(64);  /* "illegal size request" */

	order = arena_fls_of(buddy_next_pow2<W>(size)) - 1;
	if (buddy_planted("size_to_order"))  /* the 0-based arena_fls of versions A/B used with -1's caller */
		order = arena_fls_of(buddy_next_pow2<W>(size));
	if (order < u64(BUDDY_MIN_ALLOC_SHIFT))
		return u64(0);

	return order - BUDDY_MIN_ALLOC_SHIFT;
}

// src/buddy.bpf.c: idx_set_order's byte update. Two orders per byte (even
// idx: high nibble, odd idx: low nibble); keep the other nibble.
template <class W>
typename W::u8 buddy_order_byte_set(typename W::u8 prev_order, typename W::u64 idx, typename W::u8 order)
{
	using u8 = typename W::u8;

	if (idx & 0x1) {
		order &= 0xf;
		order |= (prev_order & (buddy_planted("nibble") ? 0x0f : 0xf0));
	} else {
		order = u8(order << 4);
		order |= (prev_order & 0xf);
	}

	return order;
}

// src/buddy.bpf.c: idx_get_order's nibble of the byte
template <class W>
typename W::u8 buddy_order_byte_get(typename W::u8 result, typename W::u64 idx)
{
	return (idx & 0x1) ? typename W::u8(result & 0xf) : typename W::u8(result >> 4);
}

// src/buddy.bpf.c: the byte of chunk->orders[] idx_set_order/idx_get_order touch
template <class W>
typename W::u64 buddy_order_byte_off(typename W::u64 idx)
{
	return idx / 2;
}

// src/buddy.bpf.c: buddy_free_unlocked's buddy index, `idx ^ (1 << order)`
template <class W>
typename W::u64 buddy_buddy_idx(typename W::u64 idx, typename W::u8 order)
{
	using u32 = typename W::u32;

	if (buddy_planted("buddy_xor"))
		return idx + (u32(1) << order);
	return idx ^ (u32(1) << order);
}

// src/buddy.bpf.c: buddy_free_unlocked keeps the left header of two
// buddies: the merged block's index
template <class W>
typename W::u64 buddy_merged_idx(typename W::u64 idx, typename W::u64 buddy_idx)
{
	if (buddy_idx < idx)
		return buddy_idx;
	return idx;
}

// src/buddy.bpf.c: buddy_chunk_alloc's split, the buddy of order i pushed
// when a block at retidx is split ("flip the bit for the current order":
// it is 0, so add 1 << i)
template <class W>
typename W::u64 buddy_split_idx(typename W::u64 retidx, typename W::u64 i)
{
	using u32 = typename W::u32;

	if (buddy_planted("split"))
		return retidx + (u32(1) << (i + 1));
	return retidx + (u32(1) << i);
}

// src/buddy.bpf.c: buddy_free_unlocked's "get (chunk, idx) out of the address"
template <class W>
typename W::u64 buddy_addr_chunk(typename W::u64 addr)
{
	return addr & ~BUDDY_CHUNK_OFFSET_MASK;
}

template <class W>
typename W::u64 buddy_addr_idx(typename W::u64 addr)
{
	if (buddy_planted("addr_idx"))
		return (addr & (BUDDY_CHUNK_OFFSET_MASK >> 1)) / BUDDY_MIN_ALLOC_BYTES;
	return (addr & BUDDY_CHUNK_OFFSET_MASK) / BUDDY_MIN_ALLOC_BYTES;
}

// src/buddy.bpf.c: idx_to_addr (NULL for an index past the chunk)
template <class W>
typename W::u64 buddy_idx_to_addr(typename W::u64 chunk, typename W::u64 idx)
{
	using u64 = typename W::u64;

	if (idx >= u64(BUDDY_CHUNK_ITEMS))
		return u64(0);

	return chunk + (idx * BUDDY_MIN_ALLOC_BYTES);
}

// src/buddy.bpf.c: buddy_chunk_get's carve-out of the chunk's own metadata
// (left bytes of struct buddy_chunk at its start) together with
// add_leftovers_to_freelist: each metadata block is marked allocated
// (set_allocated(idx, order) != 0 stops it, -EINVAL; its nibble stays 0) and the buddies it leaves are
// pushed on the free lists (add_free(idx, ord) != 0 stops it). -E2BIG: the
// metadata would need a block of order 16 ("buddy chunk metadata require
// allocation of order").
template <class SetAllocated, class AddFree>
int buddy_chunk_carve(u64 left, SetAllocated &&set_allocated, AddFree &&add_free)
{
	u64 order, ord, min_order, max_order;
	int power2;
	u32 idx;

	max_order = BUDDY_CHUNK_NUM_ORDERS;
	idx = 0;
	while (left) {
		power2 = int(arena_fls(left)) - 1;
		if (power2 >= int(BUDDY_CHUNK_NUM_ORDERS))
			return -E2BIG;

		/* Round up allocations that are too small. */
		left -= (power2 >= int(BUDDY_MIN_ALLOC_SHIFT)) ? 1ull << power2 : left;
		order = (power2 >= int(BUDDY_MIN_ALLOC_SHIFT)) ? u64(power2) - BUDDY_MIN_ALLOC_SHIFT : 0;

		if (set_allocated(idx, order))
			return -EINVAL;

		min_order = (left || buddy_planted("carve_out")) ? order + 1 : order;
		/* add_leftovers_to_freelist: mark the buddies free and list them */
		for (ord = min_order; ord < max_order; ord++)
			if (add_free(u32(idx + (1u << ord)), ord))
				return -EINVAL;  /* "idx has no header" */

		/* Adjust the index. */
		idx += 1u << order;
		max_order = order;
	}

	return 0;
}

}  // inline namespace real / planted

}  // namespace fl::libarena
