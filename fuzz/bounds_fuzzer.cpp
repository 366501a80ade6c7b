// SPDX-License-Identifier: GPL-2.0-only
// Fuzz target `bounds`: bytes -> (page size, value_size, max_entries,
// spec_v1, vm_pgoff, length, front door) -> the port's mmap decision and,
// for an accepted VMA, the kernel page behind each faulting address,
// compared with an exact specification: accept iff the file range
// [pgoff * PAGE_SIZE, pgoff * PAGE_SIZE + len) lies inside the visible data
// PAGE_ALIGN(max_entries * round_up(value_size, 8)), and then page i of the
// VMA is data page pgoff + i. The spec is evaluated without wrapping (every
// product is checked for overflow, which is the same as 128-bit math here).
// The patch level and width come from the build; door and page size from
// the input.
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <memory>
#include <optional>

#include "check/workspace.h"
#include "fuzz_config.h"
#include "sim/machine.h"

namespace {

struct Input {
	uint32_t value_size, max_entries;
	uint64_t pgoff, len_pages;
	unsigned page_shift;
	fl::Door door;
	bool spec_bypass;
};

// A tiny reader: past the end, every read is zero.
struct Reader {
	const uint8_t *d;
	size_t n, i = 0;
	uint64_t take(unsigned bytes)
	{
		uint64_t v = 0;
		for (unsigned k = 0; k < bytes; k++)
			v |= uint64_t(i < n ? d[i++] : 0) << (8 * k);
		return v;
	}
};

// Interesting values are picked by a selector byte so that the boundary
// cases (2^20, 2^32, 2^52 pages, the visible end) are one mutation away.
uint64_t pick_pgoff(Reader &r, uint64_t visible)
{
	static const uint64_t table[] = {0, 1, 0xfffff, 0x100000, 0xffffffff, 0x100000000ull,
					 0xfffffffffffffull, 0x10000000000000ull, ~0ull};
	uint8_t sel = (uint8_t)r.take(1);
	uint64_t raw = r.take(8);
	switch (sel % 4) {
	case 0: return table[(sel / 4) % (sizeof table / sizeof table[0])] + (int8_t)(raw & 0xff);
	case 1: return visible + (int8_t)(raw & 0xff);
	case 2: return raw & 0xff;
	default: return raw;
	}
}

Input decode(const uint8_t *data, size_t size)
{
	Reader r{data, size};
	Input in;
	static const unsigned shifts[] = {12, 14, 16};
	static const fl::Door doors[] = {fl::Door::anon, fl::Door::regular, fl::Door::direct};
	uint8_t knobs = (uint8_t)r.take(1);
	in.page_shift = shifts[(knobs & 3) % 3];
	in.door = doors[((knobs >> 2) & 3) % 3];
	in.spec_bypass = knobs & 16;
	in.value_size = (uint32_t)r.take(2) + 1;          // 1..65536
	in.max_entries = (uint32_t)r.take(2) + 1;         // 1..65536 (<= 4 GiB of data)
	uint64_t elem = (in.value_size + 7ull) & ~7ull;
	uint64_t page = 1ull << in.page_shift;
	uint64_t visible = (in.max_entries * elem + page - 1) >> in.page_shift;
	in.pgoff = pick_pgoff(r, visible);
	uint8_t lsel = (uint8_t)r.take(1);
	in.len_pages = lsel & 0x80 ? (uint64_t)r.take(8) : (uint64_t)(lsel & 0x7f) + (lsel & 0x40 ? visible - 0x40 : 0);
	return in;
}

// The vm_pgoff the kernel receives: the front door's syscall ABI narrows the
// user's value (mmap's byte offset on 64-bit, mmap2's 4096-byte units in a
// 32-bit register); `direct` hands over what an unsigned long holds.
uint64_t vm_pgoff_of(const Input &in, fl::Arch arch)
{
	unsigned long_bits = arch == fl::Arch::A32 ? 32 : 64;
	unsigned bits = in.door == fl::Door::direct ? long_bits
			: arch == fl::Arch::A64    ? 64 - in.page_shift
						   : 32 + 12 - in.page_shift;
	return bits >= 64 ? in.pgoff : in.pgoff & ((uint64_t(1) << bits) - 1);
}

// The exact specification of accepting a VMA of len_pages at vm_pgoff.
bool spec_accepts(uint64_t vm_pgoff, uint64_t len_pages, uint64_t visible_pages)
{
	uint64_t end;
	if (len_pages == 0 || __builtin_add_overflow(vm_pgoff, len_pages, &end))
		return false;
	return end <= visible_pages;
}

[[noreturn]] void report(const Input &in, const fl::Config &c, const char *what, uint64_t page)
{
	std::fprintf(stderr,
		     "faultline: bounds: %s (%s): value_size=%u max_entries=%u pgoff=0x%llx len=%llup page=%llu\n"
		     "# as a Program:\nmap value_size=%u max_entries=%u\nmmap A len=%llup pgoff=0x%llx prot=r\nload A+%llup\n",
		     what, c.name().c_str(), in.value_size, in.max_entries, (unsigned long long)in.pgoff,
		     (unsigned long long)in.len_pages, (unsigned long long)page, in.value_size, in.max_entries,
		     (unsigned long long)in.len_pages, (unsigned long long)in.pgoff, (unsigned long long)page);
	std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// Before the first input: one accepted mapping per page size, door and
// spec_v1 (the knobs byte; value_size 8, 1024 entries, pgoff 0, one page),
// which builds each configuration's workspace, so that no input's run is the
// first in its configuration (AFL++ stability).
extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	for (uint8_t knobs = 0; knobs < 32; knobs++) {
		const uint8_t in[] = {knobs, 7, 0, 0xff, 3, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1};
		LLVMFuzzerTestOneInput(in, sizeof in);
	}
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Input in = decode(data, size);
	fl::Config c = fl::fuzz::build_config();
	c.page_shift = in.page_shift;
	c.door = in.door;
	c.bypass_spec_v1 = in.spec_bypass;
	// Lengths beyond what a width's registers carry are not one VMA.
	unsigned long_bits = c.arch == fl::Arch::A32 ? 32 : 64;
	if (in.len_pages >> (long_bits - in.page_shift))
		return 0;

	// The thread's machine for this configuration, restored to its fresh
	// state (check/workspace.h), or a new one under FL_MACHINE_REUSE=0.
	std::unique_ptr<fl::Machine> fresh;
	std::optional<fl::Workspace::Session> session;
	fl::Machine *m;
	if (fl::Workspace *ws = fl::Workspace::of(c, false))
		m = &session.emplace(*ws).test();
	else
		m = (fresh = fl::make_machine(c)).get();
	fl::MapSpec spec;
	spec.value_size = in.value_size;
	spec.max_entries = in.max_entries;
	if (m->map_create(spec) < 0)
		return 0;  // e.g. ENOMEM for a map the simulated RAM cannot hold
	uint64_t elem = (in.value_size + 7ull) & ~7ull;
	uint64_t page = 1ull << in.page_shift;
	uint64_t visible = (in.max_entries * elem + page - 1) >> in.page_shift;

	const uint64_t vm_pgoff = vm_pgoff_of(in, c.arch);
	int64_t addr = m->mmap(0, 0, in.len_pages << in.page_shift, fl::uapi::PROT_READ, fl::uapi::MAP_SHARED, true,
			       in.pgoff);
	if (addr < 0) {
		// Completeness: a VMA inside the visible data must be accepted,
		// unless the syscall could not express it (the width's ABI) or
		// the address space cannot hold it.
		if (spec_accepts(vm_pgoff, in.len_pages, visible) && addr != -ENOMEM)
			report(in, c, "refused a VMA inside the visible data", 0);
		return 0;
	}
	if (!spec_accepts(vm_pgoff, in.len_pages, visible)) {
		// Soundness: touch the first and last page to show what leaks.
		m->load(0, (uint64_t)addr, 1);
		report(in, c, "accepted a VMA outside the visible data", 0);
	}
	// Every faulting page is the data page pgoff + i (first, last and a
	// few in between: the mapping may be large).
	for (uint64_t i : {uint64_t(0), in.len_pages / 2, in.len_pages - 1}) {
		m->load(0, (uint64_t)addr + (i << in.page_shift), 1);
		if (m->user_page_id(0, (uint64_t)addr + (i << in.page_shift)) != m->map_data_page_id(vm_pgoff + i))
			report(in, c, "faulted in the wrong page", i);
	}
	if (fl::Violation v = m->check_invariants())
		report(in, c, fl::to_string(v.what), 0);
	return 0;
}
