// SPDX-License-Identifier: GPL-2.0-only
// Not kernel: an area's (or the direct map's) struct pages by index, each
// created on first use (what the vmalloc area's pages[] array and the
// direct map's memmap are in the kernel). The subset of a std::unordered_map
// the port uses (operator[], find, count, erase, size, clear, iteration over
// {index, page} pairs), over a sorted array of 64-slot chunks: the eager
// remap_vmalloc_range() walking a thousand consecutive indexes finds each in
// the chunk it found the last one in, instead of hashing and allocating a
// node per page. Iteration runs in index order. A slot holding no page is
// no entry (find and iteration skip it). The fuzzers' coverage leaves the
// lookups out (FL_NO_COVERAGE, base/coverage.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/coverage.h"
#include "kernel.h"

namespace fl::FL_ARCH_NS {

template <class Page> class page_index {
public:
	using value_type = std::pair<ulong, std::unique_ptr<Page>>;  // {index, page}
	static constexpr unsigned kSlotBits = 6;
	static constexpr ulong kSlots = (ulong)1 << kSlotBits;

	page_index() = default;
	page_index(const page_index &) = delete;
	page_index &operator=(const page_index &) = delete;

	template <class Chunks, class Value> class basic_iterator {
	public:
		basic_iterator(Chunks *c, size_t chunk, ulong slot) : c_(c), chunk_(chunk), slot_(slot) { settle(); }
		Value &operator*() const { return (*c_)[chunk_]->slot[slot_]; }
		Value *operator->() const { return &**this; }
		basic_iterator &operator++()
		{
			slot_++;
			settle();
			return *this;
		}
		bool operator==(const basic_iterator &o) const { return chunk_ == o.chunk_ && slot_ == o.slot_; }

	private:
		void settle()  // forward to a slot holding a page, or the end
		{
			for (; chunk_ < c_->size(); chunk_++, slot_ = 0)
				for (; slot_ < kSlots; slot_++)
					if ((*c_)[chunk_]->slot[slot_].second)
						return;
			slot_ = 0;
		}
		Chunks *c_;
		size_t chunk_;
		ulong slot_;
	};

private:
	struct chunk {
		ulong base;  // the index of slot 0
		value_type slot[kSlots];
	};
	using chunks = std::vector<std::unique_ptr<chunk>>;

public:
	using iterator = basic_iterator<chunks, value_type>;
	using const_iterator = basic_iterator<const chunks, const value_type>;

	iterator begin() { return iterator(&chunks_, 0, 0); }
	iterator end() { return iterator(&chunks_, chunks_.size(), 0); }
	const_iterator begin() const { return const_iterator(&chunks_, 0, 0); }
	const_iterator end() const { return const_iterator(&chunks_, chunks_.size(), 0); }

	// The slot of index i (empty if no page is there yet), made on demand.
	FL_NO_COVERAGE std::unique_ptr<Page> &operator[](ulong i)
	{
		size_t c = chunk_of(i);
		if (c == chunks_.size() || chunks_[c]->base != base_of(i)) {
			auto n = std::make_unique<chunk>();
			n->base = base_of(i);
			for (ulong s = 0; s < kSlots; s++)
				n->slot[s].first = n->base + s;
			chunks_.insert(chunks_.begin() + (ptrdiff_t)c, std::move(n));
		}
		remember(c);
		return chunks_[c]->slot[i & (kSlots - 1)].second;
	}
	FL_NO_COVERAGE iterator find(ulong i)
	{
		const size_t c = chunk_holding(i);
		if (c == chunks_.size() || !chunks_[c]->slot[i & (kSlots - 1)].second)
			return end();
		remember(c);
		return iterator(&chunks_, c, i & (kSlots - 1));
	}
	FL_NO_COVERAGE const_iterator find(ulong i) const
	{
		const size_t c = chunk_holding(i);
		if (c == chunks_.size() || !chunks_[c]->slot[i & (kSlots - 1)].second)
			return end();
		return const_iterator(&chunks_, c, i & (kSlots - 1));
	}
	// The slot of index i, or null while no chunk holds it: it stays the
	// slot of i, holding whatever page is there then, until clear() (the
	// epoch changes) or the index dies. The machine keeps the arena's
	// slots it found last (MachineImpl::arena_slot).
	FL_NO_COVERAGE const std::unique_ptr<Page> *slot(ulong i)
	{
		const size_t c = chunk_holding(i);
		if (c == chunks_.size())
			return nullptr;
		remember(c);
		return &chunks_[c]->slot[i & (kSlots - 1)].second;
	}
	uint64_t epoch() const { return epoch_; }
	// find(i) != end(), without the iterators (the arena's every page allocation asks)
	FL_NO_COVERAGE size_t count(ulong i) const
	{
		const size_t c = chunk_holding(i);
		return c < chunks_.size() && chunks_[c]->slot[i & (kSlots - 1)].second;
	}
	void erase(iterator it) { it->second.reset(); }
	size_t size() const
	{
		size_t n = 0;
		for (const auto &c : chunks_)
			for (const value_type &v : c->slot)
				n += v.second != nullptr;
		return n;
	}
	// size() < n, counting no further than n: a caller that compares a
	// range with the pages present pays for the range, not for every page.
	FL_NO_COVERAGE bool fewer_than(size_t n) const
	{
		size_t k = 0;
		for (const auto &c : chunks_)
			for (const value_type &v : c->slot)
				if (v.second != nullptr && ++k >= n)
					return false;
		return true;
	}
	FL_NO_COVERAGE void clear()
	{
		chunks_.clear();
		hint_ = other_ = 0;
		hint_base_ = kNoBase;
		epoch_++;
	}

private:
	static ulong base_of(ulong i) { return i & ~(kSlots - 1); }
	// The position of the chunk holding i, or where it would go.
	FL_NO_COVERAGE size_t chunk_of(ulong i) const
	{
		const ulong b = base_of(i);
		if (b == hint_base_)
			return hint_;
		if (hint_ + 1 < chunks_.size() && chunks_[hint_ + 1]->base == b)
			return hint_ + 1;  /* the next chunk of a walk */
		if (other_ < chunks_.size() && chunks_[other_]->base == b)
			return other_;  /* the chunk before the last: a header and its objects */
		/* std::lower_bound, written out: the linker keeps one copy of
		 * its instantiation, and one from a port file has coverage */
		size_t lo = 0, hi = chunks_.size();
		while (lo < hi) {
			const size_t mid = lo + (hi - lo) / 2;
			if (chunks_[mid]->base < b)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo;
	}

	// The chunk that holds index i, or chunks_.size() when none does.
	FL_NO_COVERAGE size_t chunk_holding(ulong i) const
	{
		const size_t c = chunk_of(i);
		return c < chunks_.size() && chunks_[c]->base == base_of(i) ? c : chunks_.size();
	}

	FL_NO_COVERAGE void remember(size_t c)
	{
		if (c != hint_)
			other_ = hint_;
		hint_ = c;
		hint_base_ = chunks_[c]->base;
	}

	chunks chunks_;  // sorted by base
	size_t hint_ = 0, other_ = 0;  // the last chunk found, and the one before it
	// hint_'s base, kept beside it (set with it, and as an insertion
	// moves it: operator[] remembers the new chunk): no load through the
	// chunk list for the usual lookup, in the chunk of the last one
	static constexpr ulong kNoBase = ~(ulong)0;  // no chunk's (bases are multiples of kSlots)
	ulong hint_base_ = kNoBase;
	uint64_t epoch_ = 0;           // clear()s so far: a slot() of an earlier epoch is gone
};

}  // namespace fl::FL_ARCH_NS
