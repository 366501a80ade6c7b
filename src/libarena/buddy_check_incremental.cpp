// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_check_incremental.h"

#include <cstdlib>
#include <cstring>

namespace fl::libarena {

namespace {

// c is in the list (a few chunks). Not std::find: the linker may keep a copy
// instantiated in a file with coverage, and this runs at every arena store.
bool among(const std::vector<u64> &list, u64 c)
{
	for (u64 x : list)
		if (x == c)
			return true;
	return false;
}

}  // namespace

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

IncrementalBuddyCheck::IncrementalBuddyCheck(Arena &arena, BuddyCheckMode mode)
	: WriteWatch{&on_write}, arena_(arena), mode_(mode)
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
	if (std::string bad = check_buddy_shallow(b, shadow, &layout_); !bad.empty())
		return bad;
	for (u64 c : layout_.chunks) {
		const HeldSpan held = layout_.held(c);
		if (!passed_.has_chunk(c) || !std::ranges::equal(passed_.held(c), held) || all_dirty_ || dirty(c)) {
			rechecked_++;
			if (std::string bad = check_chunk(b, c, held); !bad.empty())
				return bad;  // dirty_ and passed_ stay: the next check starts over here
		}
	}
	// Every chunk passed. One no longer on the list is forgotten: if it comes back, it is new.
	passed_.chunks.swap(layout_.chunks);  // (the lists, not moved through a temporary)
	passed_.objects.swap(layout_.objects);
	passed_.sorted.swap(layout_.sorted);
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
	const auto it = first_at(objects_, lo);
	return it != objects_.end() && it->first < hi;
}

std::pair<u64, u64> CachesReadSet::blocks_of(u64 c, u64 lo, u64 hi, u64 area, u64 per_byte)
{
	const u64 from = std::max(lo, c + area), to = std::min(hi, c + area + BUDDY_CHUNK_ITEMS / per_byte);
	if (from >= to)
		return {0, 0};
	return {c + (from - c - area) * per_byte * BUDDY_MIN_ALLOC_BYTES, c + (to - c - area) * per_byte * BUDDY_MIN_ALLOC_BYTES};
}

// Each held object's header bytes lie in the order of the objects (a
// chunk's bitmap and nibbles follow its blocks), so a write to a header
// is a range of blocks, looked up as the objects' own words are.
void CachesReadSet::written(u64 lo, u64 hi)
{
	if (!known_.empty())
		forget_headers(lo, hi);
	if (touched_)
		return;
	const u64 c = lo & ~BUDDY_CHUNK_OFFSET_MASK;
	auto blocks = [&](u64 area, u64 per_byte) {  // the blocks whose header bytes at c + area [lo, hi) writes
		const auto [from, to] = blocks_of(c, lo, hi, area, per_byte);
		return from < to && holds(from, to);
	};
	touched_ = (lo < caches_ + SIZEOF_BUDDY_SERIES - BUDDY_CACHES && caches_ < hi) ||
		   (lo < deferred_ + 8 && deferred_ < hi) ||
		   hi - c > BUDDY_CHUNK_BYTES ||  // (over a chunk's end: pages, a destroy)
		   (among(chunks_, c) &&
		    (holds(lo > 7 ? lo - 7 : 0, hi) || blocks(CHUNK_ALLOCATED, 8) || blocks(CHUNK_ORDERS, 2)));
}

void CachesReadSet::learned(const CachedObjects &cached, u64 live)
{
	known_live_ = live;
	known_.resize(cached.objects.size());  // (address, nibble), by address
	if (!known_.empty())
		std::memcpy(known_.data(), cached.objects.data(), known_.size() * sizeof known_[0]);
	known_chunks_.clear();
	for (const auto &[obj, order] : known_)
		if (known_chunks_.empty() || known_chunks_.back() != (obj & ~BUDDY_CHUNK_OFFSET_MASK))
			known_chunks_.push_back(obj & ~BUDDY_CHUNK_OFFSET_MASK);
}

// A write to a known object's allocated bit or nibble (or pages, or a
// range past its chunk: a destroy) makes it unknown again.
void CachesReadSet::forget_headers(u64 lo, u64 hi)
{
	const u64 c = lo & ~BUDDY_CHUNK_OFFSET_MASK;
	if (hi - c > BUDDY_CHUNK_BYTES) {
		known_.clear();
		known_chunks_.clear();
		return;
	}
	// Past both areas (an object's or a free list's word, most stores):
	// no header byte, whatever the chunk.
	if (lo - c >= CHUNK_ALLOCATED + BUDDY_CHUNK_ITEMS / 8 || !among(known_chunks_, c))
		return;
	for (const u64 area : {CHUNK_ALLOCATED, CHUNK_ORDERS}) {
		const auto [from, to] = blocks_of(c, lo, hi, area, area == CHUNK_ALLOCATED ? 8 : 2);
		if (from >= to)
			continue;
		const auto first = first_at(known_, from);
		auto last = first;
		while (last != known_.end() && last->first < to)
			last++;
		known_.erase(first, last);
	}
}

}  // namespace fl::libarena
