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
//                   drain's result over its own, so a double free reports 0;
//   series        - seed 002 ("bpf libarena allocator improvements" v2, whose
//                   code is not public: every cache function is UNCONFIRMED):
//                   nmi_deferred plus per-CPU object LIFOs per order (lockless,
//                   guarded by buddy_cache.active), per-order transfer caches
//                   shared between CPUs (v2: the count checked before the
//                   trylock; a full or busy transfer cache spills the batch with
//                   buddy_free_bulk()), allocation in NMI, and buddy_free_bulk()
//                   failing only when nothing was freed;
//   guard_leak    - historical: series with H's (etsal/linux@a1829e03) bmag
//                   free fast path, which returns after a cached push without
//                   restoring the CPU's guard, so that CPU's cache stays off.
#pragma once

#include "base/sched/label.h"
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
//                void *deferred_free (nmi levels); [series: the cache state below] }
// The lock word holds the owning CPU + 1 (0: free).
inline constexpr u64 BUDDY_FIRST_CHUNK = 0, BUDDY_LOCK = 8, BUDDY_VADDR = 16, BUDDY_DEFERRED_FREE = 24,
		     SIZEOF_BUDDY = 32;

// The series' caches (seed 002; sizes UNCONFIRMED: the cover letter gives
// none; its table's latency rising between 16 and 64 allocations per
// iteration suggests a larger capacity; these are small so that short
// Programs reach refill, spill, "full" and "busy").
inline constexpr u64 BUDDY_CACHE_ORDERS = 8;  // orders 0..7 (16 B .. 2 KiB) are cached, as bmag's
inline constexpr u64 BUDDY_CACHE_CAP = 8;     // objects per per-CPU LIFO
inline constexpr u64 BUDDY_CACHE_BATCH_ORDER = 2;
inline constexpr u64 BUDDY_CACHE_BATCH = 1ull << BUDDY_CACHE_BATCH_ORDER;  // objects moved per refill / spill
inline constexpr u64 BUDDY_XFER_CAP = 8;      // objects per transfer cache (two batches)
#ifdef FL_BUDDY_NATIVE
inline constexpr int BUDDY_NR_CPUS = 8;       // the native build's: one per producer of the bench
inline constexpr u64 BUDDY_GLOBALS_PAGES = 2;
#else
inline constexpr int BUDDY_NR_CPUS = 4;       // the harness's CPUs (libarena: _Q_MAX_CPUS)
inline constexpr u64 BUDDY_GLOBALS_PAGES = 1;
#endif

// struct buddy_cache { u32 active; u32 nr[ORDERS]; u64 objs[ORDERS][CAP]; } per CPU, in struct buddy
inline constexpr u64 CACHE_ACTIVE = 0, CACHE_NR = 4, CACHE_OBJS = 40,
		     SIZEOF_BUDDY_CACHE = CACHE_OBJS + 8 * BUDDY_CACHE_ORDERS * BUDDY_CACHE_CAP;
// struct buddy_xfer { arena_spinlock_t lock; u32 count; u64 objs[XFER_CAP]; } per order, in struct buddy
inline constexpr u64 XFER_LOCK = 0, XFER_COUNT = 4, XFER_OBJS = 8, SIZEOF_BUDDY_XFER = XFER_OBJS + 8 * BUDDY_XFER_CAP;
inline constexpr u64 BUDDY_CACHES = SIZEOF_BUDDY, BUDDY_XFERS = BUDDY_CACHES + BUDDY_NR_CPUS * SIZEOF_BUDDY_CACHE,
		     SIZEOF_BUDDY_SERIES = BUDDY_XFERS + BUDDY_CACHE_ORDERS * SIZEOF_BUDDY_XFER;
static_assert(SIZEOF_BUDDY_SERIES <= BUDDY_GLOBALS_PAGES * __PAGE_SIZE, "struct buddy stays in the globals pages");

enum class buddy_level { before, nmi_deferred, ret_overwrite, series, guard_leak };
const char *to_string(buddy_level);
inline constexpr buddy_level kBuddyLevels[] = {buddy_level::before, buddy_level::nmi_deferred,
					       buddy_level::ret_overwrite, buddy_level::series,
					       buddy_level::guard_leak};
// The levels with the series' caches.
inline bool has_caches(buddy_level l) { return l == buddy_level::series || l == buddy_level::guard_leak; }

// The may_goto budget of a loop whose length the data decides (the deferred list).
inline constexpr u64 CAN_LOOP_BUDGET = 1u << 16;

// Not libarena: the harness's handle on what BPF would not let a test
// see. (Lock failures are schedule events: Scheduler::fallible_point at
// "buddy_lock:timeout" and "buddy_xfer_trylock:try".)
struct buddy_faults {
	// Called at every named point of the allocator ("buddy_lock:held",
	// "buddy_cache_free:push", ...), before the scheduler's decision there:
	// where the harness delivers an NMI.
	void (*at_point)(void *arg, struct buddy_ctx *b, const sched::Label &) = nullptr;
	void *point_arg = nullptr;
	// When set, it answers the fallible acquisitions instead of the
	// scheduler (buddy_fails): the linearizability candidates repeat the
	// lock failures of the run they explain.
	bool (*fails)(void *arg, struct buddy_ctx *b) = nullptr;
};

// One allocator as one context sees it: `buddy` is the arena address of its
// struct buddy; cpu and in_nmi are the context's (bpf_get_smp_processor_id(),
// bpf_in_nmi()), so each CPU and each NMI has its own buddy_ctx.
struct buddy_ctx {
	Arena *arena;
	u64 buddy;
	buddy_faults *faults;
	buddy_level level = buddy_level::before;
	bool in_nmi = false;
	int cpu = 0;
	// (not libarena) the slips this port found in libarena and that are
	// open upstream (corpora/buddy/open/), run as upstream has them; false
	// (every search's default): as their fix would, so that a search goes
	// on past what is already known instead of stopping at it each time.
	bool open_upstream = false;
};

// struct buddy's cache fields (series levels).
inline u64 buddy_cache_of(const buddy_ctx *b, int cpu) { return b->buddy + BUDDY_CACHES + u64(cpu) * SIZEOF_BUDDY_CACHE; }
inline u64 buddy_xfer_of(const buddy_ctx *b, u64 order) { return b->buddy + BUDDY_XFERS + order * SIZEOF_BUDDY_XFER; }
inline u64 cache_nr_at(u64 cache, u64 order) { return cache + CACHE_NR + 4 * order; }
inline u64 cache_obj_at(u64 cache, u64 order, u64 i) { return cache + CACHE_OBJS + 8 * (order * BUDDY_CACHE_CAP + i); }

// src/buddy.bpf.c: the API (arena pointers are u64 user addresses; 0 is NULL)
// Not libarena: the harness's hook at a point it sees (buddy_faults::at_point),
// for the sync shim's unlock too (buddy_sync.h).
void buddy_note(buddy_ctx *b, const sched::Label &label);

int buddy_init(buddy_ctx *b);
int buddy_destroy(buddy_ctx *b);
u64 buddy_alloc(buddy_ctx *b, u64 size);
int buddy_alloc_bulk(buddy_ctx *b, u64 size, u64 norder, u64 *out);
int buddy_free(buddy_ctx *b, u64 addr);
int buddy_free_bulk(buddy_ctx *b, const u64 *addrs, u64 naddrs);
// series: every per-CPU and transfer cache back to the buddy (between ops).
int buddy_cache_drain_all(buddy_ctx *b);
// Exposed for the proofs and the shadow model: the index arithmetic.
u64 size_to_order(u64 size);
u64 arena_next_pow2(u64 n);

}  // namespace fl::libarena
