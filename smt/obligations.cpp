// SPDX-License-Identifier: GPL-2.0-only
// Obligations 1-6 of issue 5 as Z3 queries. Each kernel expression is
// written at the width the C code computes it in (uint.h: exact integers
// reduced mod 2^width where C wraps), next to the line of the port it
// mirrors (src/kernel/kernel/bpf/arraymap.cpp, mm/vmalloc.cpp,
// mm/memory.cpp); each property compares the unreduced integers, so a wrap
// in the kernel expression cannot cancel out inside the property.
//
// Map geometry: the properties depend on the map only through `visible`
// (the data bytes a VMA may cover) and `array_size` (the vmalloc'ed area
// without its guard page). The table's queries leave both free, bound only
// by facts every real map has (abstract_geometry): an over-approximation,
// so unsat still proves the property for every real value_size,
// max_entries and bypass_spec_v1. A sat model is re-solved with the exact
// geometry (exact_geometry) and a small map before it is replayed, so no
// counterexample rests on the abstraction.
#include "smt/kmodel.h"

namespace fl::smt {

using z3::expr;

// include/bpf.h BPF_ARRAY_VALUE_OFFSET: offsetof(struct bpf_array, value),
// sizeof(*array) for the PAGE_ALIGN; hdr_pgoff = PAGE_ALIGN(0x110) >> PAGE_SHIFT = 1
// for every page size >= 4K.
constexpr uint64_t kValueOffset = 0x110;

namespace {

unsigned log2_exact(uint64_t v)
{
	unsigned n = 0;
	while ((1ull << n) < v)
		n++;
	return n;
}

// Widths and constants of one kernel: BITS_PER_LONG and PAGE_SHIFT. Every
// variable's range constraint lands in `ranges` (added to the solver last).
struct K {
	z3::context &c;
	unsigned W, s;
	std::vector<expr> &ranges;

	uint64_t page_size() const { return 1ull << s; }
	uint64_t hdr() const { return ((kValueOffset + page_size() - 1) & ~(page_size() - 1)) >> s; }
	uint64_t hdr_bytes() const { return hdr() << s; }
	// PTRS_PER_PTE = PAGE_SIZE / sizeof(pte): 8-byte PTEs on 64-bit, 4 on i386
	uint64_t ptrs_per_pte() const { return page_size() / (W / 8); }
	// mm/memory.c fault_around_pages = fault_around_bytes (64K) >> PAGE_SHIFT
	uint64_t fault_around_pages() const { return 65536 >> s; }

	UInt ul(uint64_t v) const { return uconst(c, v, W); }
	UInt u64(uint64_t v) const { return uconst(c, v, 64); }
	UInt var(const char *name, unsigned bits) const { return uvar(c, name, bits, ranges); }
	// (u64) of an unsigned long, and u64 -> unsigned long (pointer-width wrap)
	UInt to64(const UInt &e) const { return to_width(e, 64); }
	UInt trunc(const UInt &e) const { return to_width(e, W); }
	expr two_to_W() const { return two_to(c, W); }
	// PAGE_ALIGN on a u64 (the addition wraps like C's; it never does here)
	UInt page_align64(const UInt &x) const { return clear_low_bits(x + (page_size() - 1), s); }
	expr page_aligned(const UInt &x) const { return low_bits(x, s).v == 0; }
};

struct Geometry {
	expr ok;          // array_map_alloc_check and array_map_alloc succeed
	UInt visible;     // PAGE_ALIGN((u64)map.max_entries * elem_size), u64
	UInt array_size;  // PAGE_ALIGN(sizeof) + PAGE_ALIGN((u64)alloc entries * elem_size), u64
};

// What the table's queries keep of the geometry: both sizes page aligned,
// the visible data after the header page(s) inside the area, the area and
// its guard page inside the address space. exact_geometry has them all:
// PAGE_ALIGN results are aligned; alloc >= (u64)max_entries * elem_size
// (bypass: equal; otherwise the power of two >= max_entries times
// elem_size), so PAGE_ALIGN(alloc) >= visible; the last is its `ok`.
Geometry abstract_geometry(const K &k)
{
	UInt visible = k.var("visible", 64), array_size = k.var("array_size", 64);
	expr ok = k.page_aligned(visible) && k.page_aligned(array_size) &&
		  k.c.int_val(k.hdr_bytes()) + visible.v <= array_size.v &&
		  array_size.v + k.c.int_val(k.page_size()) <= k.two_to_W();
	return {ok, visible, array_size};
}

// The exact geometry: array_map_alloc_check, array_map_alloc and
// bpf_map_area_mmapable_alloc on symbolic value_size, max_entries, bypass.
// Nonlinear ((u64)max_entries * elem_size): only for re-solving
// counterexamples into replayable maps.
Geometry exact_geometry(const K &k, const Vars &v)
{
	z3::context &c = k.c;
	UInt vs{v.value_size, 32}, me{v.max_entries, 32};
	// array_map_alloc_check: value_size == 0 || max_entries == 0 -> EINVAL;
	// value_size > INT_MAX -> E2BIG
	expr ok = vs.v != 0 && me.v != 0 && vs.v <= 0x7fffffff;
	// elem_size = round_up(attr->value_size, 8): u32, no wrap below INT_MAX
	UInt es = clear_low_bits(vs + 7, 3);
	// (u64)max_entries * elem_size: below 2^32 * 2^31, no wrap
	UInt product{me.v * es.v, 64};
	// !bypass_spec_v1: max_entries = 1 << fls_long(max_entries - 1), E2BIG
	// if that overflows u32: the allocation holds the smallest power of two
	// >= max_entries entries.
	ok = ok && (v.bypass || me.v <= c.int_val((int64_t)1 << 31));
	expr pow2 = c.int_const("round_pow2");
	expr is_pow2 = c.bool_val(false);
	for (unsigned n = 0; n <= 31; n++)
		is_pow2 = is_pow2 || pow2 == c.int_val((int64_t)1 << n);
	ok = ok && z3::implies(!v.bypass, is_pow2 && pow2 >= me.v && (pow2 == 1 || pow2 < 2 * me.v));
	UInt alloc{z3::ite(v.bypass, product.v, es.v * pow2), 64};
	UInt array_size = k.u64(k.hdr_bytes()) + k.page_align64(alloc);
	// bpf_map_area_mmapable_alloc succeeded: the area and its guard page fit
	// in the address space (the weakest form of "vmalloc found room")
	ok = ok && array_size.v + c.int_val(k.page_size()) <= k.two_to_W();
	return {ok, k.page_align64(product), array_size};
}

// The mmap-time decision of each level, on (vm_pgoff, len) both unsigned long.
struct Mmap {
	const K &k;
	const Geometry &g;
	UInt pgoff, len;

	// array_map_mmap, pre and v1: vma->vm_pgoff * PAGE_SIZE + (vm_end - vm_start)
	// in unsigned long, widened to u64 against the u64 PAGE_ALIGN(...)
	expr bound_ulong() const { return ule(k.to64((pgoff << k.s) + len), g.visible); }
	// v2/v3: (u64)vma->vm_pgoff * PAGE_SIZE + (vm_end - vm_start) in u64
	expr bound_u64() const { return ule((k.to64(pgoff) << k.s) + k.to64(len), g.visible); }
	// remap_vmalloc_range(vma, addr, vm_pgoff + hdr_pgoff) -> _partial:
	// check_shl_overflow(pgoff, PAGE_SHIFT, &off); PAGE_ALIGN(size) is len;
	// check_add_overflow(size, off, &end_index) || end_index > get_vm_area_size
	// (area->size - guard = array_size). All unsigned long.
	UInt remap_pgoff() const { return pgoff + k.hdr(); }
	UInt remap_off() const { return remap_pgoff() << k.s; }
	expr remap_ok() const
	{
		expr shl_ok = (remap_pgoff() >> (k.W - k.s)).v == 0;
		expr add_ok = len.v + remap_off().v < k.two_to_W();
		return shl_ok && add_ok && ule(k.to64(len + remap_off()), g.array_size);
	}
	expr accepted(Patch level) const
	{
		switch (level) {
		case Patch::pre: return bound_ulong() && remap_ok();
		case Patch::v1: return bound_ulong();
		default: return bound_u64();
		}
	}
	// kaddr - vmalloc_addr (unsigned long: the pointer addition wraps) for
	// the page whose vmf->pgoff is `vmf_pgoff`, i.e. page `i` of the VMA.
	UInt koff(Patch level, const UInt &i) const
	{
		UInt vmf_pgoff = pgoff + i;  // linear_page_index, pgoff_t
		switch (level) {
		case Patch::pre:  /* remap loop: kaddr += off, then PAGE_SIZE per page */
			return remap_off() + (i << k.s);
		case Patch::v1:  /* (vmf->pgoff + pgoff) << PAGE_SHIFT, unsigned long */
			return (vmf_pgoff + k.hdr()) << k.s;
		default:  /* (((u64)vmf->pgoff + pgoff) << PAGE_SHIFT), then ulong + u64 */
			return k.trunc((k.to64(vmf_pgoff) + k.hdr()) << k.s);
		}
	}
	// the map's visible data: [hdr, hdr + visible) bytes from the area base
	expr in_visible(const UInt &koff) const
	{
		expr lo = k.c.int_val(k.hdr_bytes());
		return koff.v >= lo && koff.v < lo + g.visible.v;
	}
	expr in_allocation(const UInt &koff) const { return koff.v < g.array_size.v; }
};

// Obligation 5: __split_vma, mremap (same size) and dup_mmap keep
// linear_page_index(vma, addr) = ((addr - vm_start) >> PAGE_SHIFT) + vm_pgoff
// (mm/vma.c, mm/mremap.c, kernel/fork.c; docs/vma.md#fork, docs/vma.md#split-munmap-mprotect-mremap).
// One piece [ps, pe) of the original VMA stands for both halves of a split
// and for what munmap/mremap shrinking leave; it is then moved anywhere.
// fork's vm_area_dup copies vm_start/vm_end/vm_pgoff unchanged: no formula.
void invariance(const K &k, z3::solver &s, Vars &v)
{
	UInt start = k.var("vm_start", k.W), pgoff{v.vm_pgoff, k.W}, len{v.len, k.W};
	UInt ps = k.var("piece_start", k.W), pe = k.var("piece_end", k.W);
	UInt to = k.var("move_to", k.W), x = k.var("addr", k.W);
	auto lpi = [&](const UInt &vm_start, const UInt &vm_pgoff, const UInt &a) {
		return ((a - vm_start) >> k.s) + vm_pgoff;
	};
	for (const UInt &e : {start, len, ps, pe, to})
		s.add(k.page_aligned(e));
	s.add(start.v + len.v <= k.two_to_W());
	s.add(start.v <= ps.v && ps.v < pe.v && pe.v <= start.v + len.v);
	s.add(to.v + (pe - ps).v <= k.two_to_W());
	s.add(ule(ps, x) && ult(x, pe));
	// __split_vma: new->vm_pgoff += (addr - vma->vm_start) >> PAGE_SHIFT
	UInt piece_pgoff = pgoff + ((ps - start) >> k.s);
	UInt moved = x - ps + to;  // move_vma: copy_vma keeps vm_pgoff
	UInt orig = lpi(start, pgoff, x);
	s.add(lpi(ps, piece_pgoff, x) != orig || lpi(to, piece_pgoff, moved) != orig);
}

// Obligation 6: do_fault_around's window (mm/memory.c, the port's
// do_fault_around) handed to v3's array_map_mmap_pages.
// whole: the window's pages also have their kernel offset in the visible
// data (the exact re-solve); otherwise only the window part (main.cpp
// check_row adds obligation 1 for the rest).
expr fault_around_bad(const K &k, const Mmap &m, const UInt &i, const UInt &j, bool whole,
		      expr *window_page, expr *window_koff)
{
	UInt vm_start = k.var("vm_start", k.W);
	UInt npages = m.len >> k.s;  // vma_pages(vma)
	UInt addr = vm_start + (i << k.s);
	UInt vmf_pgoff = m.pgoff + i;
	uint64_t nr = k.fault_around_pages(), ptrs = k.ptrs_per_pte();
	UInt pte_off = low_bits(addr >> k.s, log2_exact(ptrs));  // pte_index(address)
	// vmf->pgoff - vma->vm_pgoff = (vm_pgoff + i) - vm_pgoff, which is i
	// in pgoff_t arithmetic (i < 2^W): written as i, the window part does
	// not depend on vm_pgoff at all
	UInt vma_off = i;
	UInt from = umax(clear_low_bits(pte_off, log2_exact(nr)), pte_off - umin(pte_off, vma_off));
	UInt to = umin(umin(from + nr, k.ul(ptrs)), pte_off + npages - vma_off) - 1;
	// map_pages(vmf, vmf->pgoff + from_pte - pte_off, vmf->pgoff + to_pte - pte_off):
	// window slot j has pgoff vmf->pgoff + j - pte_off, VMA page i + j - pte_off
	UInt p = vmf_pgoff + j - pte_off;
	expr page = i.v + j.v - pte_off.v;  // exact, may be negative
	UInt wpage = i + j - pte_off;
	*window_page = wpage.v;
	*window_koff = m.koff(Patch::v3, wpage).v;
	UInt koff = k.trunc((k.to64(p) + k.hdr()) << k.s);  // array_map_mmap_pages_v3
	expr table_ok = ule(from, pte_off) && ule(pte_off, to) && ult(to, k.ul(ptrs));
	/* p == vm_pgoff + wpage (mod 2^W) by construction: a slot inside the
	 * VMA has the kernel offset of that VMA page */
	expr slot_ok = page >= 0 && page < npages.v && (whole ? m.in_visible(koff) : k.c.bool_val(true));
	return (k.page_aligned(vm_start) && vm_start.v + m.len.v <= k.two_to_W()) &&
	       (!table_ok || (ule(from, j) && ule(j, to) && !slot_ok));
}

}  // namespace

std::string Setup::key() const
{
	return std::to_string(obligation) + " " + (level ? fl::to_string(*level) : "any") + " " +
	       std::to_string(bits) + " " + (shift == 12 ? "4k" : "64k") + " " + to_string(assume);
}

std::string Setup::file() const
{
	return "o" + std::to_string(obligation) + "-" + (level ? fl::to_string(*level) : "any") +
	       "-arch" + std::to_string(bits) + "-" + (shift == 12 ? "4k" : "64k") + "-" +
	       (assume == Assume::none ? "any" : to_string(assume)) + ".smt2";
}

std::vector<Setup> all_setups()
{
	std::vector<Setup> out;
	for (int ob = 1; ob <= 6; ob++) {
		std::vector<std::optional<Patch>> levels;
		if (ob == 5)
			levels = {std::nullopt};
		else if (ob == 6)
			levels = {Patch::v3};
		else if (ob == 3)
			levels = {Patch::v1, Patch::v2, Patch::v3};  /* each lazy level against pre */
		else
			levels = {Patch::pre, Patch::v1, Patch::v2, Patch::v3};
		for (auto level : levels)
			for (unsigned bits : {32u, 64u})
				for (unsigned shift : {12u, 16u}) {
					if (ob == 5) {
						out.push_back({ob, level, bits, shift, Assume::none});
						continue;
					}
					for (Assume a : {Assume::anon, Assume::regular, Assume::direct})
						out.push_back({ob, level, bits, shift, a});
				}
	}
	return out;
}

std::string tactic_smt2()
{
	std::string out = "(check-sat-using (then";
	for (const char *t : kTactic)
		out += std::string(" ") + t;
	return out + "))";
}

z3::solver make_solver(z3::context &c)
{
	z3::tactic t(c, kTactic[0]);
	for (size_t i = 1; i < kTactic.size(); i++)
		t = t & z3::tactic(c, kTactic[i]);
	return t.mk_solver();
}

Query build_query(z3::context &c, const Setup &st, bool exact)
{
	std::vector<expr> ranges;
	K k{c, st.bits, st.shift, ranges};
	UInt vs = k.var("value_size", 32), me = k.var("max_entries", 32);
	UInt pgoff = k.var("vm_pgoff", k.W), len = k.var("len", k.W), page = k.var("page", k.W);
	Vars v{vs.v, me.v, c.bool_const("bypass_spec_v1"), pgoff.v, len.v, page.v, c.int_val(0), c.int_val(0)};
	Query q{st, make_solver(c), v, {}, {}, {}};
	z3::solver &s = q.solver;

	if (st.obligation == 5) {
		invariance(k, s, q.v);
	} else {
		Geometry g = exact ? exact_geometry(k, v) : abstract_geometry(k);
		Mmap m{k, g, pgoff, len};
		Patch level = *st.level;
		UInt npages = len >> k.s;
		expr in_vma = ult(page, npages);
		UInt koff = m.koff(level, page);
		q.v.koff = koff.v;
		s.add(g.ok);
		s.add(len.v != 0 && k.page_aligned(len));
		s.add(assumption(st.assume, c, k.s, pgoff, len));

		switch (st.obligation) {
		case 1:  /* soundness: accepted -> every page inside the visible data */
			s.add(m.accepted(level) && in_vma && !m.in_visible(koff));
			break;
		case 2:  /* completeness: every VMA inside the visible data is accepted */
			s.add((pgoff.v + npages.v) * c.int_val(k.page_size()) <= g.visible.v && !m.accepted(level));
			break;
		case 3: {  /* eager == lazy: same accepted set, same kernel page */
			expr pre = m.accepted(Patch::pre), lazy = m.accepted(level);
			s.add(pre != lazy || (pre && lazy && in_vma && m.koff(Patch::pre, page) != koff));
			break;
		}
		case 4:  /* the fault offset stays inside the (rounded) allocation */
			s.add(m.accepted(level) && in_vma && !m.in_allocation(koff));
			break;
		case 6: {  /* v3 fault-around window */
			UInt j = k.var("window_slot", k.W);
			/* the window part needs no accepted VMA: any VMA page i */
			s.add((exact ? m.accepted(level) : c.bool_val(true)) && in_vma);
			s.add(fault_around_bad(k, m, page, j, exact, &q.v.window, &q.v.koff));
			break;
		}
		}
		// replayable: a small map and a short VMA; preferred: the bad page is
		// the bpf_array header page (offset 0), which the port flags at once
		q.small = {vs.v <= 4096, me.v <= 4096, len.v <= c.int_val((uint64_t)16 << k.s)};
		q.small8 = {vs.v == 8, q.v.bypass};  /* linear: product = 8 * max_entries = alloc */
		if (st.obligation != 2)
			q.prefer = {q.v.koff == 0};
	}
	for (const expr &r : ranges)
		s.add(r);
	return q;
}

}  // namespace fl::smt
