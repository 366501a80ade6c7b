// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/native/native_buddy.h"

#include "libarena/buddy_invariants.h"

namespace fl::libarena {

NativeBuddy::NativeBuddy(buddy_level level)
{
	// libbpf places the arena globals at the end of the arena mapping
	const u64 buddy = arena_.base() + (u64(ARENA_PAGES) - BUDDY_GLOBALS_PAGES) * __PAGE_SIZE;
	for (int c = 0; c < BUDDY_NR_CPUS; c++)
		cpu_[c] = buddy_ctx{&arena_, buddy, nullptr, level, false, c};
}

NativeBuddy::~NativeBuddy()
{
	if (inited_)
		buddy_destroy(&cpu_[0]);
}

int NativeBuddy::init()
{
	if (!arena_.ok() || !arena_.alloc_pages(cpu_[0].buddy, u32(BUDDY_GLOBALS_PAGES)))
		return -ENOMEM;
	const int ret = buddy_init(&cpu_[0]);
	inited_ = ret == 0;
	return ret;
}

std::string NativeBuddy::drain_and_check(const std::map<u64, u64> &live)
{
	buddy_ctx *b = &cpu_[0];
	if (int ret = buddy_cache_drain_all(b))
		return "buddy_cache_drain_all: " + std::to_string(ret);
	Shadow shadow;
	shadow.live = live;
	const bool busy[BUDDY_NR_CPUS] = {};
	if (std::string v = check_caches(b, &shadow, busy); !v.empty())
		return v;
	if (!shadow.cached.empty())
		return "I7: " + std::to_string(shadow.cached.size()) + " objects still cached after the drain";
	return check_buddy(b, &shadow, true);
}

}  // namespace fl::libarena
