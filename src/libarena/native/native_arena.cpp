// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/native/native_arena.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>

namespace fl::libarena {

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kArenaBytes = 1ull << 32;  // include/libarena/common.h: 2^20 pages

}  // namespace

// libbpf maps the arena at creation; here: twice its size PROT_NONE, keep
// the 4 GiB-aligned half (nothing is committed until alloc_pages).
NativeArena::NativeArena() : state_(kArenaBytes / kPage, kFree)
{
	const uint64_t len = 2 * kArenaBytes;
	void *p = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	map_ = p;
	map_len_ = len;
	base_ = (uint64_t(p) + kArenaBytes - 1) & ~(kArenaBytes - 1);
}

NativeArena::~NativeArena()
{
	if (map_)
		munmap(map_, map_len_);
}

bool NativeArena::range(uint64_t addr, uint64_t cnt, uint64_t *first) const
{
	if (!base_ || addr < base_ || addr % kPage)
		return false;
	*first = (addr - base_) / kPage;
	return cnt <= state_.size() && *first <= state_.size() - cnt;
}

uint64_t NativeArena::alloc_pages(uint64_t addr, uint32_t cnt)
{
	std::lock_guard<std::mutex> g(lock_);
	uint64_t first;
	if (!cnt || !range(addr, cnt, &first))
		return 0;
	for (uint64_t i = first; i < first + cnt; i++)
		if (state_[i] != kFree)
			return 0;
	if (mprotect(reinterpret_cast<void *>(addr), cnt * kPage, PROT_READ | PROT_WRITE))
		return 0;
	std::memset(&state_[first], kAllocated, cnt);
	return addr;  // zeroed: never touched, or given back with MADV_DONTNEED
}

void NativeArena::free_pages(uint64_t addr, uint32_t cnt)
{
	std::lock_guard<std::mutex> g(lock_);
	uint64_t first;
	if (!cnt || !range(addr & ~(kPage - 1), cnt, &first))
		return;
	bool zap = false;
	for (uint64_t i = first; i < first + cnt; i++) {
		zap |= state_[i] == kAllocated;
		state_[i] = kFree;
	}
	if (zap) {  // the whole range at once: the rest of it is PROT_NONE and unpopulated already
		void *p = reinterpret_cast<void *>(base_ + first * kPage);
		madvise(p, uint64_t(cnt) * kPage, MADV_DONTNEED);
		mprotect(p, uint64_t(cnt) * kPage, PROT_NONE);
	}
}

int NativeArena::reserve_pages(uint64_t addr, uint32_t cnt)
{
	std::lock_guard<std::mutex> g(lock_);
	if (!cnt)
		return 0;
	if (addr % kPage)
		return 0;  // as the kernel: silently nothing
	uint64_t first;
	if (!range(addr, cnt, &first))
		return -EINVAL;
	for (uint64_t i = first; i < first + cnt; i++)
		if (state_[i] == kAllocated)
			return -EBUSY;
	std::memset(&state_[first], kReserved, cnt);
	return 0;
}

bool NativeArena::present(uint64_t a)
{
	std::lock_guard<std::mutex> g(lock_);
	uint64_t first;
	return range(a & ~(kPage - 1), 1, &first) && state_[first] == kAllocated;
}

bool NativeArena::arena_kernel_read(uint64_t addr, void *dst, uint32_t n)
{
	std::lock_guard<std::mutex> g(lock_);
	uint64_t first;
	const uint64_t start = addr & ~(kPage - 1);
	const uint64_t pages = (addr + n - start + kPage - 1) / kPage;
	if (!n || !range(start, pages, &first))
		return false;
	for (uint64_t i = first; i < first + pages; i++)
		if (state_[i] != kAllocated)
			return false;
	std::memcpy(dst, reinterpret_cast<const void *>(addr), n);
	return true;
}

}  // namespace fl::libarena
