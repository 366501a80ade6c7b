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

// __sync_val_compare_and_swap on a u64 in arena memory: the value it found.
inline u64 arena_cmpxchg64(buddy_ctx *b, u64 addr, u64 old, u64 new_)
{
	__atomic_compare_exchange_n(b->arena->word64(addr), &old, new_, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return old;
}

#else  // simulated

inline const sched::LockClass kBuddyLock{"buddy->lock", sched::LockKind::spinlock, true};

inline const void *lock_obj(u64 lock) { return reinterpret_cast<const void *>(uintptr_t(lock)); }

// arena_spin_lock_irqsave on the scheduler's CPUs. Held on this CPU (an NMI
// over the holder) it spins until the may_goto budget runs out
// (-ETIMEDOUT); held by another CPU it waits (under the scheduler the CPU
// blocks; without one there is one context, so a held lock is this CPU's).
inline int arena_spin_lock_word(buddy_ctx *b, u64 lock, const sched::Label &spin)
{
	sched::Scheduler *s = sched::active();
	const u32 owner = b->arena->load32(lock);
	if (owner && (!s || owner == u32(b->cpu) + 1))
		return -ETIMEDOUT;
	if (s)
		s->spin_lock(lock_obj(lock), kBuddyLock, spin);
	b->arena->store32(lock, u32(b->cpu) + 1);
	return 0;
}

// arena_spin_unlock_irqrestore
inline void arena_spin_unlock_word(buddy_ctx *b, u64 lock, const sched::Label &release)
{
	b->arena->store32(lock, 0);
	if (sched::Scheduler *s = sched::active())
		s->spin_unlock(lock_obj(lock), kBuddyLock, release);
}

// arena_spin_trylock: no scheduler lock (a failed trylock never waits).
inline int arena_spin_trylock_word(buddy_ctx *b, u64 lock)
{
	if (b->arena->load32(lock))
		return -EBUSY;
	b->arena->store32(lock, u32(b->cpu) + 1);
	return 0;
}

inline void arena_spin_untrylock_word(buddy_ctx *b, u64 lock) { b->arena->store32(lock, 0); }

// __sync_val_compare_and_swap: one context at a time, so it is a load and a store.
inline u64 arena_cmpxchg64(buddy_ctx *b, u64 addr, u64 old, u64 new_)
{
	const u64 cur = b->arena->load64(addr);
	if (cur == old)
		b->arena->store64(addr, new_);
	return cur;
}

#endif

}  // namespace fl::libarena
