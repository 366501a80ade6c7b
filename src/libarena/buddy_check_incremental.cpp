// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_check_incremental.h"

#include <cstdlib>
#include <cstring>

namespace fl::libarena {

BuddyCheckMode buddy_check_mode()
{
	static const BuddyCheckMode mode = [] {
		const char *e = std::getenv("FL_BUDDY_CHECKS");
		if (e && !std::strcmp(e, "whole"))
			return BuddyCheckMode::whole;
		if (e && !std::strcmp(e, "compare"))
			return BuddyCheckMode::compare;
		return BuddyCheckMode::incremental;
	}();
	return mode;
}

IncrementalBuddyCheck::IncrementalBuddyCheck(Arena &arena, BuddyCheckMode mode) : arena_(arena), mode_(mode)
{
	arena_.watch(this);
}

IncrementalBuddyCheck::~IncrementalBuddyCheck() { arena_.unwatch(this); }

void IncrementalBuddyCheck::written(u64 lo, u64 hi)
{
	// A range over many chunks (buddy_destroy frees the whole reserved
	// region, gigabytes) makes every chunk dirty, not a list of thousands.
	if (hi - lo > kManyChunks * BUDDY_CHUNK_BYTES) {
		all_dirty_ = true;
		return;
	}
	// Stores come in runs on one chunk: the list is asked once per run.
	for (u64 c = lo & ~BUDDY_CHUNK_OFFSET_MASK; c < hi; c += BUDDY_CHUNK_BYTES)
		if (c != last_dirty_) {
			if (!dirty(c))
				dirty_.push_back(c);
			last_dirty_ = c;
		}
}

std::string IncrementalBuddyCheck::check(buddy_ctx *b, Shadow *shadow)
{
	switch (mode_) {
	case BuddyCheckMode::incremental:
		return incremental(b, shadow);
	case BuddyCheckMode::whole:
		rechecked_ = 0;
		return check_buddy(b, shadow, true);
	case BuddyCheckMode::compare: {
		Shadow before = *shadow;  // I11 compares vaddr with the last check's
		const std::string inc = incremental(b, shadow), whole = check_buddy(b, &before, true);
		if (inc != whole)
			return "checker: the incremental check says '" + inc + "' where the whole one says '" + whole + "'";
		return inc;
	}
	}
	return "";
}

std::string IncrementalBuddyCheck::incremental(buddy_ctx *b, Shadow *shadow)
{
	rechecked_ = 0;
	BuddyLayout layout;
	if (std::string bad = check_buddy_shallow(b, shadow, &layout); !bad.empty())
		return bad;
	for (u64 c : layout.chunks) {
		const HeldObjects &held = layout.held[c];  // (an empty entry for a chunk with none)
		const auto p = passed_.find(c);
		if (p == passed_.end() || p->second != held || all_dirty_ || dirty(c)) {
			rechecked_++;
			if (std::string bad = check_chunk(b, c, held); !bad.empty())
				return bad;  // dirty_ and passed_ stay: the next check starts over here
		}
	}
	// Every chunk passed. One no longer on the list is forgotten: if it comes back, it is new.
	passed_ = std::move(layout.held);
	dirty_.clear();
	all_dirty_ = false;
	last_dirty_ = 1;
	return "";
}

void CachesReadSet::passed(const buddy_ctx *b, const CachedObjects &cached)
{
	caches_ = buddy_cache_of(b, 0);
	deferred_ = b->buddy + BUDDY_DEFERRED_FREE;
	objects_ = cached.objects;  // (sorted by address: check_caches' lookups need it so)
	chunks_.clear();
	for (const auto &[obj, order] : objects_)
		if (chunks_.empty() || chunks_.back() != (obj & ~BUDDY_CHUNK_OFFSET_MASK))
			chunks_.push_back(obj & ~BUDDY_CHUNK_OFFSET_MASK);
	touched_ = false;
}

bool CachesReadSet::holds(u64 lo, u64 hi) const
{
	const auto it = std::lower_bound(objects_.begin(), objects_.end(), std::pair<u64, u64>(lo, 0));
	return it != objects_.end() && it->first < hi;
}

// Each held object's header bytes lie in the order of the objects (a
// chunk's bitmap and nibbles follow its blocks), so a write to a header
// is a range of blocks, looked up as the objects' own words are.
void CachesReadSet::written(u64 lo, u64 hi)
{
	if (touched_)
		return;
	const u64 c = lo & ~BUDDY_CHUNK_OFFSET_MASK;
	auto blocks = [&](u64 area, u64 per_byte) {  // the blocks whose header bytes at c + area [lo, hi) writes
		const u64 from = std::max(lo, c + area), to = std::min(hi, c + area + BUDDY_CHUNK_ITEMS / per_byte);
		return from < to && holds(c + (from - c - area) * per_byte * BUDDY_MIN_ALLOC_BYTES,
					  c + (to - c - area) * per_byte * BUDDY_MIN_ALLOC_BYTES);
	};
	touched_ = (lo < caches_ + SIZEOF_BUDDY_SERIES - BUDDY_CACHES && caches_ < hi) ||
		   (lo < deferred_ + 8 && deferred_ < hi) ||
		   hi - c > BUDDY_CHUNK_BYTES ||  // (over a chunk's end: pages, a destroy)
		   (std::find(chunks_.begin(), chunks_.end(), c) != chunks_.end() &&
		    (holds(lo > 7 ? lo - 7 : 0, hi) || blocks(CHUNK_ALLOCATED, 8) || blocks(CHUNK_ORDERS, 2)));
}

}  // namespace fl::libarena
