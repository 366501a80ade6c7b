// SPDX-License-Identifier: GPL-2.0-only
// The synchronisation buddy.cpp runs on: arena_spin_lock on a lock word in
// arena memory, a trylock, and __sync_val_compare_and_swap. Not libarena
// code: the shim layer, as tools/testing/radix-tree runs kernel code on
// pthreads. Two builds of the same buddy.cpp:
//   simulated (default) - the scheduler's CPUs (src/base/sched): one context
//       runs at a time and switches only at scheduling points, so a load then
//       a store is atomic; the buddy lock is a scheduler spinlock;
//   native (FL_BUDDY_NATIVE, src/libarena/native/) - real threads, one per
//       CPU: real atomics on the lock words, a spinning arena_spin_lock.
// Lock words hold the owning CPU + 1 (0: free).
#pragma once

#include "libarena/buddy.h"

#ifdef FL_BUDDY_NATIVE
#include <sched.h>
#endif

// buddy_point's scheduling points: natively no scheduler is ever active
// (sched::active() is null on every thread), so they cost a test.
#include "base/sched/scheduler.h"

namespace fl::libarena {

#ifdef FL_BUDDY_NATIVE

// arena_spin_lock_irqsave (include/bpf_arena_spin_lock.h) on real threads:
// test-and-test-and-set. Held by this CPU (an NMI over the holder) it gives
// -ETIMEDOUT at once, as the real one does when its may_goto budget runs
// out; held by another CPU it spins. User space cannot disable preemption,
// so after a while the waiter yields: with more producers than cores the
// holder may be preempted and only a yield lets it run.
inline int arena_spin_lock_word(buddy_ctx *b, u64 lock, const sched::Label &)
{
	u32 *w = b->arena->word32(lock);
	const u32 me = u32(b->cpu) + 1;
	for (;;) {
		u32 expected = 0;
		if (__atomic_compare_exchange_n(w, &expected, me, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return 0;
		if (expected == me)
			return -ETIMEDOUT;
		for (unsigned spins = 0; __atomic_load_n(w, __ATOMIC_RELAXED); spins++) {
			__builtin_ia32_pause();
			if (spins >= 1024) {
				sched_yield();
				spins = 0;
			}
		}
	}
}

// arena_spin_unlock_irqrestore
inline void arena_spin_unlock_word(buddy_ctx *b, u64 lock, const sched::Label &)
{
	__atomic_store_n(b->arena->word32(lock), 0u, __ATOMIC_RELEASE);
}

// arena_spin_trylock: 0, or -EBUSY when any context holds it.
inline int arena_spin_trylock_word(buddy_ctx *b, u64 lock)
{
	u32 expected = 0;
	return __atomic_compare_exchange_n(b->arena->word32(lock), &expected, u32(b->cpu) + 1, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)
		       ? 0
		       : -EBUSY;
}

inline void arena_spin_untrylock_word(buddy_ctx *b, u64 lock)
{
	__atomic_store_n(b->arena->word32(lock), 0u, __ATOMIC_RELEASE);
}

inline void cache_guard_claimed(buddy_ctx *, u64) {}
inline void cache_guard_released(buddy_ctx *, u64) {}

// __sync_val_compare_and_swap on a u64 in arena memory: the value it found.
inline u64 arena_cmpxchg64(buddy_ctx *b, u64 addr, u64 old, u64 new_)
{
	__atomic_compare_exchange_n(b->arena->word64(addr), &old, new_, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return old;
}

#else  // simulated

inline const sched::LockClass kBuddyLock{"buddy->lock", sched::LockKind::spinlock, true};
inline const sched::LockClass kXferLock{"buddy_xfer->lock", sched::LockKind::spinlock, true};
// A CPU's cache guard, buddy_cache.active, as the lock it is: claimed or
// backed off from, never waited for.
inline const sched::LockClass kCacheGuard{"buddy_cache.active", sched::LockKind::spinlock, true};

inline const void *lock_obj(u64 lock) { return reinterpret_cast<const void *>(uintptr_t(lock)); }

// arena_spin_lock_irqsave on the scheduler's CPUs. Held on this CPU (an NMI
// over the holder) it spins until the may_goto budget runs out
// (-ETIMEDOUT); held by another CPU it waits (under the scheduler the CPU
// blocks; without one there is one context, so a held lock is this CPU's).
inline int arena_spin_lock_word(buddy_ctx *b, u64 lock, const sched::Label &spin)
{
	sched::Scheduler *s = sched::active();
	sched::MarkedAccess lock_word;
	const u32 owner = b->arena->load32(lock);
	if (owner && (!s || owner == u32(b->cpu) + 1))
		return -ETIMEDOUT;
	if (s)
		s->spin_lock(lock_obj(lock), kBuddyLock, spin);
	sched::NoAccessPoint taken;  /* the cmpxchg that took it */
	b->arena->store32(lock, u32(b->cpu) + 1);
	return 0;
}

// arena_spin_unlock_irqrestore. The harness sees the point between the
// store and the unlock's scheduling decision (buddy_note), where an NMI
// the schedule runs finds the lock free.
inline void arena_spin_unlock_word(buddy_ctx *b, u64 lock, const sched::Label &release)
{
	sched::MarkedAccess lock_word;
	b->arena->store32(lock, 0);
	buddy_note(b, release);
	if (sched::Scheduler *s = sched::active())
		s->spin_unlock(lock_obj(lock), kBuddyLock, release);
}

// arena_spin_trylock: no scheduling decision (a failed trylock never
// waits); lockdep and the lockset checker see the lock it takes.
inline int arena_spin_trylock_word(buddy_ctx *b, u64 lock)
{
	sched::MarkedAccess lock_word;
	if (b->arena->load32(lock))
		return -EBUSY;
	sched::NoAccessPoint same_cmpxchg;
	b->arena->store32(lock, u32(b->cpu) + 1);
	if (sched::Scheduler *s = sched::active())
		s->hold_nowait(lock_obj(lock), kXferLock, FL_SCHED_LABEL("arena_spin_trylock"));
	return 0;
}

inline void arena_spin_untrylock_word(buddy_ctx *b, u64 lock)
{
	sched::MarkedAccess lock_word;
	b->arena->store32(lock, 0);
	if (sched::Scheduler *s = sched::active())
		s->release_nowait(lock_obj(lock), kXferLock);
}

// __sync_val_compare_and_swap: one context at a time, so it is a load and a store.
inline u64 arena_cmpxchg64(buddy_ctx *b, u64 addr, u64 old, u64 new_)
{
	sched::MarkedAccess atomic;
	const u64 cur = b->arena->load64(addr);
	sched::NoAccessPoint same_cmpxchg;
	if (cur == old)
		b->arena->store64(addr, new_);
	return cur;
}

// The guard claimed (set) and given back (cleared): lockdep and the
// lockset checker see it held in between.
inline void cache_guard_claimed(buddy_ctx *b, u64 guard)
{
	(void)b;
	if (sched::Scheduler *s = sched::active())
		s->hold_nowait(lock_obj(guard), kCacheGuard, FL_SCHED_LABEL("claim"));
}

inline void cache_guard_released(buddy_ctx *b, u64 guard)
{
	(void)b;
	if (sched::Scheduler *s = sched::active())
		s->release_nowait(lock_obj(guard), kCacheGuard);
}

#endif

// READ_ONCE / WRITE_ONCE on arena memory: the same load and store, marked
// for the lockset checker (a declared lockless access).
inline u64 arena_read_once64(buddy_ctx *b, u64 addr)
{
	sched::MarkedAccess once;
	return b->arena->load64(addr);
}

inline u32 arena_read_once32(buddy_ctx *b, u64 addr)
{
	sched::MarkedAccess once;
	return b->arena->load32(addr);
}

inline void arena_write_once32(buddy_ctx *b, u64 addr, u32 v)
{
	sched::MarkedAccess once;
	b->arena->store32(addr, v);
}

}  // namespace fl::libarena
