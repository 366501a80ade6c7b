// SPDX-License-Identifier: GPL-2.0-only
// Port of tools/testing/selftests/bpf/libarena/src/buddy.bpf.c at level
// `before` (etsal/linux@2bf69ffa: arena_spin_lock_irqsave, bulk alloc/free),
// the NMI deferred free of etsal/linux@a1829e03, and the caches seed 002
// adds to this file (written from its cover letter: UNCONFIRMED; levels in
// buddy.h).
// Libarena names and control flow; every arena access goes through the
// program's view of the arena (Arena::load*/store*). ASAN poisoning is not
// modelled (the shadow model checks the same thing: no use of a free block).
// arena_stderr diagnostics are dropped; can_loop is the loop bound itself.
#include "libarena/buddy.h"
#include "libarena/buddy_index.h"

#include "libarena/buddy_sync.h"

namespace fl::libarena {

namespace {

// The chunk's fields (struct buddy_chunk __arena *chunk).
u8 orders_byte(buddy_ctx *b, u64 chunk, u64 i) { return b->arena->load8(chunk + CHUNK_ORDERS + i); }
u64 freelist(buddy_ctx *b, u64 chunk, u64 o) { return b->arena->load64(chunk + CHUNK_FREELISTS + 8 * o); }
void set_freelist(buddy_ctx *b, u64 chunk, u64 o, u64 v) { b->arena->store64(chunk + CHUNK_FREELISTS + 8 * o, v); }
u64 chunk_next(buddy_ctx *b, u64 chunk) { return b->arena->load64(chunk + CHUNK_NEXT); }
void set_chunk_next(buddy_ctx *b, u64 chunk, u64 v) { b->arena->store64(chunk + CHUNK_NEXT, v); }
u32 hdr_prev(buddy_ctx *b, u64 h) { return b->arena->load32(h + HDR_PREV); }
u32 hdr_next(buddy_ctx *b, u64 h) { return b->arena->load32(h + HDR_NEXT); }
void set_hdr_prev(buddy_ctx *b, u64 h, u32 v) { b->arena->store32(h + HDR_PREV, v); }
void set_hdr_next(buddy_ctx *b, u64 h, u32 v) { b->arena->store32(h + HDR_NEXT, v); }
u64 first_chunk(buddy_ctx *b) { return b->arena->load64(b->buddy + BUDDY_FIRST_CHUNK); }
void set_first_chunk(buddy_ctx *b, u64 c) { b->arena->store64(b->buddy + BUDDY_FIRST_CHUNK, c); }

}  // namespace

// Not libarena: a point only the harness sees (no scheduling decision):
// where its shadow model follows a step no other CPU can interleave with.
void buddy_note(buddy_ctx *b, const sched::Label &label)
{
	if (b->faults && b->faults->at_point) {
		AllocatorAccesses harness(false);
		b->faults->at_point(b->faults->point_arg, b, label);
	}
}

// Not libarena: a named point of the allocator. The harness's NMI arrives
// here (buddy_faults::at_point), then the scheduler may switch CPUs.
static void buddy_point(buddy_ctx *b, const sched::Label &label)
{
	buddy_note(b, label);
	if (sched::Scheduler *s = sched::active())
		s->point(label);
}

// Not libarena: a fallible acquisition (Scheduler::fallible_point) at
// `label`, where the harness's NMI may arrive first: true when the schedule
// makes it fail (a record "at TN LABEL#K fail"), or the harness's own
// answer (buddy_faults::fails). The harness is told at `failed` (its shadow
// model must not expect the locked path's result). Without either nothing fails.
static bool buddy_fails(buddy_ctx *b, const sched::Label &label, const sched::Label &failed)
{
	buddy_note(b, label);
	if (b->faults && b->faults->fails) {
		if (!b->faults->fails(b->faults->point_arg, b))
			return false;
	} else if (sched::Scheduler *s = sched::active(); !s || !s->fallible_point(label)) {
		return false;
	}
	buddy_note(b, failed);
	return true;
}

// include/bpf_arena_spin_lock.h: arena_spin_lock_irqsave. Held on this CPU
// (an NMI over the holder) it spins until the may_goto budget runs out
// (-ETIMEDOUT); held by another CPU it waits (buddy_sync.h: simulated or native).
// rqspinlock may also give up for a holder or a deadlock the Program does not
// model (another program on the same arena, -ETIMEDOUT/-EDEADLK): a schedule
// event at "buddy_lock:timeout", the one error every caller must handle.
static int buddy_lock(buddy_ctx *b)
{
	if (buddy_fails(b, FL_SCHED_LABEL("timeout"), FL_SCHED_LABEL("failed")))
		return -ETIMEDOUT;
	if (int ret = arena_spin_lock_word(b, b->buddy + BUDDY_LOCK, FL_SCHED_LABEL("spin")))
		return ret;
	buddy_point(b, FL_SCHED_LABEL("held"));  /* "lock_held": where an NMI finds the lock taken */
	return 0;
}

// include/bpf_arena_spin_lock.h: arena_spin_unlock_irqrestore
static void buddy_unlock(buddy_ctx *b)
{
	arena_spin_unlock_word(b, b->buddy + BUDDY_LOCK, FL_SCHED_LABEL("release"));
}

// src/buddy.bpf.c: buddy_reserve_arena_vaddr
static int buddy_reserve_arena_vaddr(buddy_ctx *b)
{
	b->arena->store64(b->buddy + BUDDY_VADDR, 0);

	return b->arena->reserve_pages(b->arena->base() + BUDDY_VADDR_OFFSET, BUDDY_VADDR_SIZE / __PAGE_SIZE);
}

// src/buddy.bpf.c: buddy_unreserve_arena_vaddr. Free up any unused address space.
static void buddy_unreserve_arena_vaddr(buddy_ctx *b)
{
	u64 vaddr = b->arena->load64(b->buddy + BUDDY_VADDR);

	b->arena->free_pages(b->arena->base() + BUDDY_VADDR_OFFSET + vaddr,
			     u32((BUDDY_VADDR_SIZE - vaddr) / __PAGE_SIZE));

	b->arena->store64(b->buddy + BUDDY_VADDR, 0);
}

// src/buddy.bpf.c: buddy_alloc_arena_vaddr. Bump buddy->vaddr by a chunk
// with a CAS; a CAS lost for the whole can_loop budget gives -EINVAL.
static int buddy_alloc_arena_vaddr(buddy_ctx *b, u64 *vaddrp)
{
	u64 vaddr, next;
	u64 i;

	if (!b || !vaddrp)
		return -EINVAL;

	for (i = 0; i < CAN_LOOP_BUDGET; i++) {
		vaddr = b->arena->load64(b->buddy + BUDDY_VADDR);
		next = vaddr + BUDDY_CHUNK_BYTES;

		if (next > BUDDY_VADDR_SIZE)
			return -EINVAL;

#if defined(FL_PLANT_BUDDY_VADDR_BUMP_PLAIN)
		/* planted slip (test-only build): the CAS written as a plain
		 * store after the load (an update split into a read and a write) */
		b->arena->store64(b->buddy + BUDDY_VADDR, next);
#else
		if (arena_cmpxchg64(b, b->buddy + BUDDY_VADDR, vaddr, next) != vaddr)
			continue;
#endif

		*vaddrp = b->arena->base() + BUDDY_VADDR_OFFSET + vaddr;

		return 0;
	}

	return -EINVAL;
}

const char *to_string(buddy_level l)
{
	switch (l) {
	case buddy_level::before: return "before";
	case buddy_level::nmi_deferred: return "nmi_deferred";
	case buddy_level::ret_overwrite: return "ret_overwrite";
	case buddy_level::series: return "series";
	case buddy_level::guard_leak: return "guard_leak";
	}
	return "?";
}

// src/buddy.bpf.c: arena_next_pow2
u64 arena_next_pow2(u64 n)
{
	return buddy_next_pow2<buddy_words>(n);
}

// src/buddy.bpf.c: idx_set_allocated
static int idx_set_allocated(buddy_ctx *b, u64 chunk, u64 idx, bool allocated)
{
	bool already_allocated;
	u8 byte;

	if (idx >= BUDDY_CHUNK_ITEMS)
		return -EINVAL;  /* "setting state of invalid idx" */

	byte = b->arena->load8(chunk + CHUNK_ALLOCATED + idx / 8);
	already_allocated = byte & (1 << (idx % 8));
	if (already_allocated == allocated)
		return -EINVAL;  /* "Double alloc/free of idx" */

	if (allocated)
		byte |= u8(1 << (idx % 8));
	else
		byte &= u8(~(1 << (idx % 8)));
	b->arena->store8(chunk + CHUNK_ALLOCATED + idx / 8, byte);

	return 0;
}

// src/buddy.bpf.c: idx_is_allocated
static int idx_is_allocated(buddy_ctx *b, u64 chunk, u64 idx, bool *allocated)
{
	if (idx >= BUDDY_CHUNK_ITEMS)
		return -EINVAL;

	*allocated = b->arena->load8(chunk + CHUNK_ALLOCATED + idx / 8) & (1 << (idx % 8));
	return 0;
}

// src/buddy.bpf.c: idx_set_order. Two orders per byte; keep the other nibble.
static int idx_set_order(buddy_ctx *b, u64 chunk, u64 idx, u8 order)
{
	u8 prev_order;

	if (order >= BUDDY_CHUNK_NUM_ORDERS)
		return -EINVAL;

	if (idx >= BUDDY_CHUNK_ITEMS)
		return -EINVAL;

	prev_order = orders_byte(b, chunk, buddy_order_byte_off<buddy_words>(idx));
	order = buddy_order_byte_set<buddy_words>(prev_order, idx, order);

	b->arena->store8(chunk + CHUNK_ORDERS + buddy_order_byte_off<buddy_words>(idx), order);

	return 0;
}

// src/buddy.bpf.c: idx_get_order (BUDDY_CHUNK_NUM_ORDERS for a bad index)
static u8 idx_get_order(buddy_ctx *b, u64 chunk, u64 idx)
{
	u8 result;

	if (idx >= BUDDY_CHUNK_ITEMS)
		return BUDDY_CHUNK_NUM_ORDERS;

	result = orders_byte(b, chunk, buddy_order_byte_off<buddy_words>(idx));

	return buddy_order_byte_get<buddy_words>(result, idx);
}

// src/buddy.bpf.c: idx_to_addr
static u64 idx_to_addr(u64 chunk, u64 idx)
{
	return buddy_idx_to_addr<buddy_words>(chunk, idx);
}

// src/buddy.bpf.c: idx_to_header (NULL for a bad or allocated index)
static u64 idx_to_header(buddy_ctx *b, u64 chunk, u64 idx)
{
	bool allocated;
	u64 address;

	if (idx_is_allocated(b, chunk, idx, &allocated))
		return 0;

	if (allocated)
		return 0;

	address = idx_to_addr(chunk, idx);
	if (!address)
		return 0;

	return address + BUDDY_HEADER_OFF;
}

// src/buddy.bpf.c: header_add_freelist
static void header_add_freelist(buddy_ctx *b, u64 chunk, u64 header, u64 idx, u8 order)
{
	u64 tmp_header;

	idx_set_order(b, chunk, idx, order);

	set_hdr_next(b, header, u32(freelist(b, chunk, order)));
	set_hdr_prev(b, header, BUDDY_CHUNK_ITEMS);

	if (hdr_next(b, header) != BUDDY_CHUNK_ITEMS) {
		tmp_header = idx_to_header(b, chunk, hdr_next(b, header));
		set_hdr_prev(b, tmp_header, u32(idx));
	}

	set_freelist(b, chunk, order, idx);
}

// src/buddy.bpf.c: header_remove_freelist
static void header_remove_freelist(buddy_ctx *b, u64 chunk, u64 header, u8 order)
{
	u64 tmp_header;

	if (hdr_prev(b, header) != BUDDY_CHUNK_ITEMS) {
		tmp_header = idx_to_header(b, chunk, hdr_prev(b, header));
		set_hdr_next(b, tmp_header, hdr_next(b, header));
	}

	if (hdr_next(b, header) != BUDDY_CHUNK_ITEMS) {
		tmp_header = idx_to_header(b, chunk, hdr_next(b, header));
		set_hdr_prev(b, tmp_header, hdr_prev(b, header));
	}

	/* Pop off the list head if necessary. */
	if (idx_to_header(b, chunk, freelist(b, chunk, order)) == header)
		set_freelist(b, chunk, order, hdr_next(b, header));

	set_hdr_prev(b, header, BUDDY_CHUNK_ITEMS);
	set_hdr_next(b, header, BUDDY_CHUNK_ITEMS);
}

// src/buddy.bpf.c: size_to_order (64 makes the caller reject the size)
u64 size_to_order(u64 size)
{
	return buddy_size_to_order<buddy_words>(size);
}

// src/buddy.bpf.c: buddy_chunk_get. Reserve-then-allocate a 1 MiB aligned
// chunk, then carve the metadata out of its first slots.
static u64 buddy_chunk_get(buddy_ctx *b)
{
	u64 ord;
	u64 chunk;
	u64 vaddr;
	int ret;

	ret = buddy_alloc_arena_vaddr(b, &vaddr);
	if (ret)
		return 0;

	/* Addresses must be aligned to the chunk boundary. */
	if (vaddr % BUDDY_CHUNK_BYTES)
		return 0;

	/* Unreserve the address space. */
	b->arena->free_pages(vaddr, BUDDY_CHUNK_PAGES);

	chunk = b->arena->alloc_pages(vaddr, BUDDY_CHUNK_PAGES);
	if (!chunk)
		return 0;  /* "[ALLOC FAILED]" */

	if (buddy_lock(b)) {
		b->arena->free_pages(vaddr, BUDDY_CHUNK_PAGES);
		return 0;
	}

	/* Mark all freelists as empty. */
	for (ord = 0; ord < BUDDY_CHUNK_NUM_ORDERS; ord++)
		set_freelist(b, chunk, ord, BUDDY_CHUNK_ITEMS);

	/* Carve the metadata out of the chunk's first slots (buddy_index.h). */
	ret = buddy_chunk_carve(
		SIZEOF_BUDDY_CHUNK, [&](u32 idx, u64) { return idx_set_allocated(b, chunk, idx, true); },
		[&](u32 idx, u64 order) {
			u64 header = idx_to_header(b, chunk, idx);

			if (!header)
				return -EINVAL;
			header_add_freelist(b, chunk, header, idx, u8(order));
			return 0;
		});
	if (ret) {
		buddy_unlock(b);
		return 0;
	}

	buddy_unlock(b);

	return chunk;
}

// src/buddy.bpf.c: buddy_init
int buddy_init(buddy_ctx *b)
{
	AllocatorAccesses allocator(true);  /* not libarena: the lockset checker's */
	u64 chunk;
	int ret;

	ret = buddy_reserve_arena_vaddr(b);
	if (ret)
		return ret;

	chunk = buddy_chunk_get(b);

	if (buddy_lock(b)) {
		if (chunk)  /* bpf_arena_free_pages(NULL) is a no-op */
			b->arena->free_pages(chunk, BUDDY_CHUNK_PAGES);
		return -EINVAL;
	}

	/* Chunk is already properly unpoisoned if allocated. */
	if (chunk)
		set_chunk_next(b, chunk, first_chunk(b));

	/* Put the chunk at the beginning of the list. */
	set_first_chunk(b, chunk);

	buddy_unlock(b);

	return chunk ? 0 : -ENOMEM;
}

// src/buddy.bpf.c: buddy_destroy. No lock, no check for live allocations.
int buddy_destroy(buddy_ctx *b)
{
	AllocatorAccesses allocator(true);  /* not libarena: the lockset checker's */
	u64 chunk, next;

	if (!b)
		return -EINVAL;

	/* (nmi levels, series) what points into the chunks goes first: the
	 * deferred list and the caches (the port's free_pages has scheduling
	 * points, and a checker there would follow them into freed pages) */
	if (b->level != buddy_level::before)
		b->arena->store64(b->buddy + BUDDY_DEFERRED_FREE, 0);
	for (u64 off = BUDDY_CACHES; has_caches(b->level) && off < SIZEOF_BUDDY_SERIES; off += 8)
		b->arena->store64(b->buddy + off, 0);

	for (chunk = first_chunk(b); chunk; chunk = next) {
		next = chunk_next(b, chunk);
		b->arena->free_pages(chunk, BUDDY_CHUNK_PAGES);
	}

	/* Free up any part of the address space that did not get used. */
	buddy_unreserve_arena_vaddr(b);

	/* Clear all fields. */
	set_first_chunk(b, 0);

	return 0;
}

// src/buddy.bpf.c: buddy_chunk_alloc. One block of order order_req +
// order_allocs, split into 2^order_allocs allocations of order order_req.
static u64 buddy_chunk_alloc(buddy_ctx *b, u64 chunk, int order_req, int order_allocs)
{
	u64 header, tmp_header, next_header;
	u32 idx, tmpidx, retidx;
	u64 address;
	u64 order = 0;
	u64 i;

	for (order = u64(order_req + order_allocs); order < BUDDY_CHUNK_NUM_ORDERS; order++) {
		if (freelist(b, chunk, order) != BUDDY_CHUNK_ITEMS)
			break;
	}

	if (order >= BUDDY_CHUNK_NUM_ORDERS)
		return 0;

	retidx = u32(freelist(b, chunk, order));
	header = idx_to_header(b, chunk, retidx);
	if (!header)
		return 0;

	set_freelist(b, chunk, order, hdr_next(b, header));

	if (hdr_next(b, header) != BUDDY_CHUNK_ITEMS) {
		next_header = idx_to_header(b, chunk, hdr_next(b, header));
		set_hdr_prev(b, next_header, BUDDY_CHUNK_ITEMS);
	}

	set_hdr_prev(b, header, BUDDY_CHUNK_ITEMS);
	set_hdr_next(b, header, BUDDY_CHUNK_ITEMS);
	/*
	 * For a bulk allocation, record the allocation state and size
	 * of each item separately so each can be freed independently.
	 */
	for (i = 0, idx = retidx; i < (1u << order_allocs); i++) {
		if (idx_set_order(b, chunk, idx, u8(order_req)))
			return 0;

		if (idx_set_allocated(b, chunk, idx, true))
			return 0;

		idx += 1u << order_req;
	}

	address = idx_to_addr(chunk, retidx);
	if (!address)
		return 0;

	/* If we allocated from a larger-order chunk, split the buddies. */
	for (i = u64(order_req + order_allocs); i < order; i++) {
		/* Flip the bit for the current order (it is 0: add 1 << i). */
		idx = u32(buddy_split_idx<buddy_words>(retidx, i));

		/* Add the buddy of the allocation to the free list. */
		header = idx_to_header(b, chunk, idx);

		if (idx_set_order(b, chunk, idx, u8(i)))
			return 0;

		/* Push the header to the beginning of the freelists list. */
		tmpidx = u32(freelist(b, chunk, i));

		set_hdr_prev(b, header, BUDDY_CHUNK_ITEMS);
		set_hdr_next(b, header, tmpidx);

		if (tmpidx != BUDDY_CHUNK_ITEMS) {
			tmp_header = idx_to_header(b, chunk, tmpidx);
			set_hdr_prev(b, tmp_header, idx);
		}

		set_freelist(b, chunk, i, idx);
	}

	return address;
}

// src/buddy.bpf.c: buddy_alloc_from_existing_chunks. Scan the chunks in list order.
static u64 buddy_alloc_from_existing_chunks(buddy_ctx *b, int order, int norder)
{
	u64 chunk;
	u64 address;

	for (chunk = first_chunk(b); chunk; chunk = chunk_next(b, chunk)) {
		address = buddy_chunk_alloc(b, chunk, order, norder);
		if (address)
			return address;
	}

	return 0;
}

// src/buddy.bpf.c: buddy_alloc_from_new_chunk. Link the chunk in and allocate from it.
static u64 buddy_alloc_from_new_chunk(buddy_ctx *b, u64 chunk, int order, int norder)
{
	u64 address;

#if defined(FL_PLANT_BUDDY_NEW_CHUNK_LINK_UNLOCKED)
	/* planted slip (test-only build): the chunk linked in before the lock
	 * is taken (a lock dropped around step-free code); once linked, a
	 * failed lock leaves it to the buddy */
	set_chunk_next(b, chunk, first_chunk(b));
	set_first_chunk(b, chunk);
	if (buddy_lock(b))
		return 0;
#else
	if (buddy_lock(b)) {
		/* Open upstream (corpora/buddy/open/new_chunk_leaked_on_lock_failure.bl):
		 * the chunk buddy_chunk_get allocated is neither linked nor freed,
		 * so its 256 pages leak and the next buddy_init's reserve of the
		 * address space fails with -EBUSY. Not libarena: the fix, freeing
		 * it as buddy_init does, unless the Program asks for upstream's. */
		if (!b->open_upstream)
			b->arena->free_pages(chunk, BUDDY_CHUNK_PAGES);
		return 0;
	}

	set_chunk_next(b, chunk, first_chunk(b));
	set_first_chunk(b, chunk);
#endif

	address = buddy_chunk_alloc(b, first_chunk(b), order, norder);

	buddy_unlock(b);

	return address;
}

// src/buddy.bpf.c: buddy_alloc_memory
static u64 buddy_alloc_memory(buddy_ctx *b, u64 size, u64 norder)
{
	u64 address = 0;
	u64 chunk;
	int order;

	if (!b)
		return 0;

	order = int(size_to_order(size));
	/* (nmi levels) an NMI never refills: it may interrupt the lock holder.
	 * (series) it may: the lock gives -ETIMEDOUT if this CPU holds it. */
	if ((b->level == buddy_level::nmi_deferred || b->level == buddy_level::ret_overwrite) && b->in_nmi)
		return 0;
	if (order < 0 || order >= int(BUDDY_CHUNK_NUM_ORDERS) || norder >= BUDDY_CHUNK_NUM_ORDERS - u64(order))
		return 0;  /* "invalid order" */

	if (buddy_lock(b))
		return 0;

	address = buddy_alloc_from_existing_chunks(b, order, int(norder));
#if defined(FL_PLANT_BUDDY_ALLOC_RETURN_LOCKED)
	/* planted slip (test-only build, fl_libarena_plant_alloc_return_locked):
	 * the found path jumps over the unlock, so the CPU goes back to the
	 * program holding the buddy lock (I13). */
	if (address)
		goto done;
#endif
	buddy_unlock(b);
	if (address)
		goto done;

	/* Get a new chunk. (series, UNCONFIRMED) not in NMI: the series
	 * allocates in NMI, but bpf_arena_alloc_pages / free_pages take the
	 * page-table lock, which is not NMI-safe (lockdep, issue 37). Not
	 * libarena: `before` has no NMI design upstream and grows the arena
	 * in NMI too (corpora/buddy/open/nmi_grows_the_arena.bl); it takes
	 * the series' rule unless a Program asks for upstream's code. */
	if (b->in_nmi && (has_caches(b->level) || !b->open_upstream))
		goto done;
	chunk = buddy_chunk_get(b);
	if (chunk)
		address = buddy_alloc_from_new_chunk(b, chunk, order, int(norder));

done:
	/* ASAN unpoisoning of exactly `size` bytes per object: not modelled */
	return address;
}

// src/buddy.bpf.c: buddy_alloc_bulk. All or nothing: 2^norder contiguous objects.
int buddy_alloc_bulk(buddy_ctx *b, u64 size, u64 norder, u64 *out)
{
	AllocatorAccesses allocator(true);  /* not libarena: the lockset checker's */
	u64 address;
	u64 i, off;
	u64 step;

	if (!b || !out || norder >= BUDDY_CHUNK_NUM_ORDERS)
		return -EINVAL;

	address = buddy_alloc_memory(b, size, norder);
	if (!address)
		return -ENOMEM;

	step = BUDDY_MIN_ALLOC_BYTES << size_to_order(size);
	for (i = 0, off = 0; i < (1u << norder); i++, off += step)
		out[i] = address + off;

	return 0;
}

// ---- the series' caches (seed 002; the code is not public) -----------------

static int deferred_free_complete(buddy_ctx *b);

namespace {

u32 cache_nr(buddy_ctx *b, u64 cache, u64 o) { return b->arena->load32(cache_nr_at(cache, o)); }
void set_cache_nr(buddy_ctx *b, u64 cache, u64 o, u32 n) { b->arena->store32(cache_nr_at(cache, o), n); }
u32 xfer_count(buddy_ctx *b, u64 xfer) { return b->arena->load32(xfer + XFER_COUNT); }
void set_xfer_count(buddy_ctx *b, u64 xfer, u32 n) { b->arena->store32(xfer + XFER_COUNT, n); }
u64 xfer_obj(u64 xfer, u64 i) { return xfer + XFER_OBJS + 8 * i; }

}  // namespace

// seed 002 "Add a transfer cache": arena_spin_trylock on the transfer
// cache's lock; busy means another CPU (or this CPU's interrupted context)
// holds it. UNCONFIRMED (the series' code is not public).
// A schedule event may make it fail as if busy ("buddy_xfer_trylock:try").
static int buddy_xfer_trylock(buddy_ctx *b, u64 xfer)
{
	int ret;

	if (buddy_fails(b, FL_SCHED_LABEL("try"), FL_SCHED_LABEL("failed")))
		return -EBUSY;
	ret = arena_spin_trylock_word(b, xfer + XFER_LOCK);
	if (ret)  /* not libarena: held by another CPU (a schedule that stopped it there),
		   * an event of this op's environment the harness's sequential orders repeat */
		buddy_note(b, FL_SCHED_LABEL("failed"));
	return ret;
}

// seed 002 "Add a transfer cache": arena_spin_unlock. UNCONFIRMED.
static void buddy_xfer_unlock(buddy_ctx *b, u64 xfer)
{
	arena_spin_untrylock_word(b, xfer + XFER_LOCK);
	buddy_point(b, FL_SCHED_LABEL("release"));
}

// seed 002 "Refill local caches in batches" + "Add a transfer cache" (v2:
// the count checked before locking): out of line, under the CPU's claim.
// A batch from the transfer cache if it holds one (the unlocked count is a
// hint, re-checked under the lock), else buddy_alloc_bulk(). Returns the
// LIFO's new length (0: nothing to refill with). UNCONFIRMED.
static u32 buddy_cache_refill(buddy_ctx *b, u64 cache, u64 order)
{
	u64 xfer = buddy_xfer_of(b, order);
	u64 batch[BUDDY_CACHE_BATCH];
	bool moved = false;
	u32 count;
	u64 i;

	count = arena_read_once32(b, xfer + XFER_COUNT);  /* no lock taken when it is short */
	buddy_point(b, FL_SCHED_LABEL("count_checked"));
#if defined(FL_PLANT_BUDDY_REFILL_WITHOUT_LOCK)
	/* planted slip (test-only build): the batch is taken with no trylock */
	if (count >= BUDDY_CACHE_BATCH) {
#else
	if (count >= BUDDY_CACHE_BATCH && !buddy_xfer_trylock(b, xfer)) {
#endif
#if !defined(FL_PLANT_BUDDY_REFILL_NO_RECHECK)
		count = xfer_count(b, xfer);
#endif  /* planted slip (test-only build): the count read before the trylock is trusted */
		if (count >= BUDDY_CACHE_BATCH) {
			for (i = 0; i < BUDDY_CACHE_BATCH; i++)
#if defined(FL_PLANT_BUDDY_REFILL_PAST_COUNT)
				/* planted slip (test-only build, fl_libarena_plant_refill_past_count):
				 * the batch is read from above the count, the stale slots */
				batch[i] = b->arena->load64(xfer_obj(xfer, count + i - (count == BUDDY_XFER_CAP ? BUDDY_CACHE_BATCH : 0)));
#else
				batch[i] = b->arena->load64(xfer_obj(xfer, count - BUDDY_CACHE_BATCH + i));
#endif
			set_xfer_count(b, xfer, u32(count - BUDDY_CACHE_BATCH));
			moved = true;
		}
#if !defined(FL_PLANT_BUDDY_REFILL_WITHOUT_LOCK)
		buddy_xfer_unlock(b, xfer);
#endif
	}

	if (!moved && buddy_alloc_bulk(b, BUDDY_MIN_ALLOC_BYTES << order, BUDDY_CACHE_BATCH_ORDER, batch))
		return 0;

	for (i = 0; i < BUDDY_CACHE_BATCH; i++)
		b->arena->store64(cache_obj_at(cache, order, i), batch[i]);
	set_cache_nr(b, cache, order, u32(BUDDY_CACHE_BATCH));

	return u32(BUDDY_CACHE_BATCH);
}

// seed 002 "Add a transfer cache" (v2): out of line, under the CPU's claim.
// The top batch of a full LIFO goes to the transfer cache if it has room
// (count checked before the trylock, re-checked under it), else, when the
// transfer cache is full or busy, back to the buddy with buddy_free_bulk().
// A failed trylock must neither lose nor duplicate the batch: the LIFO
// shrinks only once the batch has landed. Returns the new length. UNCONFIRMED.
static u32 buddy_cache_spill(buddy_ctx *b, u64 cache, u64 order, u32 nr)
{
	u64 xfer = buddy_xfer_of(b, order);
	u64 batch[BUDDY_CACHE_BATCH];
	bool moved = false;
	u32 count;
	u64 i;

	for (i = 0; i < BUDDY_CACHE_BATCH; i++)
		batch[i] = b->arena->load64(cache_obj_at(cache, order, nr - BUDDY_CACHE_BATCH + i));
#if defined(FL_PLANT_BUDDY_SPILL_SHRINK_BEFORE_LAND)
	/* planted slip (test-only build): the LIFO shrinks before the batch
	 * has landed, so a spill that fails (busy, then the buddy lock
	 * failing) loses the batch */
	set_cache_nr(b, cache, order, u32(nr - BUDDY_CACHE_BATCH));
#endif

	count = arena_read_once32(b, xfer + XFER_COUNT);
	buddy_point(b, FL_SCHED_LABEL("count_checked"));
	if (count + BUDDY_CACHE_BATCH <= BUDDY_XFER_CAP && !buddy_xfer_trylock(b, xfer)) {
#if !defined(FL_PLANT_BUDDY_SPILL_NO_RECHECK)
		count = xfer_count(b, xfer);
#endif  /* planted slip (test-only build): the count read before the trylock is trusted */
		if (count + BUDDY_CACHE_BATCH <= BUDDY_XFER_CAP) {
			for (i = 0; i < BUDDY_CACHE_BATCH; i++)
				b->arena->store64(xfer_obj(xfer, count + i), batch[i]);
#if !defined(FL_PLANT_BUDDY_SPILL_COUNT_AFTER_UNLOCK)
			set_xfer_count(b, xfer, u32(count + BUDDY_CACHE_BATCH));
#endif
			moved = true;
		}
		buddy_xfer_unlock(b, xfer);
#if defined(FL_PLANT_BUDDY_SPILL_COUNT_AFTER_UNLOCK)
		/* planted slip (test-only build): the count is published after the unlock */
		if (moved)
			set_xfer_count(b, xfer, u32(count + BUDDY_CACHE_BATCH));
#endif
	}

	/* full or busy: v2 spills the local batch with buddy_free_bulk() */
	if (!moved && buddy_free_bulk(b, batch, BUDDY_CACHE_BATCH))
		return nr;  /* nothing freed (the lock): keep the batch */

	nr -= u32(BUDDY_CACHE_BATCH);
	set_cache_nr(b, cache, order, nr);

	return nr;
}

// seed 002 "Add buddy per-CPU caches" + "Handle NMI reentrancy": the
// lockless fast path. The guard (buddy_cache.active) is claimed once per
// call; an NMI over a claimed cache backs off (NULL: the caller takes the
// buddy path). UNCONFIRMED.
static u64 buddy_cache_alloc(buddy_ctx *b, u64 order)
{
	u64 cache = buddy_cache_of(b, b->cpu);
	u64 address = 0;
	u32 nr;

	if (arena_read_once32(b, cache + CACHE_ACTIVE))
		return 0;
	arena_write_once32(b, cache + CACHE_ACTIVE, 1);
	cache_guard_claimed(b, cache + CACHE_ACTIVE);
	buddy_point(b, FL_SCHED_LABEL("claimed"));

	nr = cache_nr(b, cache, order);
	if (!nr)
		nr = buddy_cache_refill(b, cache, order);

#if defined(FL_PLANT_BUDDY_POP_AFTER_RELEASE)
	/* planted slip (test-only build): the guard is released before the pop */
	cache_guard_released(b, cache + CACHE_ACTIVE);
	arena_write_once32(b, cache + CACHE_ACTIVE, 0);
#endif
	if (nr) {
		address = b->arena->load64(cache_obj_at(cache, order, nr - 1));
		buddy_point(b, FL_SCHED_LABEL("pop"));
		set_cache_nr(b, cache, order, nr - 1);
	}

#if !defined(FL_PLANT_BUDDY_POP_AFTER_RELEASE)
	cache_guard_released(b, cache + CACHE_ACTIVE);
	arena_write_once32(b, cache + CACHE_ACTIVE, 0);
#endif

	return address;
}

// seed 002 "Add buddy per-CPU caches" + "Handle NMI reentrancy": push on
// this CPU's LIFO, spilling a batch out of line when it is full. -EAGAIN
// when the guard is taken (an NMI over this CPU's cache), -ENOSPC when the
// spill could not run: the caller frees through the buddy. guard_leak
// returns after the push without restoring the guard (etsal/linux@a1829e03
// buddy_bmag_free's `return ret` before `active` is reset). UNCONFIRMED.
static int buddy_cache_free(buddy_ctx *b, u64 addr, u64 order)
{
	u64 cache = buddy_cache_of(b, b->cpu);
	u32 nr;

	if (arena_read_once32(b, cache + CACHE_ACTIVE))
		return -EAGAIN;
	arena_write_once32(b, cache + CACHE_ACTIVE, 1);
	cache_guard_claimed(b, cache + CACHE_ACTIVE);
	buddy_point(b, FL_SCHED_LABEL("claimed"));

	nr = cache_nr(b, cache, order);
	if (nr >= BUDDY_CACHE_CAP)
		nr = buddy_cache_spill(b, cache, order, nr);
	if (nr >= BUDDY_CACHE_CAP) {
#if !defined(FL_PLANT_BUDDY_ENOSPC_GUARD_KEPT)
		cache_guard_released(b, cache + CACHE_ACTIVE);
		arena_write_once32(b, cache + CACHE_ACTIVE, 0);
#endif  /* planted slip (test-only build): the error path keeps the guard */
		return -ENOSPC;
	}

	b->arena->store64(cache_obj_at(cache, order, nr), addr);
	buddy_point(b, FL_SCHED_LABEL("push"));
	set_cache_nr(b, cache, order, nr + 1);
	if (b->level == buddy_level::guard_leak)
		return 0;  /* H: the guard stays set */

	cache_guard_released(b, cache + CACHE_ACTIVE);
	arena_write_once32(b, cache + CACHE_ACTIVE, 0);

	return 0;
}

// Not in the cover letter (UNCONFIRMED whether the series has one): every
// per-CPU LIFO and transfer cache back to the buddy with buddy_free_bulk(),
// between ops; the harness's `drain` op, for the round trip (I7).
int buddy_cache_drain_all(buddy_ctx *b)
{
	AllocatorAccesses allocator(true);  /* not libarena: the lockset checker's */
	u64 objs[BUDDY_CACHE_CAP > BUDDY_XFER_CAP ? BUDDY_CACHE_CAP : BUDDY_XFER_CAP];
	int ret = 0, err;
	u64 o, i;
	int cpu;

	if (!has_caches(b->level))
		return 0;

	/* Its own CPU's LIFOs are emptied as that CPU's cache ops empty them,
	 * under its guard: an NMI here finds the cache busy and takes the
	 * locked path. (The other CPUs run no op meanwhile: the runner drains
	 * only when the draining CPU is alone.) A guard already set (a leak the
	 * checks report) is left as it is. */
	const u64 own = buddy_cache_of(b, b->cpu);
	const bool guarded = !arena_read_once32(b, own + CACHE_ACTIVE);
	if (guarded) {
		arena_write_once32(b, own + CACHE_ACTIVE, 1);
		cache_guard_claimed(b, own + CACHE_ACTIVE);
	}
	for (o = 0; o < BUDDY_CACHE_ORDERS; o++) {
		for (cpu = 0; cpu < BUDDY_NR_CPUS; cpu++) {
			u64 cache = buddy_cache_of(b, cpu);
			u32 nr = cache_nr(b, cache, o);
			/* out of the LIFO first, back if nothing could be freed */
			for (i = 0; i < nr && i < BUDDY_CACHE_CAP; i++)
				objs[i] = b->arena->load64(cache_obj_at(cache, o, i));
			set_cache_nr(b, cache, o, 0);
			err = buddy_free_bulk(b, objs, i);
			ret = ret ? ret : err;
			if (err)
				set_cache_nr(b, cache, o, nr);
		}
		/* The transfer cache under its lock, as its users take it (not
		 * across the free: its slots past count are stale from the
		 * moment the count drops, so a failed free writes them back) */
		u64 xfer = buddy_xfer_of(b, o);
		if (arena_spin_trylock_word(b, xfer + XFER_LOCK))
			continue;  /* held by an NMI this drain interrupted: left as it is */
		u32 count = xfer_count(b, xfer);
		for (i = 0; i < count && i < BUDDY_XFER_CAP; i++)
			objs[i] = b->arena->load64(xfer_obj(xfer, i));
		set_xfer_count(b, xfer, 0);
		arena_spin_untrylock_word(b, xfer + XFER_LOCK);
		err = buddy_free_bulk(b, objs, i);
		ret = ret ? ret : err;
		if (err && !arena_spin_trylock_word(b, xfer + XFER_LOCK)) {
			u32 n;
			for (n = 0; n < i; n++)
				b->arena->store64(xfer_obj(xfer, n), objs[n]);
			set_xfer_count(b, xfer, u32(i));
			arena_spin_untrylock_word(b, xfer + XFER_LOCK);
		}
	}

	if (guarded) {
		cache_guard_released(b, own + CACHE_ACTIVE);
		arena_write_once32(b, own + CACHE_ACTIVE, 0);
	}

	/* and what NMIs deferred (the frees above drain it only if they ran:
	 * with every cache empty none takes the lock; a libFuzzer finding) */
	if (b->arena->load64(b->buddy + BUDDY_DEFERRED_FREE)) {
		err = buddy_lock(b);
		if (!err) {
			err = deferred_free_complete(b);
			buddy_unlock(b);
		}
		ret = ret ? ret : err;
	}

	return ret;
}

// src/buddy.bpf.c: buddy_alloc; (series) the CPU's LIFO first.
u64 buddy_alloc(buddy_ctx *b, u64 size)
{
	AllocatorAccesses allocator(true);  /* not libarena: the lockset checker's */
	u64 order = size_to_order(size);
	u64 address;

	if (has_caches(b->level) && order < BUDDY_CACHE_ORDERS) {
		address = buddy_cache_alloc(b, order);
		if (address)
			return address;
	}

	return buddy_alloc_memory(b, size, 0);
}

// src/buddy.bpf.c: buddy_free_unlocked. Coalesce with free buddies of equal order.
static int buddy_free_unlocked(buddy_ctx *b, u64 addr)
{
	u64 header, buddy_header;
	u64 idx, buddy_idx, tmp_idx;
	u64 chunk;
	bool allocated;
	u8 order;
	int ret;

	if (!b)
		return -EINVAL;

	if (addr & (BUDDY_MIN_ALLOC_BYTES - 1))
		return -EINVAL;  /* "Freeing unaligned address" */

	/* Get (chunk, idx) out of the address. */
	chunk = buddy_addr_chunk<buddy_words>(addr);
	idx = buddy_addr_idx<buddy_words>(addr);

	/* Mark the block as unallocated so we can access the header. */
	ret = idx_set_allocated(b, chunk, idx, false);
	if (ret)
		return ret;

	order = idx_get_order(b, chunk, idx);
	header = idx_to_header(b, chunk, idx);
	(void)header;

	for (; order < BUDDY_CHUNK_NUM_ORDERS; order++) {
		buddy_idx = buddy_buddy_idx<buddy_words>(idx, order);

		/* Check if the buddy is actually free (errors ignored, as upstream). */
		allocated = false;
		idx_is_allocated(b, chunk, buddy_idx, &allocated);
		if (allocated)
			break;

		/* A buddy of another order: done coalescing. */
		if (idx_get_order(b, chunk, buddy_idx) != order)
			break;

		buddy_header = idx_to_header(b, chunk, buddy_idx);
		header_remove_freelist(b, chunk, buddy_header, order);

		/* Keep the left header out of the two buddies, drop the other one. */
		tmp_idx = idx;
		idx = buddy_merged_idx<buddy_words>(idx, buddy_idx);
		if (idx != tmp_idx)
			buddy_idx = tmp_idx;  /* the dropped one */

		/* Remove the buddy from the freelists so that we can merge it. */
		idx_set_order(b, chunk, buddy_idx, order);
	}

	/* Header properly freed but not in any freelists yet. */
	idx_set_order(b, chunk, idx, order);

	header = idx_to_header(b, chunk, idx);
	header_add_freelist(b, chunk, header, idx, order);

	return 0;
}

// src/buddy.bpf.c (a1829e03): buddy_deferred_free_push. In NMI: push the
// object on buddy->deferred_free, the link in its bytes [0, 8) (the header
// is at [8, 16)); the cmpxchg loop retries only when a scheduling point at
// an access (access_points) let another context in between.
static void buddy_deferred_free_push(buddy_ctx *b, u64 first, u64 last)
{
	u64 head;
	u64 i;

	for (i = 0; i < CAN_LOOP_BUDGET; i++) {
		head = arena_read_once64(b, b->buddy + BUDDY_DEFERRED_FREE);
		{
			/* not libarena: the link is published by the cmpxchg below
			 * and read only by the drain that took the list with its own
			 * cmpxchg (message passing, not a lock): declared for the
			 * lockset checker, which cannot see that order */
			sched::MarkedAccess published;
			b->arena->store64(last, head);
		}
#if defined(FL_PLANT_BUDDY_DEFERRED_PUSH_PLAIN)
		/* planted slip (test-only build): the cmpxchg split into the read above and a write */
		{
			sched::MarkedAccess once;  /* WRITE_ONCE(buddy->deferred_free, first) */
			b->arena->store64(b->buddy + BUDDY_DEFERRED_FREE, first);
		}
		return;
#else
		if (arena_cmpxchg64(b, b->buddy + BUDDY_DEFERRED_FREE, head, first) == head)
			return;
#endif
	}
}

// src/buddy.bpf.c (a1829e03): deferred_free_complete. Under the lock: take
// the whole list (cmpxchg head -> NULL), free each object, keep the first error.
static int deferred_free_complete(buddy_ctx *b)
{
	u64 obj, next;
	u64 i;
	int ret = 0, err;

	do  /* xchg(&buddy->deferred_free, NULL) */
		obj = arena_read_once64(b, b->buddy + BUDDY_DEFERRED_FREE);
	while (arena_cmpxchg64(b, b->buddy + BUDDY_DEFERRED_FREE, obj, 0) != obj);
	buddy_note(b, FL_SCHED_LABEL("taken"));  /* the whole list is this CPU's now */
	for (i = 0; obj && i < CAN_LOOP_BUDGET; i++, obj = next) {
		next = b->arena->load64(obj);
		err = buddy_free_unlocked(b, obj);
		ret = ret ? ret : err;
	}

	return ret;
}

// src/buddy.bpf.c: buddy_free (NULL is a no-op). The nmi levels defer in
// NMI and drain after the locked free; ret_overwrite keeps H's
// `ret = deferred_free_complete()`, which drops the free's own error.
int buddy_free(buddy_ctx *b, u64 addr)
{
	AllocatorAccesses allocator(true);  /* not libarena: the lockset checker's */
	int ret, err;

	if (!b)
		return -EINVAL;

	if (!addr)
		return 0;

	if (has_caches(b->level)) {
		/* (series, UNCONFIRMED) lockless checks, then the CPU's LIFO: the
		 * caller owns the object, so its bit and nibble are stable. A
		 * cached object keeps its allocated bit, so a second free of one
		 * still cached is not caught (src/libarena/README.md, D2). */
		u64 chunk = buddy_addr_chunk<buddy_words>(addr);
		u64 idx = buddy_addr_idx<buddy_words>(addr);
		bool allocated = false;
		u8 order;

		if (addr & (BUDDY_MIN_ALLOC_BYTES - 1))
			return -EINVAL;
		{
			sched::MarkedAccess lockless;  /* not libarena: declared lockless for the lockset checker */
			if (idx_is_allocated(b, chunk, idx, &allocated) || !allocated)
				return -EINVAL;
			order = idx_get_order(b, chunk, idx);
		}
		if (order < BUDDY_CACHE_ORDERS && !buddy_cache_free(b, addr, order))
			return 0;
	}

	if (b->level != buddy_level::before && b->in_nmi) {
		/* Not in H: the push writes the link at addr, so an unaligned
		 * pointer would overwrite the link of the object before it (a
		 * fuzz finding, see src/libarena/README.md). */
		if (addr & (BUDDY_MIN_ALLOC_BYTES - 1))
			return -EINVAL;
		buddy_deferred_free_push(b, addr, addr);
		return 0;
	}

	ret = buddy_lock(b);
	if (ret)
		return ret;

	ret = buddy_free_unlocked(b, addr);

	switch (b->level) {
	case buddy_level::before:
		break;
	case buddy_level::nmi_deferred:
	case buddy_level::series:
	case buddy_level::guard_leak:
		err = deferred_free_complete(b);
		ret = ret ? ret : err;
		break;
	case buddy_level::ret_overwrite:
		ret = deferred_free_complete(b);
		break;
	}

	buddy_unlock(b);

	return ret;
}

// src/buddy.bpf.c: buddy_free_bulk. One lock; NULLs skipped; the first
// error, but keep going. (series, seed 002 v2) it fails only when nothing
// was freed: the first error only if no object was. UNCONFIRMED.
int buddy_free_bulk(buddy_ctx *b, const u64 *addrs, u64 naddrs)
{
	AllocatorAccesses allocator(true);  /* not libarena: the lockset checker's */
	u64 i, freed = 0;
	int err;
	int ret = 0;

	if (!b)
		return -EINVAL;

	if (!naddrs)
		return 0;

	if (!addrs)
		return -EINVAL;

	if (b->level != buddy_level::before && b->in_nmi) {
		/* chain the non-NULL objects locally, splice them in with one cmpxchg */
		u64 first = 0, last = 0;
		for (i = 0; i < naddrs; i++) {
			if (!addrs[i])
				continue;
			if (last) {
				sched::MarkedAccess published;  /* not libarena: as the push's link */
				b->arena->store64(last, addrs[i]);
			}
			else
				first = addrs[i];
			last = addrs[i];
		}
		if (first)
			buddy_deferred_free_push(b, first, last);
		return 0;
	}

	ret = buddy_lock(b);
	if (ret)
		return ret;

	for (i = 0; i < naddrs; i++) {
		/* NULL pointers are ignored. */
		if (!addrs[i])
			continue;

		err = buddy_free_unlocked(b, addrs[i]);
		ret = ret ? ret : err;
		freed += !err;
	}
#if !defined(FL_PLANT_BUDDY_BULK_DRAIN_AFTER_UNLOCK)
	if (b->level != buddy_level::before) {
		err = deferred_free_complete(b);
		ret = ret ? ret : err;
	}
#endif

	buddy_unlock(b);
#if defined(FL_PLANT_BUDDY_BULK_DRAIN_AFTER_UNLOCK)
	/* planted slip (test-only build): the deferred list drained after the
	 * unlock (work moved after an unlock) */
	if (b->level != buddy_level::before) {
		err = deferred_free_complete(b);
		ret = ret ? ret : err;
	}
#endif

	if (has_caches(b->level) && freed)
		return 0;

	return ret;
}

}  // namespace fl::libarena
