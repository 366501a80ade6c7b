// SPDX-License-Identifier: GPL-2.0-only
// The abstract model for the stateful test: the map's bytes (sparse, zero
// by default), frozen, RDONLY_PROG, and the live VMAs of every process as
// (base mapping, first page, pages, file offset, prot, may-write, zapped
// pages). Addresses are (base, page) pairs: the real address of a base is
// only known to the system under test (model_props.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "sim/machine.h"

namespace fl::props {

struct MVma {
	int pid = 0;
	int base = 0;           // which mmap/mremap made it
	uint64_t start = 0;     // first page, relative to the base address
	uint64_t n = 0;         // pages
	uint64_t pgoff = 0;     // vm_pgoff of the first page
	int prot = 0;           // PROT_NONE, PROT_READ or PROT_READ|PROT_WRITE
	bool maywrite = false;  // VM_MAYWRITE: mapped writable (bpf_map_mmap drops it otherwise)
	int region_page = -1;   // first page inside the reservation, or -1
	// eager only: the pages (from the VMA's first) MADV_DONTNEED left
	// unpopulated; a set, not a bit per page: a lazy VMA may be 4 GiB.
	std::set<uint64_t> zapped;
};

// Copy-on-write: RapidCheck copies the model several times for every
// command it generates (into the generator's arguments, again per try of a
// command whose precondition fails, for nextState), and most copies are
// never changed. They share the bytes and the VMAs until one is: the copies
// were most of a case's time (malloc under ASan, tree nodes), far more than
// building and tearing down the machine the commands run on.
template <class T>
class Cow {
public:
	const T &get() const { return *p_; }
	T &edit()
	{
		if (p_.use_count() > 1)
			p_ = std::make_shared<T>(*p_);
		return *p_;
	}

private:
	std::shared_ptr<T> p_ = std::make_shared<T>();
};

struct Model {
	MapSpec spec;
	uint64_t visible = 0;
	bool eager = false;  // `pre`: no fault handler, zapped pages SIGBUS
	// A lazy level at 64 bits on a map of 4 GiB or more: a mapping of the
	// whole map costs nothing until touched, so Mmap may ask for 4 GiB.
	bool huge = false;
	bool frozen = false;
	// By pid: at most three processes (Fork), held inline so that a copy
	// allocates nothing.
	std::array<bool, 3> alive{true};
	int procs = 1;
	int next_base = 1;              // base 0 is the reservation

	// Only the non-zero bytes (a missing one reads 0): a 1 MiB value held
	// whole made each pick_index scan a million tree nodes.
	const std::map<uint64_t, uint8_t> &bytes() const { return bytes_.get(); }
	const std::vector<MVma> &vmas() const { return vmas_.get(); }
	std::vector<MVma> &edit_vmas() { return vmas_.edit(); }

	uint64_t elem_size() const { return (uint64_t(spec.value_size) + 7) & ~uint64_t(7); }
	uint64_t writecnt() const
	{
		uint64_t c = 0;
		for (const MVma &v : vmas())
			c += v.maywrite;
		return c;
	}
	// The n bytes at off: zeros, then the non-zero ones in the range (a
	// lookup of a 64 KiB value visits those, not 64 Ki offsets).
	std::vector<uint8_t> read(uint64_t off, uint64_t n) const
	{
		std::vector<uint8_t> out(n);
		for (auto it = bytes().lower_bound(off); it != bytes().end() && it->first < off + n; ++it)
			out[it->first - off] = it->second;
		return out;
	}
	void set_byte(uint64_t off, uint8_t b)
	{
		if (b)
			bytes_.edit()[off] = b;
		else if (bytes().count(off))
			bytes_.edit().erase(off);
	}
	void zero_bytes(uint64_t lo, uint64_t hi)
	{
		if (bytes().lower_bound(lo) == bytes().lower_bound(hi))
			return;  // nothing to zero: no copy
		std::map<uint64_t, uint8_t> &b = bytes_.edit();
		b.erase(b.lower_bound(lo), b.lower_bound(hi));
	}
	int find(int pid, int base, uint64_t start) const
	{
		for (size_t i = 0; i < vmas().size(); i++)
			if (vmas()[i].pid == pid && vmas()[i].base == base && vmas()[i].start == start)
				return int(i);
		return -1;
	}
	bool region_free(int pid, uint64_t page, uint64_t n) const
	{
		for (const MVma &v : vmas())
			if (v.pid == pid && v.region_page >= 0 && uint64_t(v.region_page) < page + n &&
			    page < uint64_t(v.region_page) + v.n)
				return false;
		return true;
	}

private:
	Cow<std::map<uint64_t, uint8_t>> bytes_;
	Cow<std::vector<MVma>> vmas_;
};

inline constexpr uint64_t kRegionPages = 32;

}  // namespace fl::props
