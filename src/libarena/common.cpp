// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/common.h"

#include <cstdio>
#include <mutex>

#include "base/coverage.h"
#include "base/sched/scheduler.h"

namespace fl::libarena {

namespace {

// Every word of arena memory the allocator reads or writes is shared state
// for the lockset checker (src/base/sched/lockset.h); the accesses that are
// not plain (lock words, cmpxchg, the guards, READ_ONCE'd counts) are marked
// where they are made (buddy_sync.h, buddy.cpp).
std::string arena_address(const void *loc)
{
	char s[32];
	std::snprintf(s, sizeof s, "0x%llx", (unsigned long long)uintptr_t(loc));
	return s;
}

const sched::SharedClass kArenaWord{
	"arena word",
	"struct buddy's lists and the chunks' metadata under buddy->lock; a transfer cache under its lock; "
	"a CPU's cache under its guard (buddy_cache.active)",
	arena_address};

void record(u64 a, sched::AccessKind k, const sched::Label &site)
{
	if (!AllocatorAccesses::on())
		return;
	if (sched::Scheduler *s = sched::active())
		s->access(reinterpret_cast<const void *>(uintptr_t(a)), kArenaWord, k, site);
}

}  // namespace

void AllocatorAccesses::carry_across_fibers()
{
	static std::once_flag once;
	std::call_once(once, [] {
		sched::register_tls_slot({[]() -> void * { return on_ ? &on_ : nullptr; },
					  [](void *p) { on_ = p != nullptr; }});
	});
}

// libbpf's bpf_object__load for an arena map: BPF_MAP_CREATE, then mmap the
// whole arena (user space picks user_vm_start).
Arena::Arena()
{
	// Before any scheduler saves the thread's slots (a slot registered
	// inside a run would not be restored at its end).
	AllocatorAccesses::carry_across_fibers();
	Config c;  // pre/arch64/4k: the arena map does not depend on the array patch
	m_ = make_machine(c);
	MapSpec spec;
	spec.map_type = uapi::BPF_MAP_TYPE_ARENA;
	spec.key_size = spec.value_size = 0;
	spec.max_entries = ARENA_PAGES;
	spec.map_flags = uapi::BPF_F_MMAPABLE;
	if (m_->map_create(spec) < 0)
		return;
	int64_t r = m_->mmap(0, 0, u64(ARENA_PAGES) * __PAGE_SIZE, uapi::PROT_READ | uapi::PROT_WRITE,
			     uapi::MAP_SHARED, true, 0);
	if (r > 0)
		base_ = u64(r);
}

// A fresh page reads as an absent one (zeros), a freed one reads zeros
// again: both are reported, as the page's bytes may have changed.
u64 Arena::alloc_pages(u64 addr, u32 cnt)
{
	const u64 r = m_->arena_alloc_pages(addr, cnt);
	if (r) {
		written(r, r + u64(cnt) * __PAGE_SIZE);
		if (alloc_seen_)
			alloc_seen_(alloc_seen_arg_, cnt);
	}
	return r;
}

void Arena::free_pages(u64 addr, u32 cnt)
{
	written(addr, addr + u64(cnt) * __PAGE_SIZE);
	m_->arena_free_pages(addr, cnt);
}

// The allocator's loads and stores: no coverage (base/coverage.h; their
// edges are the harness's, whether a scheduler records the access).
FL_NO_COVERAGE u8 Arena::load8(u64 a)
{
	record(a, sched::AccessKind::read, FL_SCHED_LABEL("read"));
	u8 v = 0;
	m_->arena_kernel_read(a, &v, 1);
	return v;
}

FL_NO_COVERAGE u32 Arena::load32(u64 a)
{
	record(a, sched::AccessKind::read, FL_SCHED_LABEL("read"));
	u32 v = 0;
	if (!m_->arena_kernel_read(a, &v, 4))
		v = 0;
	return v;
}

FL_NO_COVERAGE u64 Arena::load64(u64 a)
{
	record(a, sched::AccessKind::read, FL_SCHED_LABEL("read"));
	u64 v = 0;
	if (!m_->arena_kernel_read(a, &v, 8))
		v = 0;
	return v;
}

FL_NO_COVERAGE void Arena::store8(u64 a, u8 v)
{
	record(a, sched::AccessKind::write, FL_SCHED_LABEL("write"));
	written(a, a + 1);
	m_->arena_kernel_write(a, &v, 1);
}

FL_NO_COVERAGE void Arena::store32(u64 a, u32 v)
{
	record(a, sched::AccessKind::write, FL_SCHED_LABEL("write"));
	written(a, a + 4);
	m_->arena_kernel_write(a, &v, 4);
}

FL_NO_COVERAGE void Arena::store64(u64 a, u64 v)
{
	record(a, sched::AccessKind::write, FL_SCHED_LABEL("write"));
	written(a, a + 8);
	m_->arena_kernel_write(a, &v, 8);
}

void Arena::handed_over(u64 lo, u64 hi)
{
	if (sched::Scheduler *s = sched::active())
		s->forget(reinterpret_cast<const void *>(uintptr_t(lo)), reinterpret_cast<const void *>(uintptr_t(hi)),
			  kArenaWord);
}

bool Arena::present(u64 a)
{
	u8 v;
	return m_->arena_kernel_read(a, &v, 1);
}

}  // namespace fl::libarena
