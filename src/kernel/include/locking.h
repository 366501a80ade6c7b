// SPDX-License-Identifier: GPL-2.0-only
// Kernel-style locking shims (include/linux/{mmap_lock,mm,mutex,spinlock,
// rcupdate,atomic,compiler}.h) for the port. With no scheduler active
// (fl::sched::active() == nullptr, every sequential run) each is a no-op
// apart from the plain memory operation it wraps, so sequential results do
// not change. Under the interleaving explorer each is a scheduling point
// with a stable label "<calling function>:<primitive>", a lock the
// scheduler tracks (blocking, wait-for graph) and a lockdep event.
//
// Lock identity is the address of the object that holds the lock in the
// kernel (the mm for mmap_lock and the page-table lock, the VMA for its
// lock, the map for freeze_mutex); the port's structs carry no lock state.
#pragma once

#include "base/sched/scheduler.h"

namespace fl::FL_ARCH_NS {

struct mutex {};     /* struct mutex: the scheduler holds its state */
struct spinlock_t {};

namespace sched_shim {
using ::fl::sched::active;
using ::fl::sched::Label;
}  // namespace sched_shim

#define FL_SHIM(call, site)                                                        \
	do {                                                                       \
		if (::fl::sched::Scheduler *fl_s_ = ::fl::sched::active())         \
			fl_s_->call(FL_SCHED_LABEL(site));                          \
	} while (0)
#define FL_SHIM_OBJ(method, obj, cls, site)                                        \
	do {                                                                       \
		if (::fl::sched::Scheduler *fl_s_ = ::fl::sched::active())         \
			fl_s_->method((const void *)(obj), cls, FL_SCHED_LABEL(site)); \
	} while (0)

/* A bare scheduling point: a window the kernel has between two steps. */
#define sched_point(site) FL_SHIM(point, site)

/* include/linux/mmap_lock.h */
#define mmap_read_lock(mm) FL_SHIM_OBJ(down_read, mm, ::fl::sched::kMmapLock, "mmap_read_lock")
#define mmap_read_unlock(mm) FL_SHIM_OBJ(up_read, mm, ::fl::sched::kMmapLock, "mmap_read_unlock")
#define mmap_write_lock(mm) FL_SHIM_OBJ(down_write, mm, ::fl::sched::kMmapLock, "mmap_write_lock")
/* mmap_write_lock_nested(mm, SINGLE_DEPTH_NESTING): fork's child mm, lockdep subclass 1 */
#define mmap_write_lock_nested(mm)                                                                 \
	do {                                                                                       \
		if (::fl::sched::Scheduler *fl_s_ = ::fl::sched::active())                         \
			fl_s_->down_write((const void *)(mm), ::fl::sched::kMmapLock,              \
					  FL_SCHED_LABEL("mmap_write_lock_nested"), nullptr, 1);   \
	} while (0)
/* mmap_write_unlock / mmap_write_downgrade end every VMA write lock (vma_end_write_all) */
#define mmap_write_unlock(mm)                                                                      \
	do {                                                                                       \
		if (::fl::sched::Scheduler *fl_s_ = ::fl::sched::active()) {                       \
			fl_s_->vma_end_write_all((const void *)(mm), ::fl::sched::kVmLock);        \
			fl_s_->up_write((const void *)(mm), ::fl::sched::kMmapLock,                \
					FL_SCHED_LABEL("mmap_write_unlock"));                      \
		}                                                                                  \
	} while (0)
#define mmap_write_downgrade(mm)                                                                   \
	do {                                                                                       \
		if (::fl::sched::Scheduler *fl_s_ = ::fl::sched::active()) {                       \
			fl_s_->vma_end_write_all((const void *)(mm), ::fl::sched::kVmLock);        \
			fl_s_->downgrade_write((const void *)(mm), ::fl::sched::kMmapLock,         \
					       FL_SCHED_LABEL("mmap_write_downgrade"));            \
		}                                                                                  \
	} while (0)
#define mmap_assert_write_locked(mm)                                                              \
	do {                                                                                      \
		if (::fl::sched::Scheduler *fl_s_ = ::fl::sched::active())                        \
			fl_s_->assert_held((const void *)(mm), ::fl::sched::kMmapLock, true,      \
					   FL_SCHED_LABEL("mmap_assert_write_locked"));           \
	} while (0)

/* include/linux/mm.h: the per-VMA lock (CONFIG_PER_VMA_LOCK) */
/*
 * vma_start_read is a trylock: false (VMA write-locked) means VM_FAULT_RETRY
 * under mmap_lock. Upstream (include/linux/mm.h, vma_start_read): "The
 * function is allowed to occasionally yield false locked result ... in which
 * case we fall back to using mmap_lock": its down_read_trylock() fails while
 * a writer waits, and after taking the lock it re-checks vm_lock_seq and
 * drops it (up_read, return false). That failure is a schedule decision
 * ("at T0 do_user_addr_fault:vma_start_read:trylock#K fail") taken with the
 * read lock held and dropped when it fails, as the re-check does: a point
 * before the lock would open a window (vma_lookup to vma_start_read) that
 * upstream covers by RCU-deferred VMA freeing and the detached re-check,
 * which this port does not model.
 */
#define vma_start_read(vma)                                                                        \
	({                                                                                         \
		::fl::sched::Scheduler *fl_s_ = ::fl::sched::active();                             \
		!fl_s_ || (fl_s_->vma_start_read((const void *)(vma), ::fl::sched::kVmLock,        \
						 FL_SCHED_LABEL("vma_start_read")) &&              \
			   (!fl_s_->fallible_point(FL_SCHED_LABEL("vma_start_read:trylock")) ||    \
			    ((fl_s_->vma_end_read)((const void *)(vma), ::fl::sched::kVmLock,      \
						 FL_SCHED_LABEL("vma_start_read:trylock")),        \
			     false)));                                                             \
	})
#define vma_end_read(vma) FL_SHIM_OBJ(vma_end_read, vma, ::fl::sched::kVmLock, "vma_end_read")
/* vma_start_write: mmap_lock held for write; waits for the VMA's readers */
#define vma_start_write(vma)                                                                       \
	do {                                                                                       \
		if (::fl::sched::Scheduler *fl_s_ = ::fl::sched::active())                         \
			fl_s_->vma_start_write((const void *)(vma), (const void *)(vma)->vm_mm,    \
					       ::fl::sched::kVmLock, ::fl::sched::kMmapLock,       \
					       FL_SCHED_LABEL("vma_start_write"));                 \
	} while (0)

/* include/linux/spinlock.h, mm.h: the page-table lock (one per mm here) */
#define pte_lockptr(mm) (reinterpret_cast<spinlock_t *>(mm))
/* lockdep keys a spinlock's class by where it was initialised; the port has
 * two, told apart by address (spinlock_class in mm.h): the page-table lock
 * and the fd table's file_lock (fs/file.c). */
inline const ::fl::sched::LockClass kFileLock{"file_lock", ::fl::sched::LockKind::spinlock};
#define spin_lock(l) FL_SHIM_OBJ(spin_lock, l, spinlock_class(l), "spin_lock")
#define spin_unlock(l) FL_SHIM_OBJ(spin_unlock, l, spinlock_class(l), "spin_unlock")
/* spin_lock_nested(ptl, SINGLE_DEPTH_NESTING): a second PTL of the same class (fork's source table) */
#define spin_lock_nested(ptl, subclass)                                                            \
	do {                                                                                       \
		if (::fl::sched::Scheduler *fl_s_ = ::fl::sched::active())                         \
			(fl_s_->spin_lock)((const void *)(ptl), ::fl::sched::kPtl,                 \
					 FL_SCHED_LABEL("spin_lock_nested"), subclass);            \
	} while (0)
#define SINGLE_DEPTH_NESTING 1

/* include/linux/mutex.h */
#define mutex_lock(m) FL_SHIM_OBJ(mutex_lock, m, ::fl::sched::kFreezeMutex, "mutex_lock")
#define mutex_unlock(m) FL_SHIM_OBJ(mutex_unlock, m, ::fl::sched::kFreezeMutex, "mutex_unlock")

/* include/linux/rcupdate.h */
#define rcu_read_lock() FL_SHIM(rcu_read_lock, "rcu_read_lock")
#define rcu_read_unlock() FL_SHIM(rcu_read_unlock, "rcu_read_unlock")

/* include/linux/kernel.h might_fault() (copy_from_user): a point; lockdep
 * sees a read acquisition of mmap_lock (an error under a spinlock, RCU, in
 * NMI context, or with mmap_lock already held) */
#define might_fault() FL_SHIM(might_fault, "might_fault")

/* include/linux/atomic.h (atomic64_t is a plain s64 in the port) and
 * compiler.h READ_ONCE/WRITE_ONCE: a point before each access. WRITE_ONCE
 * evaluates its value first, so WRITE_ONCE(x, READ_ONCE(x) + 1), a lost
 * update written in one expression, has its window between the two. */
#define atomic64_inc(v) ({ sched_point("atomic64_inc"); ++*(v); (void)0; })
#define atomic64_dec(v) ({ sched_point("atomic64_dec"); --*(v); (void)0; })
#define atomic64_read(v) ({ sched_point("atomic64_read"); *(v); })
#define READ_ONCE(x) ({ sched_point("READ_ONCE"); (x); })
#define WRITE_ONCE(x, val) ({ auto fl_v_ = (val); sched_point("WRITE_ONCE"); (x) = fl_v_; (void)0; })

/* Declared accesses to shared state, for the lockset checker (src/base/sched/
 * lockset.h) and, when the explorer asks, a scheduling point each. The
 * classes and the rule that protects each are in locking.cpp's comment. */
#if defined(FL_SYMBOLIC)  /* the proofs' port runs no scheduler */
#define FL_SHARED_ACCESS_AT(loc, cls, kind, label) do { (void)(label); } while (0)
#else
#define FL_SHARED_ACCESS_AT(loc, cls, kind, label)                                                 \
	do {                                                                                       \
		if (::fl::sched::Scheduler *fl_s_ = ::fl::sched::active())                         \
			fl_s_->access((const void *)(loc), cls, ::fl::sched::AccessKind::kind, label); \
	} while (0)
#endif
#define FL_SHARED_ACCESS(loc, cls, kind, site) FL_SHARED_ACCESS_AT(loc, cls, kind, FL_SCHED_LABEL(site))

/* The VMA tree (mm->mm_mt; the port's mm->mmap), one location per mm:
 * changed by vma_link/vma_unlink under mmap_lock held for write; walked by
 * find_vma under mmap_lock. lock_vma_under_rcu walks it under RCU alone: a
 * declared lockless walk (mas_walk's rcu_dereference), since the VMA it
 * finds is read-locked and re-checked before use. */
inline const ::fl::sched::SharedClass kVmaTree{
	"vma tree", "changed under mmap_lock held for write; walked under mmap_lock, or under RCU by lock_vma_under_rcu"};
/* A linked VMA's fields (vma_start_write's comment in include/linux/mm.h):
 * vm_flags changed by vm_flags_set/clear/reset, vm_start/vm_end/vm_pgoff by
 * a split or an expand (vma_prepare), each under mmap_lock held for write
 * with the VMA write-locked; read under mmap_lock or the VMA's read lock
 * (a per-VMA-lock fault). A VMA not yet linked is its creator's alone and
 * its fields are not declared. */
inline const ::fl::sched::SharedClass kVmFlags{
	"vm_flags", "changed under mmap_lock held for write with the VMA write-locked; read under mmap_lock or the VMA read lock"};
inline const ::fl::sched::SharedClass kVmExtent{
	"vm_start/vm_end/vm_pgoff",
	"changed under mmap_lock held for write with the VMA write-locked; read under mmap_lock or the VMA read lock"};

/* The fd table's slots (files->fd_array[fd]): cleared by close(2) under
 * files->file_lock (file_close_fd_locked); published by fd_install with
 * rcu_assign_pointer into a slot get_unused_fd_flags reserved for its
 * caller alone, and read by fget under RCU (files_lookup_fd_rcu): both
 * marked. So two closes of one fd are ordered by file_lock alone, and no
 * access to a slot is a new object's initialisation (born_shared). */
inline const ::fl::sched::SharedClass kFdTable{
	"fd table", "a slot cleared under files->file_lock; published (rcu_assign_pointer) and looked up under RCU",
	nullptr, /* born_shared: every task shares the one table */ true};

/* The PTE of (mm, addr): the page-table lock (pte_offset_map_lock). */
inline const ::fl::sched::SharedClass kPteShared{"pte", "written and read under the page-table lock"};
/* One PTE slot's identity: a hash of the mm and the page index (a key, never
 * dereferenced). */
/* include/linux/pgtable.h: ptep_get - the PTE as its page-table lock's
 * holder reads it: a plain read for the lockset checker, named after the
 * function that reads (a macro, so __func__ is the caller's). */
#define ptep_get(mm, addr)                                                                         \
	({                                                                                         \
		FL_SHARED_ACCESS(pte_shared_loc(mm, addr), kPteShared, read, "pte");               \
		pte_lookup(mm, addr);                                                              \
	})
#define pte_shared_loc(mm, addr) \
	((const void *)((uintptr_t)(mm) * (uintptr_t)0x9e3779b97f4a7c15ull ^ (uintptr_t)((addr) >> PAGE_SHIFT)))

}  // namespace fl::FL_ARCH_NS
