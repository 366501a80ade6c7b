// SPDX-License-Identifier: GPL-2.0-only
// Two checks at the cost of what changed, not of what the run has built.
//
// check_buddy after every op at the cost of what the op changed, not of
// every chunk the run has built. The deep checks of a chunk (check_chunk) are
// a function of the chunk's bytes and of the held objects inside it; a chunk
// that passed and since then got no write (Arena::WriteWatch: every store
// of the allocator, the pages it allocates and frees, the runner's user
// stores) and no held object more or less passes again, so only the other
// chunks are rechecked. The shallow checks (I11, the lock, I1) run whole.
//
// FL_BUDDY_CHECKS=whole: every chunk, every time (check_buddy itself);
// FL_BUDDY_CHECKS=compare: both, and a difference is a violation
// ("checker: ..."), which ctest libarena.incremental runs the corpus under.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "libarena/buddy_invariants.h"

namespace fl::libarena {

enum class BuddyCheckMode : u8 { incremental, whole, compare };
// FL_BUDDY_CHECKS, read once (default incremental).
BuddyCheckMode buddy_check_mode();

class IncrementalBuddyCheck : Arena::WriteWatch {
public:
	explicit IncrementalBuddyCheck(Arena &arena, BuddyCheckMode mode = buddy_check_mode());
	~IncrementalBuddyCheck();
	IncrementalBuddyCheck(const IncrementalBuddyCheck &) = delete;
	IncrementalBuddyCheck &operator=(const IncrementalBuddyCheck &) = delete;

	// What check_buddy(b, shadow, true) returns.
	std::string check(buddy_ctx *b, Shadow *shadow);
	// Chunks the last check() ran check_chunk on (the tests' view).
	size_t rechecked() const { return rechecked_; }

private:
	void written(u64 lo, u64 hi);
	// (no coverage: an instrumented copy, kept from the runner's file, counted every store)
	FL_NO_COVERAGE static void on_write(WriteWatch *w, u64 lo, u64 hi)
	{
		static_cast<IncrementalBuddyCheck *>(w)->written(lo, hi);
	}
	std::string incremental(buddy_ctx *b, Shadow *shadow);
	bool dirty(u64 c) const { return std::find(dirty_.begin(), dirty_.end(), c) != dirty_.end(); }

	Arena &arena_;
	BuddyCheckMode mode_;
	std::vector<u64> dirty_;  // chunks written since the last check (a few: a list, kept allocated)
	bool all_dirty_ = false;  // a write spanned more than kManyChunks chunks
	static constexpr u64 kManyChunks = 8;
	u64 last_dirty_ = 1;   // the chunk written last (an unaligned value: none)
	// The chunks and their held objects when they last passed; layout_ is
	// the one being checked (both kept: their lists are refilled, not
	// allocated, after every op).
	BuddyLayout passed_, layout_;
	size_t rechecked_ = 0;
};

// check_caches at every point: what it read when it last passed is the
// caches' region (the per-CPU caches and the transfer caches), the deferred
// list's head, and of each object held there its word (the deferred list's
// link) and its two chunk-header bytes (allocated bit, order nibble). With
// none of those bytes written since, and the same live objects and busy
// CPUs (the caller's to compare), check_caches passes again with the same
// objects: the runner skips it. Over the grown buddy-series corpus, 46 % of
// the point checks that ran after some write saw no write there (the
// allocator's own free-list and chunk work under the buddy lock).
class CachesReadSet : Arena::WriteWatch {
public:
	explicit CachesReadSet(Arena &arena) : WriteWatch{&on_write}, arena_(arena) { arena_.watch(this); }
	~CachesReadSet() { arena_.unwatch(this); }
	CachesReadSet(const CachesReadSet &) = delete;
	CachesReadSet &operator=(const CachesReadSet &) = delete;

	// check_caches(b, ..., cached, ...) passed: remember what it read.
	void passed(const buddy_ctx *b, const CachedObjects &cached);
	// None of it has been written since.
	bool unchanged() const { return !touched_; }

	// The headers (allocated bit, nibble) of the objects a check_caches
	// that passed found held, at a point or after an op, as long as none
	// of their bytes is written: the next check_caches reads only the
	// others' (KnownHeaders). A cached object's header is written only
	// when it leaves the caches for the buddy, so between two checks
	// most stay known, and a check reads the headers of what the ops
	// since put in the caches, not of everything they hold.
	// `live`: the caller's count of changes to its live objects then
	// (known_live(): none of the known objects was live at that count).
	void learned(const CachedObjects &cached, u64 live);
	const KnownHeaders &known() const { return known_; }
	u64 known_live() const { return known_live_; }

private:
	void written(u64 lo, u64 hi);
	// (no coverage: an instrumented copy, kept from the runner's file, counted every store)
	FL_NO_COVERAGE static void on_write(WriteWatch *w, u64 lo, u64 hi) { static_cast<CachesReadSet *>(w)->written(lo, hi); }
	// A held object in [lo, hi).
	bool holds(u64 lo, u64 hi) const;
	// The objects whose header bytes at c + area [lo, hi) lie (per_byte
	// blocks a byte), as addresses [first, second); empty if none.
	static std::pair<u64, u64> blocks_of(u64 c, u64 lo, u64 hi, u64 area, u64 per_byte);
	void forget_headers(u64 lo, u64 hi);

	Arena &arena_;
	u64 caches_ = 0, deferred_ = 0;  // the caches' region and the deferred list's head
	std::vector<std::pair<u64, u64>> objects_;  // what check_caches found held, by address
	std::vector<u64> chunks_;                   // the chunks they are in (a write elsewhere misses them all)
	bool touched_ = true;
	KnownHeaders known_;               // (learned) by address
	u64 known_live_ = ~0ull;
	std::vector<u64> known_chunks_;    // the chunks they are in
};

}  // namespace fl::libarena
