// SPDX-License-Identifier: GPL-2.0-only
// Not kernel: the symbolic build's page tables and page maps (pgtable.h's
// page_table, mm.h's page_index_map), over symbolic addresses.
//
// page_table keeps every PTE the port installs, in order, with the address
// term it was installed at; a lookup asks, entry by entry, whether the
// address is that entry's (a fork where it may be), and then, when the
// explorer says the tables held unknown PTEs before the run
// (explore.h: prior_ptes), whether one was already there (a fresh Bool).
// Every install also goes to install_probe: the obligations read which
// page went to which user address.
//
// term_map keys a struct page by its index term: the port's page for
// (area, index) is created on first use, as in the concrete build. Two
// different terms that happen to be equal get two struct pages with equal
// (area, index), which is all the obligations compare.
#pragma once

#include <z3++.h>

#include <memory>
#include <utility>
#include <vector>

#include "symbolic/word.h"

namespace fl::sym {

// explore.cpp: does a lookup of a PTE nobody installed in this run find one?
bool prior_pte(const z3::expr &addr);

// Called with every PTE the port installs (the world's probe: smt/port/world.cpp).
template <class Ulong, class Pte> struct install_probe {
	static inline thread_local void (*fn)(const Ulong &addr, const Pte &pte) = nullptr;
};

template <class Ulong, class Pte> class page_table {
public:
	page_table() = default;
	page_table(const page_table &) = delete;
	page_table &operator=(const page_table &) = delete;

	Pte *find(Ulong addr)
	{
		for (size_t i = entries_.size(); i-- > 0;)
			if (entries_[i].addr == addr)
				return entries_[i].present ? &entries_[i].pte : nullptr;
		return prior_pte(addr.expr()) ? &prior_ : nullptr;
	}
	void set(Ulong addr, const Pte &pte)
	{
		entries_.push_back({addr, pte, true});
		if (install_probe<Ulong, Pte>::fn)
			install_probe<Ulong, Pte>::fn(addr, pte);
	}
	unsigned long size() const { return entries_.size(); }
	template <class F> void for_range(Ulong lo, Ulong hi, F &&f)
	{
		for (auto &e : entries_)
			if (e.present && lo <= e.addr && e.addr < hi)
				f(e.addr, e.pte);
	}
	template <class F> void for_each(F &&f)
	{
		for (auto &e : entries_)
			if (e.present)
				f(e.addr, e.pte);
	}
	unsigned long count_range(Ulong lo, Ulong hi)
	{
		unsigned long n = 0;
		for_range(lo, hi, [&](const Ulong &, const Pte &) { n++; });
		return n;
	}
	template <class F> void take_range(Ulong lo, Ulong hi, F &&f)
	{
		for (auto &e : entries_)
			if (e.present && lo <= e.addr && e.addr < hi) {
				e.present = false;
				f(e.addr, e.pte);
			}
	}
	void clear() { entries_.clear(); }
	template <class F> void take_dirty(F &&) {}

private:
	struct slot {
		Ulong addr;
		Pte pte;
		bool present;
	};
	std::vector<slot> entries_;
	Pte prior_{};
};

template <class Key, class T> class term_map {
public:
	using value_type = std::pair<const Key, T>;
	T &operator[](const Key &k)
	{
		if (auto *v = lookup(k))
			return *v;
		items_.push_back(std::make_unique<value_type>(k, T{}));
		return items_.back()->second;
	}
	struct iterator {
		typename std::vector<std::unique_ptr<value_type>>::iterator it;
		value_type &operator*() const { return **it; }
		value_type *operator->() const { return it->get(); }
		iterator &operator++() { ++it; return *this; }
		bool operator==(const iterator &o) const { return it == o.it; }
	};
	iterator find(const Key &k)
	{
		for (auto it = items_.begin(); it != items_.end(); ++it)
			if (same((*it)->first, k))
				return {it};
		return end();
	}
	iterator begin() { return {items_.begin()}; }
	iterator end() { return {items_.end()}; }
	size_t size() const { return items_.size(); }
	void clear() { items_.clear(); }
	size_t erase(const Key &k)
	{
		for (auto it = items_.begin(); it != items_.end(); ++it)
			if (same((*it)->first, k)) {
				items_.erase(it);
				return 1;
			}
		return 0;
	}

private:
	static bool same(const Key &a, const Key &b)
	{
		return a.sym() == b.sym() && (a.sym() ? z3::eq(a.expr(), b.expr()) : a.v.k() == b.v.k());
	}
	T *lookup(const Key &k)
	{
		auto it = find(k);
		return it == end() ? nullptr : &it->second;
	}
	std::vector<std::unique_ptr<value_type>> items_;
};

}  // namespace fl::sym
