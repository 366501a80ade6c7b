// SPDX-License-Identifier: GPL-2.0-only
// Byte string -> Program. Lengths, page offsets and addresses are chosen
// symbolically, in pages relative to the map's visible data, so that one
// input means "one page past the end" at every page size rather than some
// absolute number that only matters at one of them.
#include "check/program_binary.h"
#include "check/byte_reader.h"

#include <algorithm>
#include <iterator>
#include <string>

namespace fl {

namespace {

constexpr uint64_t kPage = 4096;  // the unit of the symbolic page counts below
constexpr size_t kMaxMaps = 8;      // labels A..H
constexpr size_t kMaxReserves = 4;  // labels R..U
constexpr int kMaxProcs = 64;
// MAP_POPULATE faults in every page; keep that cheap for the model.
constexpr uint64_t kMaxPopulatePages = 256;
// 40 pages: 2.5 of v3's 16-page fault-around windows, so that mappings of
// 17-40 pages (windows clipped by the VMA, the next window partly populated)
// exist on every geometry, not only on the big ones.
constexpr uint64_t kMaxMapPages = 40;
// Maps below the 32-bit machine's RAM (sim/machine.h kMachineRam32) are
// shrunk, bigger ones kept (they fail cheaply).
// A mapping of a big map that would succeed with more pages than this is
// cut to a window near its end: `pre`, the lockstep reference, inserts every
// page at mmap, and a million PTEs per exec would stall the fuzzers. The
// limit admits the two-PTE-table geometry (1030 pages) whole.
constexpr uint64_t kMaxEagerPages = 1100, kWindowPages = 32;

// Geometries at the big numbers of this path (the 64-bit machine has RAM
// for them; sparse pages make them free until touched): data just above
// 4 GiB, value_size x max_entries at and around 2^32 (u32) and 2^31
// (INT_MAX), values up to 1 MiB (each update copies value_size bytes),
// non-power-of-two entries (the
// spec_v1 mask rounds their allocation up) and mid-sized maps whose
// mappings span PTE tables (512 pages at 4K) for v3's fault-around.
struct Geometry {
	uint32_t value_size, max_entries;
};
constexpr Geometry kBigGeometries[] = {
	{8, (1u << 29) + 1},         // 4 GiB + 8
	{16, 1u << 28},              // exactly 4 GiB
	{12, (1u << 28) + 3},        // elem 16, non-power-of-two: mask allocates 8 GiB
	{4096, (1u << 20) + 1},      // 4 GiB + one page
	{65535, 65537},              // value_size x max_entries = 2^32 - 1
	{65536, 65536},              // = 2^32: 0 in u32
	{32768, 65535},              // 2^31 - 2^15: just below INT_MAX bytes
	{1u << 20, 4097},            // elem 1 MiB x non-power-of-two entries: 4 GiB + 1 MiB
	{8, (1u << 28) - 1},         // 2 GiB - 8: INT_MAX bytes, non-power-of-two
	{24, 178956971},             // 2^32 + 8 bytes, non-power-of-two
	{4104, (1u << 20) - 1},      // elem 4104 x non-power-of-two entries: 4.3 GB
	{8, 0xffffffff},             // u32 max entries: the mask overflows (E2BIG), bypass 32 GiB
	{4096, 513},                 // one page past a PTE table
	{4096, 1030},                // two PTE tables and a bit
	{4096, 40},                  // 2.5 fault-around windows
	{8, 65536 + 24},             // 128 pages and 3 elements
};

uint64_t sat_dec(uint64_t x)
{
	return x ? x - 1 : 0;
}

uint64_t pages_of(const Num &n)
{
	return n.pages ? n.value : n.value / kPage + (n.value % kPage != 0);
}

Num pages(uint64_t n)
{
	return Num{n, true};
}

Num bytes(uint64_t n)
{
	return Num{n, false};
}

// A mapping (or reservation) the program has made: its label and length.
struct Region {
	int label;
	uint64_t pages;
};

class Decoder {
public:
	Decoder(const uint8_t *data, size_t size) : in_(data, size) {}
	Program run();

private:
	Bytes in_;
	Program p_;
	uint64_t data_bytes_ = 0;  // max_entries * round_up(value_size, 8)
	uint64_t visible_ = 0;     // data_bytes_ in 4K pages, rounded up
	uint64_t elem_ = 8;        // round_up(value_size, 8)
	uint32_t last_index_ = 0;  // of the last update/lookup: a lookup after an update reads it back
	std::vector<Region> maps_;
	std::vector<Region> reserves_;
	int procs_ = 1;

	void map_spec();
	void op();
	Op make(OpKind kind, int proc) const;

	void mmap(int proc, bool populate, bool over_existing);
	void reserve(int proc);
	void munmap(int proc);
	void mprotect(int proc);
	void mremap(int proc);
	void madvise(int proc);
	void fork(int proc);
	void exit();
	void load_store(int proc, bool store);
	void update_lookup(int proc, bool update);
	void smaps(int proc);
	void fault_window(int proc);
	uint64_t edge_page(uint64_t pages);

	uint64_t pgoff();
	bool eager_may_accept(uint64_t pgoff, uint64_t n) const;
	Num length(uint64_t pgoff);
	int prot();
	uint32_t index();
	uint64_t value();
	size_t pick_region();
	Region &region() { return maps_[pick_region()]; }
	Addr inside(const Region &r);
	Addr at_page(const Region &r, uint64_t page) const;
	int define_map(uint64_t pages);
};

Program Decoder::run()
{
	map_spec();
	while (p_.ops.size() < size_t(kMaxDecodedOps) && !in_.empty())
		op();
	if (p_.ops.size() > size_t(kMaxDecodedOps))
		p_.ops.resize(size_t(kMaxDecodedOps));  // a fault_window() near the end
	return std::move(p_);
}

void Decoder::map_spec()
{
	// Element sizes around the 8-byte rounding and the page size.
	static constexpr uint32_t kValueSizes[] = {1,  4,    8,    8,    8,    12,   16,   24,
						   64, 100,  4096, 4096, 2,    3,    7,    9,
						   40, 1000, 2048, 4095, 4097, 8192, 65536, 12};
	static constexpr uint32_t kSmall[] = {1, 2, 3, 4, 7, 8, 15, 16, 64, 100, 255, 256, 257, 511, 512, 513, 1000, 1024};
	// Sizes where the u32 arithmetic of array_map_alloc and the page
	// rounding of the mmap path can overflow.
	static constexpr uint32_t kBoundary[] = {0, 1u << 31, (1u << 31) + 1, 0xffffffff, (1u << 31) - 1, 1u << 20, (1u << 20) + 1};
	MapSpec &m = p_.map;

	uint8_t b = in_.u8();
	if (b % 32 < std::size(kValueSizes))
		m.value_size = kValueSizes[b % 32];
	else if (b % 32 < 30)
		m.value_size = 1 + in_.u16() % 8192;
	else if (b % 32 == 30)
		m.value_size = in_.u16();
	else
		m.value_size = in_.u32();  // mostly E2BIG, now and then an overflow

	b = in_.u8();
	if (b < 160)
		m.max_entries = kSmall[b % std::size(kSmall)];
	else if (b < 224)
		m.max_entries = 1 + in_.u16() % 4096;
	else if (b % 8 < std::size(kBoundary))
		m.max_entries = kBoundary[b % 8];
	else
		m.max_entries = in_.u32();

	b = in_.u8();
	m.key_size = b < 240 ? 4 : b % 4 == 0 ? 0 : b % 4 == 1 ? 8 : b % 4 == 2 ? in_.u32() : 4;
	const bool big = b >= 240 && b % 4 == 3;
	// One map in 32 spans PTE tables whole (513 or 1030 4K pages, mapped
	// whole by fault_window()): v3's fault-around at a table's edges.
	const bool tables = b >= 232 && b < 240;
	if (big) {
		const Geometry &g = kBigGeometries[in_.pick(std::size(kBigGeometries))];
		m.value_size = g.value_size;
		m.max_entries = g.max_entries;
	} else if (tables) {
		m.value_size = 4096;
		m.max_entries = b & 1 ? 1030 : 513;
	}

	b = in_.u8();
	m.map_flags = uapi::BPF_F_MMAPABLE;
	if (b >= 192) {
		// Rarely not mmapable at all: every mmap then fails early.
		if ((b & 0x21) == 0x21)
			m.map_flags = 0;
		if (b & 2)
			m.map_flags |= uapi::BPF_F_RDONLY_PROG;
		if (b & 4)
			m.map_flags |= uapi::BPF_F_WRONLY_PROG;
		if (b & 8)
			m.map_flags |= uapi::BPF_F_RDONLY;
		if (b & 16)
			m.map_flags |= uapi::BPF_F_WRONLY;
	}

	// Keep maps that the machine can allocate at most kMaxMapPages of data:
	// a bigger map finds nothing a small one does not (offsets are chosen
	// relative to its end) but makes the eager reference insert every page
	// on every mmap. Sizes past the machine's RAM stay: they fail cheaply.
	uint64_t elem = (uint64_t(m.value_size) + 7) & ~uint64_t(7);
	const uint64_t bytes = elem * m.max_entries;
	if (!big && !tables && bytes > kMaxMapPages * kPage && bytes < kMachineRam32) {
		if (elem > kMaxMapPages * kPage) {
			m.value_size = uint32_t(kMaxMapPages * kPage - m.value_size % 8);
			elem = (uint64_t(m.value_size) + 7) & ~uint64_t(7);
		}
		m.max_entries = uint32_t(std::max<uint64_t>(1, kMaxMapPages * kPage / elem));
	}

	// A map the 1 GiB machine refused stays refused (E2BIG: value_size
	// past INT_MAX) on the 64 GiB one when its values are large: every
	// update and lookup would copy value_size bytes.
	if (!big && bytes >= kMachineRam32 && m.value_size > (1u << 20) && m.value_size <= 0x7fffffff)
		m.value_size |= 0x80000000u;

	// At most (2^32 - 1) * 2^32: no overflow in 64 bits.
	data_bytes_ = elem * m.max_entries;
	visible_ = data_bytes_ / kPage + (data_bytes_ % kPage != 0);
	elem_ = elem;
}

void Decoder::op()
{
	const uint8_t sel = in_.u8();
	// The top bits move the op into a child process now and then.
	int proc = 0;
	if (procs_ > 1 && sel >= 0xc0)
		proc = sel >= 0xe0 ? 1 : procs_ - 1;
	const bool have_map = !maps_.empty();
	switch (sel & 31) {
	case 0: case 1: case 2: mmap(proc, false, false); break;
	case 3: fault_window(proc); break;
	case 4: mmap(proc, true, false); break;
	case 30: mmap(proc, false, have_map); break;
	case 5: reserve(proc); break;
	case 6: case 7: have_map ? munmap(proc) : mmap(proc, false, false); break;
	case 8: case 9: have_map ? mprotect(proc) : mmap(proc, false, false); break;
	case 10: case 11: case 12: have_map ? mremap(proc) : mmap(proc, false, false); break;
	case 13: case 31: have_map ? madvise(proc) : mmap(proc, false, false); break;
	case 14: case 15: fork(proc); break;
	case 16: exit(); break;
	case 17: case 18: case 19: case 20: have_map ? load_store(proc, false) : mmap(proc, false, false); break;
	case 21: case 22: case 23: have_map ? load_store(proc, true) : mmap(proc, false, false); break;
	case 24: update_lookup(proc, true); break;
	case 25: update_lookup(proc, false); break;
	case 26: case 27: p_.ops.push_back(make(OpKind::freeze, proc)); break;
	case 28:
		// Half as likely as the rest: nothing can be mapped after it.
		if (sel & 0x20) {
			p_.ops.push_back(make(OpKind::close, proc));
			break;
		}
		[[fallthrough]];
	case 29: have_map ? smaps(proc) : mmap(proc, false, false); break;
	}
}

Op Decoder::make(OpKind kind, int proc) const
{
	Op op;
	op.kind = kind;
	op.proc = proc;
	return op;
}

// ---- choices ------------------------------------------------------------------

uint64_t Decoder::pgoff()
{
	const uint8_t b = in_.u8();
	switch (b % 32) {
	case 14: case 15: return 1;
	case 16: case 17: return sat_dec(visible_);
	case 18: case 19: return visible_;
	case 20: return visible_ + 1;
	case 21: return (uint64_t(1) << 20) - 1;
	case 22: return uint64_t(1) << 20;
	case 23: return (uint64_t(1) << 20) + 1;
	case 24: return (uint64_t(1) << 32) - 1;
	case 25: return uint64_t(1) << 32;
	case 26: return (uint64_t(1) << 52) - 1;  // pgoff << 12 overflows above
	case 27: return uint64_t(1) << 52;
	case 28: return UINT64_MAX;
	case 29: return in_.u64();
	case 30: {
		// The same overflow for 16K and 64K pages.
		static constexpr uint64_t k[] = {(uint64_t(1) << 50) - 1, uint64_t(1) << 50,
						 (uint64_t(1) << 48) - 1, uint64_t(1) << 48};
		return k[in_.pick(4)];
	}
	case 31: return visible_ / 2;
	default: return 0;
	}
}

// Could `pre` accept this mapping, inserting every page, at some width,
// page size or door, with the page offset k as the kernel sees it? The
// 64-bit mmap door shifts the offset into a byte offset and back (k mod
// 2^52, 2^50, 2^48 for 4K, 16K, 64K pages); the direct door takes it whole.
// Below 2^48, array_map_mmap's bound (k + pages <= the data's pages) is
// exact (tightest at 4K pages, the unit here). Above, k * PAGE_SIZE wraps
// that bound, and only remap's exact checks on the vmalloc area remain: from
// area page k + 1 (the header page first; k = 2^64 - 1 wraps to it), within
// at most twice the data (spec_v1's mask rounds max_entries up to a power of
// two) and the header. The 32-bit widths narrow further, but their maps
// (below 1 GiB of RAM) are under kMaxEagerPages.
bool Decoder::eager_may_accept(uint64_t pgoff, uint64_t n) const
{
	const uint64_t area = 2 * visible_ + 16;
	for (unsigned bits : {64u, 52u, 50u, 48u}) {
		const uint64_t k = bits == 64 ? pgoff : pgoff & ((uint64_t(1) << bits) - 1);
		if (k < (uint64_t(1) << 48) ? k < visible_ && n <= visible_ - k : k + 1 < area && n <= area - (k + 1))
			return true;
	}
	return false;
}

Num Decoder::length(uint64_t off)
{
	const uint8_t b = in_.u8();
	switch (b % 16) {
	case 4: case 5: return pages(visible_);
	case 6: case 7: return pages(1);
	case 8: return pages(2);
	case 9: return pages(visible_ + 1);
	case 10: return bytes(0);
	case 11: return bytes(data_bytes_);  // exactly the data, at any page size
	case 12: return pages(in_.u16());
	case 13: return bytes(in_.u64());
	case 14: return bytes(1);
	case 15: return pages(sat_dec(visible_));
	default: return pages(off < visible_ ? visible_ - off : 1);
	}
}

int Decoder::prot()
{
	static constexpr int kProts[] = {
		uapi::PROT_READ | uapi::PROT_WRITE, uapi::PROT_READ | uapi::PROT_WRITE,
		uapi::PROT_READ | uapi::PROT_WRITE, uapi::PROT_READ | uapi::PROT_WRITE,
		uapi::PROT_READ, uapi::PROT_READ, uapi::PROT_NONE, uapi::PROT_WRITE,
		uapi::PROT_READ | uapi::PROT_WRITE | uapi::PROT_EXEC,
	};
	return kProts[in_.pick(std::size(kProts))];
}

uint32_t Decoder::index()
{
	const uint32_t n = p_.map.max_entries;
	switch (in_.pick(8)) {
	case 0: return 1;
	case 1: return n - 1;
	case 2: return n;
	case 3: return in_.u32();
	case 4: return in_.u8();
	case 5: return last_index_;
	// The element holding byte 2^32 of the data: its offset crosses (or
	// starts at) 2^32, where a u32 offset computation would wrap.
	case 6: return elem_ ? uint32_t(std::min<uint64_t>((uint64_t(1) << 32) / elem_, UINT32_MAX)) : 0;
	default: return 0;
	}
}

uint64_t Decoder::value()
{
	switch (in_.pick(4)) {
	case 0: return 0x5a5a5a5a5a5a5a5a;
	case 1: return UINT64_MAX;
	default: return in_.u64();
	}
}

size_t Decoder::pick_region()
{
	return in_.pick(unsigned(maps_.size()));
}

Addr Decoder::at_page(const Region &r, uint64_t page) const
{
	Addr a;
	a.label = r.label;
	if (page)
		a.offset = pages(page);
	return a;
}

// A page-aligned address, mostly inside the region.
Addr Decoder::inside(const Region &r)
{
	switch (in_.pick(8)) {
	case 3: return at_page(r, r.pages > 1 ? 1 : 0);
	case 4: return at_page(r, sat_dec(r.pages));
	case 5: return at_page(r, r.pages / 2);
	case 6: return at_page(r, r.pages);  // just past the end
	case 7: return at_page(r, r.pages ? in_.u8() % r.pages : 0);
	default: return at_page(r, 0);
	}
}

// A label for a new mapping: the next letter, or an old one re-bound.
int Decoder::define_map(uint64_t n)
{
	if (maps_.size() < kMaxMaps) {
		const int label = p_.add_label(std::string(1, char('A' + maps_.size())));
		maps_.push_back({label, n});
		return label;
	}
	Region &r = region();
	r.pages = n;
	return r.label;
}

// ---- ops ----------------------------------------------------------------------

void Decoder::mmap(int proc, bool populate, bool over_existing)
{
	Op op = make(OpKind::mmap, proc);
	op.pgoff = pgoff();
	op.len = length(op.pgoff);
	op.prot = prot();
	op.flags = uapi::MAP_SHARED;
	const uint8_t f = in_.u8();
	switch (f % 16) {
	case 10: case 11: op.flags = uapi::MAP_PRIVATE; break;
	case 12: populate = true; break;
	case 13:
		if (!reserves_.empty()) {
			op.flags |= uapi::MAP_FIXED;
			op.has_at = true;
			op.at = at_page(reserves_[in_.pick(unsigned(reserves_.size()))], 0);
		}
		break;
	case 14:
		if (!maps_.empty()) {
			op.flags |= uapi::MAP_FIXED_NOREPLACE;
			op.has_at = true;
			op.at = inside(region());
		}
		break;
	case 15: op.flags = uapi::MAP_PRIVATE; populate = true; break;
	}
	if (over_existing) {
		// MAP_FIXED over part of an existing mapping: splits it.
		op.flags = (op.flags & ~uapi::MAP_FIXED_NOREPLACE) | uapi::MAP_FIXED;
		op.has_at = true;
		op.at = inside(region());
	}
	uint64_t n = pages_of(op.len);
	if (n > kMaxEagerPages && op.pgoff < visible_ && n <= visible_ - op.pgoff) {
		// It would succeed: keep its end, cut it to a window.
		op.pgoff = visible_ - kWindowPages;
		op.len = pages(n = kWindowPages);
	} else if (n > kMaxEagerPages && eager_may_accept(op.pgoff, n)) {
		// An offset the front door narrows into the data would still make
		// `pre` insert every page: keep the offset, cut the length.
		op.len = pages(n = kWindowPages);
	}
	if (populate && n <= kMaxPopulatePages)
		op.flags |= uapi::MAP_POPULATE;
	// What later ops take as the mapping's length, capped: munmap, madvise
	// and mprotect of all of it walk it page by page, and a longer mapping
	// was mostly refused (one that would be accepted was cut above).
	op.label = define_map(std::min(n, kMaxEagerPages));
	p_.ops.push_back(op);
}

void Decoder::reserve(int proc)
{
	if (reserves_.size() >= kMaxReserves) {
		// Enough holes; re-use the byte for a mapping instead.
		mmap(proc, false, false);
		return;
	}
	uint64_t largest = 0;
	for (const Region &r : maps_)
		largest = std::max(largest, r.pages);
	Op op = make(OpKind::reserve, proc);
	const uint8_t b = in_.u8();
	switch (b % 4) {
	case 0: op.len = pages(std::min<uint64_t>(std::max<uint64_t>(largest, 14), 1u << 20) + 2); break;
	case 1: op.len = pages(16); break;
	case 2: op.len = pages(64); break;
	case 3: op.len = pages(4); break;
	}
	if (b >= 224 && !maps_.empty()) {
		// Right behind a mapping, so that it cannot grow in place.
		const Region &r = region();
		op.has_at = true;
		op.at = at_page(r, r.pages);
	}
	op.label = p_.add_label(std::string(1, char('R' + reserves_.size())));
	reserves_.push_back({op.label, op.len.value});
	p_.ops.push_back(op);
}

void Decoder::munmap(int proc)
{
	const Region &r = region();
	Op op = make(OpKind::munmap, proc);
	op.len = pages(1);
	switch (in_.pick(4)) {
	case 0: op.addr = at_page(r, 0); op.len = pages(r.pages); break;
	case 1: op.addr = at_page(r, 0); break;
	case 2: op.addr = at_page(r, sat_dec(r.pages)); break;
	case 3: op.addr = at_page(r, r.pages / 2); break;  // splits in three
	}
	p_.ops.push_back(op);
}

void Decoder::mprotect(int proc)
{
	const Region &r = region();
	Op op = make(OpKind::mprotect, proc);
	op.len = pages(1);
	switch (in_.pick(4)) {
	case 0: op.addr = at_page(r, r.pages / 2); break;
	case 1: op.addr = at_page(r, 0); break;
	case 2: op.addr = at_page(r, 0); op.len = pages(r.pages); break;
	case 3: op.addr = at_page(r, sat_dec(r.pages)); break;
	}
	op.prot = prot();
	p_.ops.push_back(op);
}

void Decoder::mremap(int proc)
{
	// By index: define_map() may grow maps_ under a reference.
	const size_t ri = pick_region();
	const int src = maps_[ri].label;
	const uint64_t n = maps_[ri].pages;
	Op op = make(OpKind::mremap, proc);
	op.addr = at_page(maps_[ri], 0);
	op.len = pages(n);
	op.new_len = pages(n);
	const uint8_t b = in_.u8();
	const bool moves_to_reserve = b % 8 == 1 || b % 8 == 2 || b % 8 == 5;
	if (moves_to_reserve && reserves_.empty()) {
		reserve(proc);
		return;
	}
	// The moved mapping gets a fresh label (the old one names the hole it
	// left behind), or keeps its own when the letters are used up.
	auto as = [&](uint64_t new_pages) {
		if (maps_.size() < kMaxMaps) {
			op.label = define_map(new_pages);
		} else {
			op.label = src;
			maps_[ri].pages = new_pages;
		}
	};
	switch (b % 8) {
	case 0:  // shrink in place
		op.new_len = pages(n > 1 ? n - 1 : 1);
		maps_[ri].pages = op.new_len.value;
		break;
	case 1:
	case 2:  // same-size move into a reserved hole
	case 5:  // move one page out of the middle
		op.flags = uapi::MREMAP_MAYMOVE | uapi::MREMAP_FIXED;
		op.has_at = true;
		op.at = at_page(reserves_[in_.pick(unsigned(reserves_.size()))], b % 8 == 2 ? 1 : 0);
		if (b % 8 == 5) {
			op.addr = at_page(maps_[ri], n / 2);
			op.len = op.new_len = pages(1);
		}
		as(pages_of(op.new_len));
		break;
	case 3:  // grow, moving if need be
		op.new_len = pages(n + 1);
		op.flags = uapi::MREMAP_MAYMOVE;
		op.label = src;
		maps_[ri].pages = n + 1;
		break;
	case 4:  // move, leaving the old range mapped but empty
		op.flags = uapi::MREMAP_MAYMOVE | uapi::MREMAP_DONTUNMAP;
		as(n);
		break;
	case 6:  // grow in place
		op.new_len = pages(n + 1);
		break;
	case 7:  // old_len 0: a second mapping of the same shared pages
		op.len = bytes(0);
		op.flags = uapi::MREMAP_MAYMOVE;
		as(n);
		break;
	}
	p_.ops.push_back(op);
}

void Decoder::madvise(int proc)
{
	static constexpr int kAdvice[] = {uapi::MADV_DONTNEED, uapi::MADV_DONTNEED, uapi::MADV_DONTNEED,
					  uapi::MADV_DONTNEED, uapi::MADV_DONTFORK, uapi::MADV_DOFORK};
	const Region &r = region();
	Op op = make(OpKind::madvise, proc);
	op.advice = kAdvice[in_.pick(std::size(kAdvice))];
	op.addr = at_page(r, 0);
	op.len = pages(r.pages);
	if (in_.u8() & 1) {
		op.addr = inside(r);
		op.len = pages(1);
	}
	p_.ops.push_back(op);
}

void Decoder::fork(int proc)
{
	if (procs_ >= kMaxProcs) {
		p_.ops.push_back(make(OpKind::exit, procs_ - 1));
		return;
	}
	p_.ops.push_back(make(OpKind::fork, proc));
	procs_++;
}

void Decoder::exit()
{
	// Mostly a child; the first process now and then, which ends
	// everything it would still have done, so only rarely.
	const uint8_t b = in_.u8();
	if (b % 8 == 7) {
		p_.ops.push_back(make(OpKind::exit, 0));
		return;
	}
	if (procs_ == 1) {
		fork(0);
		return;
	}
	p_.ops.push_back(make(OpKind::exit, 1 + (b / 8) % (procs_ - 1)));
}

void Decoder::load_store(int proc, bool store)
{
	static constexpr unsigned kSizes[] = {8, 8, 8, 8, 4, 4, 2, 1};
	const Region &r = region();
	Op op = make(store ? OpKind::store : OpKind::load, proc);
	op.size = kSizes[in_.pick(8)];
	const uint64_t align = ~uint64_t(op.size - 1);
	op.addr.label = r.label;
	switch (in_.pick(16)) {
	case 4: case 5: op.addr = at_page(r, sat_dec(r.pages)); break;
	case 6: op.addr = at_page(r, r.pages); break;
	case 7: op.addr = at_page(r, 1); break;
	// Byte offsets are the same at every page size: the last bytes of the
	// data, the first byte after it (the tail of its last page), an
	// element boundary, the end of the first 4K.
	case 8: op.addr.offset = bytes(data_bytes_ >= op.size ? data_bytes_ - op.size : 0); break;
	case 9: op.addr.offset = bytes(data_bytes_); break;
	case 10: op.addr.offset = bytes(p_.map.value_size & align); break;
	// the middle; in a mapping longer than a PTE table (512 4K pages), a
	// page-table edge (the first mapping ends on one: mmap_base is aligned)
	case 11: op.addr = at_page(r, r.pages > 512 ? r.pages - 512 : r.pages / 2); break;
	case 12: op.addr.offset = bytes(kPage - op.size); break;
	case 13:  // just below the mapping
		op.addr.negative = true;
		op.addr.offset = pages(1);
		break;
	case 14: op.addr.offset = bytes(in_.u16() & align); break;
	case 15: op.addr = inside(r); break;
	default: break;  // the first byte
	}
	if (store)
		op.value = value();
	p_.ops.push_back(op);
}

void Decoder::update_lookup(int proc, bool update)
{
	Op op = make(update ? OpKind::update : OpKind::lookup, proc);
	op.index = last_index_ = index();
	if (update) {
		op.value = value();
		const uint8_t f = in_.u8() % 8;
		op.flags = int(f == 6 ? uapi::BPF_NOEXIST : f == 7 ? uapi::BPF_EXIST : uapi::BPF_ANY);
	}
	p_.ops.push_back(op);
}

void Decoder::smaps(int proc)
{
	Op op = make(OpKind::smaps, proc);
	op.addr = inside(region());
	p_.ops.push_back(op);
}

// A page at an edge of v3's fault-around of an n-page mapping: the first
// and last pages of its 16-page windows, and either side of a PTE table's
// edge as the process's first mapping has them (it ends on one: mmap_base
// is aligned, the layout top-down, so page n % 512 starts the last table).
uint64_t Decoder::edge_page(uint64_t n)
{
	const uint64_t t = n % 512;
	const uint64_t pick[] = {0, 1, 15, 16, 17, 31, n - 1, n - 2, n - 16, n - 17, t - 1, t, t + 15, t + 16, t + 511,
				 t + 496};
	const uint64_t p = pick[in_.pick(std::size(pick))];
	return p < n ? p : 0;  // the wrapped and the past-the-end ones: page 0
}

// v3's ->map_pages over a window partly populated and at its edges: a read
// fault in a 16-page window where a touch (a write fault: one PTE), a
// DONTNEED, a split or a fork came first, mostly on a fresh mapping of
// 17-40 pages from pgoff 0 (2-3 windows, the first clipped by the VMA's
// start: the layout is top-down) or of the whole map (big geometries span
// PTE tables). Several ops from one selector byte, so that mutations keep
// the touch and the fault together.
void Decoder::fault_window(int proc)
{
	const uint8_t b = in_.u8();
	int label = -1;
	uint64_t n = 0;
	if (maps_.empty() || b % 4 != 0) {
		Op op = make(OpKind::mmap, proc);
		// the whole map: now and then, mostly when it spans PTE tables
		n = b % 8 < (visible_ > 512 ? 2 : 6) ? 17 + in_.u8() % 24 : visible_;
		n = std::max<uint64_t>(1, std::min(n, visible_));
		if (n > kMaxEagerPages) {  // as mmap() cuts it
			op.pgoff = visible_ - kWindowPages;
			n = kWindowPages;
		}
		op.len = pages(n);
		op.prot = uapi::PROT_READ | uapi::PROT_WRITE;
		op.flags = uapi::MAP_SHARED;
		op.label = label = define_map(n);
		p_.ops.push_back(op);
	} else {
		const Region &r = region();
		label = r.label;
		n = std::max<uint64_t>(1, r.pages);
	}
	const Region r{label, n};
	const uint64_t p = edge_page(n);
	static constexpr int64_t kNear[] = {1, -1, 1, -1, 2, -2, 0, 8};
	const int64_t q0 = int64_t(p) + kNear[in_.pick(std::size(kNear))];
	const uint64_t q = q0 < 0 || uint64_t(q0) >= n ? p : uint64_t(q0);
	auto access = [&](OpKind kind, uint64_t page, int in_proc) {
		Op op = make(kind, in_proc);
		op.addr = at_page(r, page);
		op.size = 8;
		op.value = kind == OpKind::store ? value() : 0;
		p_.ops.push_back(op);
	};
	auto range = [&](OpKind kind, uint64_t page) {
		Op op = make(kind, proc);
		op.addr = at_page(r, page);
		op.len = pages(1);
		if (kind == OpKind::madvise)
			op.advice = uapi::MADV_DONTNEED;
		if (kind == OpKind::mprotect)
			op.prot = uapi::PROT_READ;
		p_.ops.push_back(op);
	};
	int in_proc = proc;
	switch (in_.pick(6)) {
	case 0:  // a touch: one PTE of the window
		access(OpKind::store, p, proc);
		break;
	case 1:  // a DONTNEED of one page of a window faulted in
		access(OpKind::load, p, proc);
		range(OpKind::madvise, p);
		break;
	case 2:  // a split (a page unmapped or reprotected) after a touch
		access(OpKind::store, p, proc);
		range(in_.u8() & 1 ? OpKind::munmap : OpKind::mprotect, q + 2 < n ? q + 2 : n / 2);
		break;
	case 3:  // a forked child touches a page of the parent's mapping
		if (procs_ < kMaxProcs) {
			p_.ops.push_back(make(OpKind::fork, proc));
			in_proc = procs_++;
		}
		access(OpKind::store, p, in_proc);
		break;
	case 4:  // a fault first: the next window may overlap it
		access(OpKind::load, p, proc);
		break;
	default:  // the fault alone, at an edge
		break;
	}
	access(OpKind::load, q, in_proc);
}

}  // namespace

std::vector<uint8_t> random_program_bytes(std::mt19937_64 &rng)
{
	std::vector<uint8_t> bytes(4 + rng() % 157);
	for (uint8_t &b : bytes)
		b = uint8_t(rng());
	return bytes;
}

Program decode_program(const uint8_t *data, size_t size)
{
	return Decoder(data, size).run();
}

ConcurrentInput decode_concurrent(const uint8_t *data, size_t size)
{
	size_t used = 0;
	uint64_t len = 0;
	for (int shift = 0; used < size && shift < 28; shift += 7) {  // varint, at most 4 bytes
		const uint8_t b = data[used++];
		len |= uint64_t(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	len = std::min<uint64_t>(len, size - used);
	ConcurrentInput out;
	out.program = decode_program(data + used, size_t(len));
	Bytes rest(data + used + len, size - used - size_t(len));
	std::vector<Op> &ops = out.program.ops;
	// shape: bit 0 a third thread; bit 1 a join inside the group, before
	// its op 1 + (shape >> 2) % (size - 1); the next byte's low two bits
	// count lock failures, each a byte naming the fallible question (% 4).
	const uint8_t shape = rest.u8();
	const int threads = 2 + (shape & 1);
	const size_t group = ops.empty() ? 0 : 1 + rest.u8() % std::min<size_t>(ops.size(), 6);
	const size_t first = ops.size() - group;
	std::vector<int> proc(size_t(threads), -1);
	for (size_t i = first; i < ops.size(); i++) {
		Op &op = ops[i];
		op.thread = int(rest.u8() % unsigned(threads));
		int &pr = proc[size_t(op.thread)];
		if (pr < 0)
			pr = op.proc;
		op.proc = pr;  /* a thread lives in one process */
	}
	if ((shape & 2) && group >= 2)
		out.program.joins.push_back(uint32_t(first + 1 + (shape >> 2) % (group - 1)));
	for (unsigned n = rest.u8() & 3; n && !rest.empty(); n--)
		out.fail_events.push_back(rest.u8() % 4);  /* a run asks a few: one per fault under the VMA lock */
	while (!rest.empty()) {
		const uint8_t delta = rest.u8();
		out.schedule.emplace_back(delta, rest.u8());
	}
	return out;
}

}  // namespace fl
