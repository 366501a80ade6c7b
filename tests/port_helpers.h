// SPDX-License-Identifier: GPL-2.0-only
// Small helpers shared by the tests of the kernel port (tests/port_*_test.cpp).
// The tests are written from the kernel pages under docs/ (cited as
// docs/<page>.md#<section>, e.g. docs/bpf-syscall.md#bpf_map_mmap) and drive the port only through the Machine API and
// Programs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "check/differential.h"
#include "check/program_text.h"
#include "base/config.h"
#include "sim/machine.h"

namespace fl::port {

inline constexpr int R = uapi::PROT_READ, W = uapi::PROT_WRITE, X = uapi::PROT_EXEC, RW = R | W;
inline constexpr int SHARED = uapi::MAP_SHARED, PRIVATE = uapi::MAP_PRIVATE;

inline bool is_lazy(Patch p) { return p != Patch::pre; }

// Every arch, patch level and page size, through today's anon-inode door,
// without the Spectre-v1 bypass. Tests narrow or widen the axes they need.
inline ConfigFilter base_filter()
{
	ConfigFilter f;
	f.doors = {Door::anon};
	f.spec_v1 = {false};
	return f;
}

inline Config config(Arch arch, Patch patch, unsigned page_shift = 12, Door door = Door::anon,
		     bool bypass = false)
{
	Config c;
	c.arch = arch;
	c.patch = patch;
	c.page_shift = page_shift;
	c.door = door;
	c.bypass_spec_v1 = bypass;
	return c;
}

// A machine with the map created (asserting that creation succeeded).
inline std::unique_ptr<Machine> machine_with_map(const Config &c, const MapSpec &spec = {})
{
	auto m = make_machine(c);
	int64_t fd = m->map_create(spec);
	EXPECT_GE(fd, 0) << "map_create failed on " << c.name();
	return m;
}

// A map whose elements are exactly one page each: element i is data page i.
inline MapSpec page_elems(const Config &c, uint32_t max_entries, uint32_t flags = uapi::BPF_F_MMAPABLE)
{
	MapSpec s;
	s.value_size = uint32_t(1) << c.page_shift;
	s.max_entries = max_entries;
	s.map_flags = flags;
	return s;
}

// mmap of the map fd, `npages` pages long at page offset `pgoff`.
inline int64_t map_pages(Machine &m, uint64_t npages, uint64_t pgoff = 0, int prot = RW,
			 int flags = SHARED, uint64_t hint = 0, int pid = 0)
{
	return m.mmap(pid, hint, npages * m.page_size(), prot, flags, true, pgoff);
}

// An anonymous PROT_NONE region (a target for MAP_FIXED / MREMAP_FIXED).
inline int64_t reserve(Machine &m, uint64_t npages, int pid = 0)
{
	return m.mmap(pid, 0, npages * m.page_size(), uapi::PROT_NONE, PRIVATE, false, 0);
}

inline std::vector<uint8_t> le_bytes(uint64_t v, size_t n = 8)
{
	std::vector<uint8_t> b(n);
	for (size_t i = 0; i < n; i++)
		b[i] = i < 8 ? uint8_t(v >> (8 * i)) : 0;
	return b;
}

inline uint64_t le_value(const std::vector<uint8_t> &b)
{
	uint64_t v = 0;
	for (size_t i = 0; i < b.size() && i < 8; i++)
		v |= uint64_t(b[i]) << (8 * i);
	return v;
}

// A successful 8-byte user load; a signal fails the test and returns ~0.
inline uint64_t load64(Machine &m, uint64_t addr, int pid = 0)
{
	Access a = m.load(pid, addr, 8);
	EXPECT_EQ(a.sig, 0) << "load at 0x" << std::hex << addr << " raised a signal";
	return a.sig ? ~uint64_t(0) : le_value(a.bytes);
}

inline int store64(Machine &m, uint64_t addr, uint64_t v, int pid = 0)
{
	return m.store(pid, addr, 8, v).sig;
}

// Whether the smaps "VmFlags:" line has mnemonic `flag`.
inline bool has_vm_flag(const std::string &vm_flags, const std::string &flag)
{
	std::istringstream in(vm_flags);
	std::string w;
	while (in >> w)
		if (w == flag)
			return true;
	return false;
}

inline uint64_t rss(const Machine &m, uint64_t addr, int pid = 0)
{
	SmapsEntry s = m.smaps(pid, addr);
	EXPECT_TRUE(s.found) << "no VMA at 0x" << std::hex << addr;
	return s.rss_pages;
}

// No invariant broken, neither during the last op nor in the machine now.
inline ::testing::AssertionResult invariants_hold(Machine &m)
{
	Violation v = m.take_op_violation();
	if (!v)
		v = m.check_invariants();
	if (!v)
		return ::testing::AssertionSuccess();
	return ::testing::AssertionFailure() << "violation " << to_string(v.what) << ": " << v.detail;
}

// The invariant currently broken (none when all hold).
inline Invariant broken_invariant(Machine &m)
{
	Violation v = m.take_op_violation();
	if (!v)
		v = m.check_invariants();
	return v.what;
}

// Loads every page of [addr, addr + npages pages) and checks that each is
// backed by the page the eager remap would choose: data page first_pgoff + k
// (docs/invariants.md#page-choice).
inline void expect_eager_pages(Machine &m, uint64_t addr, uint64_t npages, uint64_t first_pgoff, int pid = 0)
{
	for (uint64_t k = 0; k < npages; k++) {
		uint64_t a = addr + k * m.page_size();
		Access acc = m.load(pid, a, 1);
		EXPECT_EQ(acc.sig, 0) << "page " << k;
		EXPECT_GE(m.user_page_id(pid, a), 0) << "page " << k;
		EXPECT_EQ(m.user_page_id(pid, a), m.map_data_page_id(first_pgoff + k)) << "page " << k;
	}
}

// A Program from inline text; a parse error fails the test.
inline Program program(const std::string &text)
{
	ParseResult r = parse_program(text);
	if (!r.program) {
		ADD_FAILURE() << "parse error " << r.error.str();
		return Program{};
	}
	return *r.program;
}

}  // namespace fl::port
