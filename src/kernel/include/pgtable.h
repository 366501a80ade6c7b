// SPDX-License-Identifier: GPL-2.0-only
// Not kernel: the shim behind an mm's page tables (what pgd/p4d/pud/pmd/pte
// levels are in the kernel). A sorted array of last-level tables of 64 slots,
// each with a bitmap of its present PTEs, in place of one tree node per PTE:
// a lookup is a short binary search over the few tables a Program reaches
// plus an index, a range walk visits only populated tables, and the eager
// remap_vmalloc_range() inserting a thousand PTEs costs a thousand slot
// writes instead of a thousand tree insertions. Emptied tables go to a free
// list, so once warm an operation allocates nothing. Walks run in address
// order, as the tree's did (the invariant checker's first-violation-wins
// report depends on it). Addresses are in the running kernel's PAGE_SIZE
// (kcfg, read once per table set), like every other use of the page tables.
//
// For the invariant checker (not the port) the table also keeps what a
// check after every op would otherwise recompute by walking everything:
// pte_ghost(pte, +1/-1) is called for every PTE installed or removed (the
// checker's per-page count of the PTEs that map it), and the tables whose
// slots changed since the checker last looked are listed (take_dirty).
// The fuzzers' coverage leaves the table out (FL_NO_COVERAGE, base/coverage.h),
// but for the walks that call the port back.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/coverage.h"
#include "kernel.h"

#if defined(FL_SYMBOLIC)
#include "symbolic/containers.h"
#endif

namespace fl::FL_ARCH_NS {

#if defined(FL_SYMBOLIC)
template <class Pte> using page_table = ::fl::sym::page_table<ulong, Pte>;
#else
template <class Pte> class page_table {
public:
	static constexpr unsigned kSlotBits = 6;
	static constexpr unsigned long kSlots = 1ul << kSlotBits;  // one bit each in table::used

	page_table() = default;
	page_table(const page_table &) = delete;
	page_table &operator=(const page_table &) = delete;

	FL_NO_COVERAGE Pte *find(ulong addr)
	{
		table *t = table_of(addr);
		unsigned s = slot_of(addr);
		return t && (t->used >> s & 1) ? &t->slot[s] : nullptr;
	}

	// Installs (or overwrites) the PTE for addr.
	FL_NO_COVERAGE void set(ulong addr, const Pte &pte)
	{
		table *t = table_of(addr);
		if (!t)
			t = add_table(base_of(addr));
		unsigned s = slot_of(addr);
		if (!(t->used >> s & 1)) {
			t->used |= uint64_t(1) << s;
			size_++;
		} else {
			pte_ghost(t->slot[s], -1);
		}
		t->slot[s] = pte;
		pte_ghost(pte, +1);
		mark_dirty(t);
	}

	unsigned long size() const { return size_; }

	// f(addr, pte) for every present PTE with lo <= addr < hi, in address order.
	template <class F> void for_range(ulong lo, ulong hi, F &&f)
	{
		for (size_t i = first_table(lo); i < tables_.size() && tables_[i]->base < hi; i++) {
			table *t = tables_[i];
			walk(t, lo, hi, [&](unsigned s, ulong a) { f(a, t->slot[s]); });
		}
	}
	// Every present PTE (a page address is never ~0).
	template <class F> void for_each(F &&f) { for_range(0, (ulong)~(ulong)0, f); }

	unsigned long count_range(ulong lo, ulong hi)
	{
		unsigned long n = 0;
		for_range(lo, hi, [&](ulong, const Pte &) { n++; });
		return n;
	}

	// f(addr, pte) for every present PTE in [lo, hi), which is removed first.
	template <class F> void take_range(ulong lo, ulong hi, F &&f)
	{
		// Emptied tables are compacted out once at the end: erasing each one
		// as it empties made unmapping a big mm quadratic in its tables.
		size_t i = first_table(lo), kept = i;
		for (; i < tables_.size() && tables_[i]->base < hi; i++) {
			table *t = tables_[i];
			walk(t, lo, hi, [&](unsigned s, ulong a) {
				t->used &= ~(uint64_t(1) << s);
				size_--;
				pte_ghost(t->slot[s], -1);
				mark_dirty(t);
				f(a, t->slot[s]);
			});
			if (t->used == 0)
				free_.push_back(t);
			else
				tables_[kept++] = t;
		}
		tables_.erase(tables_.begin() + (ptrdiff_t)kept, tables_.begin() + (ptrdiff_t)i);
	}

	// Drops every PTE; the tables stay for reuse.
	FL_NO_COVERAGE void clear()
	{
		for (table *t : tables_) {
			walk(t, 0, (ulong)~(ulong)0, [&](unsigned s, ulong) { pte_ghost(t->slot[s], -1); });
			mark_dirty(t);
			t->used = 0;
			free_.push_back(t);
		}
		tables_.clear();
		size_ = 0;
	}

	// f(lo, hi) for the span of every table whose slots changed since the
	// last call (in no particular order; a span may repeat once its table
	// was freed and reused), then forgets them.
	template <class F> void take_dirty(F &&f)
	{
		for (const dirty_span &d : dirty_)
			f(d.lo, d.hi);
		for (table *t : dirty_tables_)
			t->dirty = false;
		dirty_.clear();
		dirty_tables_.clear();
	}

private:
	struct table {
		ulong base = 0;     // the address of slot 0
		uint64_t used = 0;  // which slots hold a PTE (the others are stale)
		bool dirty = false; // listed in dirty_ since take_dirty
		Pte slot[kSlots]{};
	};

	// The running kernel's PAGE_SHIFT, read once: an mm's tables belong
	// to one machine, and kcfg is a thread-local read per use.
	unsigned page_shift() const { return shift_ ? shift_ : (shift_ = PAGE_SHIFT); }
	unsigned span_bits() const { return page_shift() + kSlotBits; }
	// A table spans 2^(shift + 6) bytes; its base rounds down to that (the
	// guard keeps the shift defined should one span the whole space).
	ulong base_of(ulong a) const
	{
		return span_bits() >= sizeof(ulong) * 8 ? 0 : a & ~(((ulong)1 << span_bits()) - 1);
	}
	unsigned slot_of(ulong a) const { return (unsigned)(a >> page_shift()) & (kSlots - 1); }
	ulong addr_of(const table *t, unsigned s) const { return t->base + ((ulong)s << page_shift()); }

	// g(slot, addr) for the present slots of t with lo <= addr < hi, in
	// order; the bitmap is read once, so g may clear the slot it is given.
	template <class G> void walk(table *t, ulong lo, ulong hi, G &&g)
	{
		uint64_t bits = t->used;
		if (lo > t->base)
			bits &= ~uint64_t(0) << slot_of(lo);
		for (; bits; bits &= bits - 1) {
			unsigned s = (unsigned)__builtin_ctzll(bits);
			ulong a = addr_of(t, s);
			if (a >= hi)
				break;
			g(s, a);
		}
	}

	// The index of the first table whose span reaches lo.
	FL_NO_COVERAGE size_t first_table(ulong lo) const
	{
		ulong b = base_of(lo);
		if (!tables_.empty() && tables_.back()->base < b)  /* past the end: appends stay O(1) */
			return tables_.size();
		return (size_t)(std::lower_bound(tables_.begin(), tables_.end(), b,
						 [](const table *t, ulong v) { return t->base < v; }) -
				tables_.begin());
	}

	// The table holding a, if any. Accesses cluster (a fault, then loads in
	// the same page; remap's run of inserts), so the last table found is
	// tried first; a stale hint only costs the search.
	FL_NO_COVERAGE table *table_of(ulong a)
	{
		ulong b = base_of(a);
		if (hint_ < tables_.size() && tables_[hint_]->base == b)
			return tables_[hint_];
		size_t i = first_table(a);
		if (i < tables_.size() && tables_[i]->base == b) {
			hint_ = i;
			return tables_[i];
		}
		return nullptr;
	}

	struct dirty_span {
		ulong lo, hi;
	};
	FL_NO_COVERAGE void mark_dirty(table *t)
	{
		if (t->dirty)
			return;
		t->dirty = true;
		dirty_tables_.push_back(t);
		ulong span = span_bits() >= sizeof(ulong) * 8 ? 0 : (ulong)1 << span_bits();
		dirty_.push_back({t->base, span && t->base + span > t->base ? t->base + span : (ulong)~(ulong)0});
	}

	FL_NO_COVERAGE table *add_table(ulong base)
	{
		table *t;
		if (!free_.empty()) {
			t = free_.back();
			free_.pop_back();
		} else {
			owned_.push_back(std::make_unique<table>());
			t = owned_.back().get();
		}
		if (t->dirty) {  /* reused before the checker looked: its old span stays listed */
			t->dirty = false;
			std::erase(dirty_tables_, t);
		}
		t->base = base;
		t->used = 0;
		tables_.insert(tables_.begin() + (ptrdiff_t)first_table(base), t);
		return t;
	}

	unsigned long size_ = 0;
	mutable unsigned shift_ = 0;   // PAGE_SHIFT once known
	size_t hint_ = 0;              // an index into tables_, maybe stale
	std::vector<table *> tables_;  // sorted by base
	std::vector<table *> free_;
	std::vector<dirty_span> dirty_;       // spans of changed tables, for take_dirty
	std::vector<table *> dirty_tables_;  // the tables whose dirty flag is set
	std::vector<std::unique_ptr<table>> owned_;
};

#endif  /* FL_SYMBOLIC */

}  // namespace fl::FL_ARCH_NS
