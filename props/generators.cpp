// SPDX-License-Identifier: GPL-2.0-only
#include "props/generators.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include "check/program_text.h"

namespace fl {
void showValue(const Program &p, std::ostream &os)
{
	os << "\n" << format_program(p);
}
void showValue(const MapSpec &s, std::ostream &os)
{
	os << "value_size=" << s.value_size << " max_entries=" << s.max_entries << " flags=0x" << std::hex
	   << s.map_flags << std::dec;
}
}  // namespace fl

namespace fl::props {
namespace {

using namespace fl::uapi;

// Label slots: the ops are generated against fixed slots and renamed in
// order of definition afterwards, so that shrinking (which removes ops,
// definitions included) always leaves a valid Program.
constexpr std::array<const char *, 6> kSlotNames = {"A", "B", "C", "D", "R", "S"};
constexpr int kMapSlots = 4, kFirstReserve = 4;
constexpr uint64_t kMaxEagerPages = 1100, kWindowPages = 32;  // as the binary decoder's

Num pages(uint64_t n) { return Num{n, true}; }
Num bytes(uint64_t n) { return Num{n, false}; }

rc::Gen<int> gen_map_slot() { return rc::gen::inRange(0, kMapSlots); }

// An offset into a mapping: a page index and a byte inside the page, with
// the page tail (where struct bpf_array sits on the header page) likely.
// Pages are mostly the first few; now and then in the second 16-page
// fault-around window (v3 over a window while the first is populated), the
// last page of a 32-page window, or either side of a PTE table's end (512
// 4K PTEs: the 513- and 1030-page maps of gen_big_map_spec span one).
rc::Gen<Addr> gen_addr(rc::Gen<int> slot)
{
	return rc::gen::apply(
		[](int s, uint64_t page, uint64_t byte) {
			Addr a;
			a.label = s;
			a.offset = bytes(page * kPage + byte);
			return a;
		},
		slot,
		rc::gen::weightedOneOf<uint64_t>({{6, rc::gen::inRange<uint64_t>(0, 5)},
						  {1, rc::gen::element<uint64_t>(16, 17, 31, 500, 511, 512)}}),
		rc::gen::oneOf(rc::gen::just<uint64_t>(0), rc::gen::element<uint64_t>(8, 0xff0, 0xff8, 0xffc),
			       rc::gen::inRange<uint64_t>(0, kPage)));
}

rc::Gen<Num> gen_len(uint64_t visible)
{
	return rc::gen::weightedOneOf<Num>({
		{8, rc::gen::map(rc::gen::inRange<uint64_t>(1, 5), pages)},
		{2, rc::gen::map(gen_pages_near_edges(visible), pages)},
		{1, rc::gen::map(rc::gen::inRange<uint64_t>(0, 3 * kPage), bytes)},
	});
}

rc::Gen<int> gen_prot()
{
	return rc::gen::element(PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE, PROT_WRITE);
}

rc::Gen<Op> gen_mmap(uint64_t visible)
{
	return rc::gen::apply(
		[](int slot, Num len, uint64_t pgoff, int prot, bool populate, bool priv, bool fixed, int at_page) {
			Op op;
			op.kind = OpKind::mmap;
			op.label = slot;
			op.len = len;
			op.pgoff = pgoff;
			op.prot = prot;
			op.flags = (priv ? MAP_PRIVATE : MAP_SHARED) | (populate ? MAP_POPULATE : 0);
			if (fixed) {
				op.flags |= MAP_FIXED;
				op.has_at = true;
				op.at.label = kFirstReserve;
				op.at.offset = pages(uint64_t(at_page));
			}
			return op;
		},
		gen_map_slot(), gen_len(visible),
		rc::gen::weightedOneOf<uint64_t>({{3, rc::gen::inRange<uint64_t>(0, 4)},
						  {4, gen_pages_near_edges(visible)}}),
		gen_prot(), rc::gen::weightedOneOf<bool>({{4, rc::gen::just(false)}, {1, rc::gen::just(true)}}),
		rc::gen::weightedOneOf<bool>({{9, rc::gen::just(false)}, {1, rc::gen::just(true)}}),
		rc::gen::weightedOneOf<bool>({{4, rc::gen::just(false)}, {1, rc::gen::just(true)}}),
		rc::gen::inRange(0, 8));
}

rc::Gen<Op> gen_reserve()
{
	return rc::gen::map(rc::gen::inRange(kFirstReserve, int(kSlotNames.size())), [](int slot) {
		Op op;
		op.kind = OpKind::reserve;
		op.label = slot;
		op.len = pages(16);
		return op;
	});
}

rc::Gen<Op> gen_range_op(OpKind kind, uint64_t visible)
{
	return rc::gen::apply(
		[kind](Addr a, Num len, int prot, int advice) {
			Op op;
			op.kind = kind;
			a.offset = pages(a.offset.value / kPage);  // whole pages: the interesting splits
			op.addr = a;
			op.len = len;
			op.prot = prot;
			op.advice = advice;
			return op;
		},
		gen_addr(gen_map_slot()), gen_len(visible), gen_prot(),
		rc::gen::weightedOneOf<int>({{4, rc::gen::just(MADV_DONTNEED)},
					     {1, rc::gen::element(MADV_DONTFORK, MADV_DOFORK)}}));
}

rc::Gen<Op> gen_mremap(uint64_t visible)
{
	return rc::gen::apply(
		[](Addr a, uint64_t old_pages, int64_t delta, int mode, int to_page, int as) {
			Op op;
			op.kind = OpKind::mremap;
			op.addr = a;
			op.addr.offset = pages(0);
			op.len = pages(old_pages);
			op.new_len = pages(uint64_t(std::max<int64_t>(0, int64_t(old_pages) + delta)));
			if (mode >= 1)
				op.flags |= MREMAP_MAYMOVE;
			if (mode == 2) {
				// A same-size move into a reservation: the new VMA must
				// keep faulting the pages of the old one.
				op.flags |= MREMAP_FIXED;
				op.new_len = op.len;
				op.has_at = true;
				op.at.label = kFirstReserve;
				op.at.offset = pages(uint64_t(to_page));
				op.label = as;
			}
			return op;
		},
		gen_addr(gen_map_slot()), rc::gen::inRange<uint64_t>(1, 5), rc::gen::inRange<int64_t>(-2, 2),
		rc::gen::inRange(0, 3), rc::gen::inRange(0, 8), gen_map_slot());
	(void)visible;
}

rc::Gen<Op> gen_access(OpKind kind, const MapSpec &spec)
{
	// Now and then at the start of element 1 or 2 (an element boundary
	// inside the first page unless the values are large): where an update
	// landing astride its element shows through the mapping.
	const uint64_t elem = (uint64_t(spec.value_size) + 7) & ~uint64_t(7);
	auto at_element = rc::gen::apply(
		[elem](int slot, uint64_t k) {
			Addr a;
			a.label = slot;
			a.offset = bytes(k * elem);
			return a;
		},
		gen_map_slot(), rc::gen::inRange<uint64_t>(1, 3));
	return rc::gen::apply(
		[kind](Addr a, unsigned size, uint64_t value, int proc) {
			Op op;
			op.kind = kind;
			op.addr = a;
			op.size = size;
			op.value = kind == OpKind::store ? value : 0;
			op.proc = proc;
			return op;
		},
		rc::gen::weightedOneOf<Addr>({{4, gen_addr(gen_map_slot())}, {1, at_element}}),
		rc::gen::element(8u, 1u, 2u, 4u), rc::gen::inRange<uint64_t>(0, 1000),
		rc::gen::weightedOneOf<int>({{4, rc::gen::just(0)}, {1, rc::gen::just(1)}}));
}

// An element index: the first few (where neighbouring elements meet), any,
// or the one holding byte 2^32 of the data (its offset needs 64 bits).
rc::Gen<uint32_t> gen_index(const MapSpec &spec)
{
	const uint64_t elem = (uint64_t(spec.value_size) + 7) & ~uint64_t(7);
	const uint32_t at_4g = uint32_t(std::min<uint64_t>((uint64_t(1) << 32) / elem, UINT32_MAX));
	const bool big = elem * spec.max_entries > (uint64_t(1) << 32);  // at_4g exists: lean to it
	// On a big map every index of the last set crosses 2^32: lean to it
	// (at 3 of 9, verify's 200 cases per cell accepted no crossing update).
	return rc::gen::weightedOneOf<uint32_t>({
		{big ? 1 : 3, rc::gen::inRange<uint32_t>(0, 4)},
		{big ? 1 : 3, rc::gen::inRange<uint32_t>(0, spec.max_entries + 1)},
		{big ? 6 : 1, rc::gen::elementOf(std::vector<uint32_t>{at_4g, at_4g + 1, spec.max_entries - 1})},
	});
}

rc::Gen<Op> gen_elem_op(OpKind kind, const MapSpec &spec)
{
	return rc::gen::apply(
		[kind](uint32_t index, uint64_t value, int flags) {
			Op op;
			op.kind = kind;
			op.index = index;
			op.value = kind == OpKind::update ? value : 0;
			op.flags = kind == OpKind::update ? flags : 0;
			return op;
		},
		gen_index(spec), rc::gen::inRange<uint64_t>(0, 1000),
		// BPF_NOEXIST always fails on an array (every element exists)
		rc::gen::element<int>(int(BPF_ANY), int(BPF_ANY), int(BPF_EXIST), int(BPF_NOEXIST)));
}

rc::Gen<Op> gen_simple(OpKind kind, int proc)
{
	Op op;
	op.kind = kind;
	op.proc = proc;
	return rc::gen::just(op);
}

// One generated op. `read_back` (a lookup): read the element the last
// update before it wrote, resolved in build(); an independent index rarely
// meets it, and reading back what was written is what the contents
// invariant checks (an update landing in the wrong element shows there).
struct Step {
	Op op;
	bool read_back = false;
	std::vector<Op> then;  // ops that follow op as one unit (gen_fault_window)
	bool join = false;     // a "join" before op, if op and the one before have thread=
};

rc::Gen<Step> step(rc::Gen<Op> g, bool read_back = false)
{
	return rc::gen::map(std::move(g), [read_back](Op op) { return Step{op, read_back}; });
}

template <class T>
rc::Gen<T> uniform(rc::Gen<T> g)
{
	return rc::gen::resize(rc::kNominalSize, std::move(g));
}

// A page at an edge of v3's fault-around of an n-page mapping (as the
// binary decoder's edge_page): the first and last pages of its 16-page
// windows, either side of a PTE table's edge as the process's first mapping
// has them (it ends on one: the layout is top-down from an aligned
// mmap_base, so page n % 512 starts the last table).
uint64_t edge_page(uint64_t n, int which)
{
	const uint64_t t = n % 512;
	const uint64_t pick[] = {0, 1, 15, 16, 17, 31, n - 1, n - 2, n - 16, n - 17, t - 1, t, t + 15, t + 16, t + 511,
				 t + 496};
	const uint64_t p = pick[size_t(which) % std::size(pick)];
	return p < n ? p : 0;
}

// v3's ->map_pages over a window partly populated and at its edges: a
// fresh mapping of 17-40 pages from pgoff 0 (2-3 windows, the first
// clipped by the VMA's start) or of the whole map (spanning PTE tables on
// the 513- and 1024-page maps), a touch (a write fault sets one PTE), a
// DONTNEED, a split or a fork, then a read fault in the same window. One
// Step, so that shrinking keeps the touch with its fault.
rc::Gen<Step> gen_fault_window(const MapSpec &spec)
{
	const uint64_t v = visible_pages(spec);
	return rc::gen::apply(
		[v](int slot, bool whole, uint64_t extra, int edge, int near, int prep, bool unmap, uint64_t value) {
			uint64_t n = std::max<uint64_t>(1, std::min(whole ? v : 17 + extra, v)), pgoff = 0;
			if (n > kMaxEagerPages) {  // as build() cuts it
				pgoff = v - kWindowPages;
				n = kWindowPages;
			}
			Step s;
			s.op.kind = OpKind::mmap;
			s.op.label = slot;
			s.op.len = pages(n);
			s.op.pgoff = pgoff;
			s.op.prot = PROT_READ | PROT_WRITE;
			s.op.flags = MAP_SHARED;
			const uint64_t p = edge_page(n, edge);
			static constexpr int64_t kNear[] = {1, -1, 1, -1, 2, -2, 0, 8};
			const int64_t q0 = int64_t(p) + kNear[near];
			const uint64_t q = q0 < 0 || uint64_t(q0) >= n ? p : uint64_t(q0);
			auto access = [&](OpKind kind, uint64_t page, int proc) {
				Op op;
				op.kind = kind;
				op.addr.label = slot;
				op.addr.offset = pages(page);
				op.size = 8;
				op.value = kind == OpKind::store ? value : 0;
				op.proc = proc;
				s.then.push_back(op);
			};
			auto range = [&](OpKind kind, uint64_t page) {
				Op op;
				op.kind = kind;
				op.addr.label = slot;
				op.addr.offset = pages(page);
				op.len = pages(1);
				if (kind == OpKind::madvise)
					op.advice = MADV_DONTNEED;
				if (kind == OpKind::mprotect)
					op.prot = PROT_READ;
				s.then.push_back(op);
			};
			int proc = 0;
			switch (prep) {
			case 0:  // a touch: one PTE of the window
				access(OpKind::store, p, 0);
				break;
			case 1:  // a DONTNEED of one page of a window faulted in
				access(OpKind::load, p, 0);
				range(OpKind::madvise, p);
				break;
			case 2:  // a split (a page unmapped or reprotected) after a touch
				access(OpKind::store, p, 0);
				range(unmap ? OpKind::munmap : OpKind::mprotect, q + 2 < n ? q + 2 : n / 2);
				break;
			case 3: {  // a forked child touches a page of the mapping
				Op fork;
				fork.kind = OpKind::fork;
				s.then.push_back(fork);
				proc = 1;
				access(OpKind::store, p, proc);
				break;
			}
			case 4:  // a fault first: the next window may overlap it
				access(OpKind::load, p, 0);
				break;
			default:  // the fault alone, at an edge
				break;
			}
			access(OpKind::load, q, proc);
			return s;
		},
		// resize: every choice uniform from the first case on (inRange
		// scales its range with RapidCheck's size, small early on)
		// the whole map one time in four, three in four when it spans PTE tables
		gen_map_slot(), rc::gen::weightedOneOf<bool>({{v > 512 ? 1 : 3, rc::gen::just(false)}, {v > 512 ? 3 : 1, rc::gen::just(true)}}),
		uniform(rc::gen::inRange<uint64_t>(0, 24)),
		// on such a map, half the time a page either side of its PTE tables' edges
		uniform(v > 512 ? rc::gen::weightedOneOf<int>({{1, rc::gen::inRange(0, 16)}, {1, rc::gen::element(10, 11, 14, 15)}})
				: rc::gen::inRange(0, 16)),
		uniform(rc::gen::inRange(0, 8)),
		uniform(rc::gen::inRange(0, 6)), rc::gen::arbitrary<bool>(), rc::gen::inRange<uint64_t>(1, 1000));
}

rc::Gen<Step> gen_op(const MapSpec &spec)
{
	uint64_t v = visible_pages(spec);
	return rc::gen::weightedOneOf<Step>({
		{6, step(gen_mmap(v))},
		{1, step(gen_reserve())},
		{2, step(gen_range_op(OpKind::munmap, v))},
		{2, step(gen_range_op(OpKind::mprotect, v))},
		{2, step(gen_range_op(OpKind::madvise, v))},
		{2, step(gen_mremap(v))},
		{1, step(gen_simple(OpKind::fork, 0))},
		{1, step(gen_simple(OpKind::exit, 1))},
		{6, step(gen_access(OpKind::load, spec))},
		{4, step(gen_access(OpKind::store, spec))},
		{2, step(gen_elem_op(OpKind::update, spec))},
		{1, step(gen_elem_op(OpKind::lookup, spec))},
		{2, step(gen_elem_op(OpKind::lookup, spec), true)},
		{1, step(gen_simple(OpKind::freeze, 0))},
		{3, gen_fault_window(spec)},
		{1, step(rc::gen::map(gen_addr(gen_map_slot()), [](Addr a) {
			 Op op;
			 op.kind = OpKind::smaps;
			 op.addr = a;
			 return op;
		 }))},
	});
}

// The concurrent group's ops, aimed at one mapping (slot A) and the first
// elements, so that two threads meet on the same page, element or VMA: the
// races the issue lists (faults on one page; faults against munmap,
// mprotect, madvise, mremap, fork; update and freeze against mmap).
// Mostly A; B (a second mapping, of the same map) as well, so that the
// group's accesses reach every mapping (build() drops one on an undefined B).
rc::Gen<int> gen_near_slot()
{
	return rc::gen::weightedOneOf<int>({{3, rc::gen::just(0)}, {1, rc::gen::just(1)}});
}

rc::Gen<Addr> gen_near_a()
{
	return rc::gen::apply(
		[](int slot, uint64_t page, uint64_t byte) {
			Addr a;
			a.label = slot;
			a.offset = bytes(page * kPage + byte);
			return a;
		},
		gen_near_slot(), rc::gen::inRange<uint64_t>(0, 2), rc::gen::element<uint64_t>(0, 8));
}

rc::Gen<Op> gen_near_access(OpKind kind)
{
	return rc::gen::apply(
		[kind](Addr a, uint64_t value) {
			Op op;
			op.kind = kind;
			op.addr = a;
			op.size = 8;
			op.value = kind == OpKind::store ? value : 0;
			return op;
		},
		gen_near_a(), rc::gen::inRange<uint64_t>(1, 1000));
}

rc::Gen<Op> gen_near_range(OpKind kind)
{
	return rc::gen::apply(
		[kind](int slot, uint64_t page, uint64_t len, int prot) {
			Op op;
			op.kind = kind;
			op.addr.label = slot;
			op.addr.offset = pages(page);
			op.len = pages(len);
			op.prot = prot;
			op.advice = MADV_DONTNEED;
			return op;
		},
		gen_near_slot(), rc::gen::inRange<uint64_t>(0, 2), rc::gen::inRange<uint64_t>(1, 3), gen_prot());
}

// A shared mapping of slot `slot`: 1-2 pages from pgoff 0, read-only (so
// that map_freeze may succeed) or rw, maybe populated.
rc::Gen<Op> gen_plain_mmap(int slot)
{
	return rc::gen::apply(
		[slot](uint64_t len, bool writable, bool populate) {
			Op op;
			op.kind = OpKind::mmap;
			op.label = slot;
			op.len = pages(len);
			op.prot = PROT_READ | (writable ? PROT_WRITE : 0);
			op.flags = MAP_SHARED | (populate ? MAP_POPULATE : 0);
			return op;
		},
		rc::gen::inRange<uint64_t>(1, 3), rc::gen::arbitrary<bool>(),
		rc::gen::weightedOneOf<bool>({{3, rc::gen::just(false)}, {1, rc::gen::just(true)}}));
}

rc::Gen<Op> gen_concurrent_op()
{
	auto elem = [](OpKind kind) {
		return rc::gen::map(rc::gen::pair(rc::gen::inRange<uint32_t>(0, 2), rc::gen::inRange<uint64_t>(1, 1000)),
				    [kind](std::pair<uint32_t, uint64_t> iv) {
					    Op op;
					    op.kind = kind;
					    op.index = iv.first;
					    op.value = kind == OpKind::update ? iv.second : 0;
					    return op;
				    });
	};
	return rc::gen::weightedOneOf<Op>({
		{4, gen_near_access(OpKind::load)},
		{3, gen_near_access(OpKind::store)},
		{3, elem(OpKind::update)},
		{1, elem(OpKind::lookup)},
		{3, gen_simple(OpKind::freeze, 0)},
		{2, gen_plain_mmap(1)},
		{1, gen_near_range(OpKind::munmap)},
		{1, gen_near_range(OpKind::mprotect)},
		{1, gen_near_range(OpKind::madvise)},
		{1, gen_simple(OpKind::fork, 0)},
	});
}

// A preemption: anywhere in the run (a share of its steps), to either other
// thread. Uniform, as PCT places its change points: the step a window opens
// at moves with every op before it, so no position is likelier than another.
rc::Gen<std::pair<uint32_t, uint8_t>> gen_preemption()
{
	return rc::gen::pair(rc::gen::inRange<uint32_t>(0, ConcurrentCase::kShareOf), rc::gen::inRange<uint8_t>(0, 2));
}

// Slots to labels, in order of definition; ops that name a slot not yet
// defined are dropped (they would not parse).
Program build(const MapSpec &spec, const std::vector<Step> &raw)
{
	Program p;
	p.map = spec;
	std::array<int, kSlotNames.size()> label{};
	label.fill(-1);
	auto defined = [&](const Addr &a) { return label[size_t(a.label)] >= 0; };
	std::optional<uint32_t> updated;  // the last update's index
	bool join = false;
	auto add = [&](Op op) {
		bool uses_addr = op.kind == OpKind::munmap || op.kind == OpKind::mprotect ||
				 op.kind == OpKind::mremap || op.kind == OpKind::madvise ||
				 op.kind == OpKind::load || op.kind == OpKind::store || op.kind == OpKind::smaps;
		if ((uses_addr && !defined(op.addr)) || (op.has_at && !defined(op.at)))
			return;
		if (uses_addr)
			op.addr.label = label[size_t(op.addr.label)];
		if (op.has_at)
			op.at.label = label[size_t(op.at.label)];
		// A mapping of a big map that would succeed with more than
		// kMaxEagerPages pages becomes a window at its end: `pre`, the
		// lockstep reference, would insert every page at mmap.
		const uint64_t v = visible_pages(spec), n = op.len.pages ? op.len.value : op.len.value / kPage;
		if (op.kind == OpKind::mmap && n > kMaxEagerPages && op.pgoff < v && n <= v - op.pgoff) {
			op.pgoff = v - kWindowPages;
			op.len = pages(kWindowPages);
		}
		if (op.label >= 0) {
			size_t slot = size_t(op.label);
			if (label[slot] < 0)
				label[slot] = p.add_label(kSlotNames[slot]);
			op.label = label[slot];
		}
		if (join && op.thread >= 0 && !p.ops.empty() && p.ops.back().thread >= 0)
			p.joins.push_back(uint32_t(p.ops.size()));
		join = false;
		p.ops.push_back(op);
	};
	for (const Step &s : raw) {
		Op op = s.op;
		join = s.join;
		if (op.kind == OpKind::update)
			updated = op.index;
		if (s.read_back && updated)
			op.index = *updated;
		add(op);
		for (const Op &next : s.then)
			add(next);
	}
	return p;
}

}  // namespace

uint64_t visible_pages(const MapSpec &s)
{
	uint64_t elem = (uint64_t(s.value_size) + 7) & ~uint64_t(7);
	return (uint64_t(s.max_entries) * elem + kPage - 1) / kPage;
}

rc::Gen<MapSpec> gen_map_spec()
{
	return rc::gen::apply(
		[](uint32_t value_size, uint32_t max_entries, bool rdonly_prog) {
			MapSpec s;
			s.value_size = value_size;
			s.max_entries = max_entries;
			s.map_flags = BPF_F_MMAPABLE | (rdonly_prog ? BPF_F_RDONLY_PROG : 0);
			return s;
		},
		rc::gen::element<uint32_t>(8, 12, 40, 4096, 0x1001),
		rc::gen::oneOf(rc::gen::element<uint32_t>(1024, 16384, 1, 513, 1030), rc::gen::inRange<uint32_t>(1, 3000)),
		rc::gen::weightedOneOf<bool>({{5, rc::gen::just(false)}, {1, rc::gen::just(true)}}));
}

rc::Gen<uint64_t> gen_pages_near_edges(uint64_t visible)
{
	// base, then a small step below or above it: shrinks toward base 0,
	// step 0 (the small, visible-end values come first).
	return rc::gen::apply(
		[visible](int base, uint64_t step, bool below) -> uint64_t {
			uint64_t b;
			switch (base) {
			case 0: b = visible; break;
			case 1: b = uint64_t(1) << 20; break;  // 2^20 pages = 2^32 bytes at 4K
			case 2: b = uint64_t(1) << 32; break;  // a 32-bit register's worth
			case 3: b = uint64_t(1) << 52; break;  // 2^52 pages = 2^64 bytes
			default: b = 0; break;                 // 2^64: ULONG_MAX from below
			}
			return below ? b - step : b + step;
		},
		rc::gen::inRange(0, 5), rc::gen::inRange<uint64_t>(0, 4), rc::gen::arbitrary<bool>());
}

rc::Gen<MapSpec> gen_big_map_spec()
{
	// The same big numbers as the binary decoder's kBigGeometries
	// (src/check/program_binary.cpp): data past 4 GiB, value_size x
	// max_entries at 2^31 and 2^32, non-power-of-two entries for the mask.
	return rc::gen::map(
		rc::gen::elementOf(std::vector<std::pair<uint32_t, uint32_t>>{
			{8, (1u << 29) + 1}, {16, 1u << 28}, {12, (1u << 28) + 3}, {4096, (1u << 20) + 1},
			{65535, 65537}, {65536, 65536}, {32768, 65535}, {8, (1u << 28) - 1}, {24, 178956971},
			{4104, (1u << 20) - 1}, {4096, 513}, {4096, 1030}}),
		[](std::pair<uint32_t, uint32_t> g) {
			MapSpec s;
			s.value_size = g.first;
			s.max_entries = g.second;
			return s;
		});
}

rc::Gen<Program> gen_program(size_t max_ops)
{
	auto spec = rc::gen::weightedOneOf<MapSpec>({{5, gen_map_spec()}, {1, gen_big_map_spec()}});
	return rc::gen::mapcat(spec, [max_ops](const MapSpec &spec) {
		// resize: at most max_ops ops, whatever RC_PARAMS max_size is.
		auto ops = rc::gen::resize(int(max_ops), rc::gen::container<std::vector<Step>>(gen_op(spec)));
		return rc::gen::map(ops, [spec](const std::vector<Step> &raw) { return build(spec, raw); });
	});
}

// A map of 128 KiB (2 pages at 64K, 32 at 4K) or 64 KiB: every generated
// 1-2 page mapping is valid whatever the page size.
rc::Gen<MapSpec> gen_concurrent_map_spec()
{
	return rc::gen::map(rc::gen::element<uint32_t>(16384, 8192), [](uint32_t entries) {
		MapSpec s;
		s.value_size = 8;
		s.max_entries = entries;
		s.map_flags = BPF_F_MMAPABLE;
		return s;
	});
}

// Where a group op goes: on in the same group, or after a barrier ("join")
// or a sequential op, which start another group.
enum class Cut : uint8_t { none, join, op };

rc::Gen<ConcurrentCase> gen_concurrent_case()
{
	return rc::gen::mapcat(gen_concurrent_map_spec(), [](const MapSpec &spec) {
		// Before the groups: usually A mapped (and B); sometimes
		// anything (a fork makes threads of a second process possible).
		auto before = rc::gen::weightedOneOf<Step>(
			{{4, step(gen_plain_mmap(0))}, {1, step(gen_plain_mmap(1))}, {1, gen_op(spec)}});
		auto prefix = rc::gen::resize(3, rc::gen::container<std::vector<Step>>(before));
		auto group = rc::gen::resize(6, rc::gen::container<std::vector<Op>>(gen_concurrent_op()));
		auto threads = rc::gen::container<std::vector<uint8_t>>(6, rc::gen::inRange<uint8_t>(0, 3));
		// Each thread's process: mostly the first; the child of a fork
		// (process 1) when the ops made one.
		auto procs = rc::gen::container<std::vector<uint8_t>>(
			3, rc::gen::weightedOneOf<uint8_t>({{3, rc::gen::just<uint8_t>(0)}, {1, rc::gen::just<uint8_t>(1)}}));
		auto cuts = rc::gen::container<std::vector<Cut>>(
			6, rc::gen::weightedOneOf<Cut>({{6, rc::gen::just(Cut::none)},
						       {1, rc::gen::just(Cut::join)},
						       {1, rc::gen::just(Cut::op)}}));
		auto between = rc::gen::container<std::vector<Step>>(6, gen_op(spec));
		auto after = rc::gen::resize(2, rc::gen::container<std::vector<Op>>(gen_concurrent_op()));
		// Few switches, most often one or two: a bug of depth d needs only
		// d - 1 of them at the right steps (PCT's bound; the bounded
		// search's few departures), and every further random switch is
		// a chance to leave the window before the other thread is through.
		using Preemptions = std::vector<std::pair<uint32_t, uint8_t>>;
		auto picks = rc::gen::weightedOneOf<Preemptions>(
			{{3, rc::gen::container<Preemptions>(1, gen_preemption())},
			 {2, rc::gen::container<Preemptions>(2, gen_preemption())},
			 {1, rc::gen::resize(8, rc::gen::container<Preemptions>(gen_preemption()))}});
		// Lock failures: which fallible acquisitions (by Decision::event)
		// fail; mostly none.
		auto fails = rc::gen::resize(3, rc::gen::container<std::vector<uint32_t>>(
							rc::gen::inRange<uint32_t>(0, 8)));
		return rc::gen::apply(
			[spec](std::vector<Step> ops, std::vector<Op> group, std::vector<uint8_t> thread,
			       std::vector<uint8_t> procs, std::vector<Cut> cut, std::vector<Step> between, std::vector<Op> after,
			       std::vector<std::pair<uint32_t, uint8_t>> schedule, std::vector<uint32_t> fails) {
				// The groups' threads; a thread stays in the process of its
				// first op, which is the child (process 1) only if an op
				// before it forks: before that, every op of the child's
				// would be skipped (its process does not exist yet).
				auto forks = [](const Step &st) { return st.op.kind == OpKind::fork; };
				bool forked = std::any_of(ops.begin(), ops.end(), forks);
				std::array<int, 3> proc{-1, -1, -1};
				for (size_t i = 0; i < group.size(); i++) {
					if (i > 0 && cut[i] == Cut::op) {
						ops.push_back(between[i]);
						forked |= forks(between[i]);
					}
					Op op = group[i];
					op.thread = thread[i];
					int &p = proc[thread[i]];
					if (p < 0)
						p = forked ? procs[thread[i]] : 0;
					op.proc = p;
					forked |= op.kind == OpKind::fork;
					Step st{op};
					st.join = i > 0 && cut[i] == Cut::join;
					ops.push_back(st);
				}
				for (const Op &op : after)
					ops.push_back(Step{op});
				return ConcurrentCase{build(spec, ops), std::move(schedule), std::move(fails)};
			},
			prefix, group, threads, procs, cuts, between, after, picks, fails);
	});
}

}  // namespace fl::props
