// SPDX-License-Identifier: GPL-2.0-only
// Obligations 1-6 of issue 5 as Z3 queries. Each kernel expression is
// written at the width the C code computes it in, next to the line of the
// port it mirrors (src/kernel/kernel/bpf/arraymap.cpp, mm/vmalloc.cpp,
// mm/memory.cpp); each property compares zero-extended 128-bit values, so a
// wrap in the kernel expression cannot cancel out inside the property.
//
// Map geometry is symbolic: value_size and max_entries (u32), and the
// Spectre-v1 bypass (whether the allocation is rounded up to a power of
// two). The one nonlinear term, (u64)max_entries * elem_size, made the
// proofs take seconds each (timeouts at 5 s), so the table's queries
// replace it by a fresh u64 `map_bytes` bound by its linear consequences
// (an over-approximation: unsat still proves the property for every real
// geometry). A sat model is re-solved with the exact product (and a small
// map) before it is replayed, so no counterexample rests on the abstraction.
#include "smt/kmodel.h"

namespace fl::smt {

using z3::expr;

// include/bpf.h BPF_ARRAY_VALUE_OFFSET: offsetof(struct bpf_array, value),
// sizeof(*array) for the PAGE_ALIGN; hdr_pgoff = PAGE_ALIGN(0x110) >> PAGE_SHIFT = 1
// for every page size >= 4K.
constexpr uint64_t kValueOffset = 0x110;

namespace {

// Widths and constants of one kernel: BITS_PER_LONG and PAGE_SHIFT.
struct K {
	z3::context &c;
	unsigned W, s;

	uint64_t page_size() const { return 1ull << s; }
	uint64_t hdr() const { return ((kValueOffset + page_size() - 1) & ~(page_size() - 1)) >> s; }
	// PTRS_PER_PTE = PAGE_SIZE / sizeof(pte): 8-byte PTEs on 64-bit, 4 on i386
	uint64_t ptrs_per_pte() const { return page_size() / (W / 8); }
	// mm/memory.c fault_around_pages = fault_around_bytes (64K) >> PAGE_SHIFT
	uint64_t fault_around_pages() const { return 65536 >> s; }

	expr ul(uint64_t v) const { return c.bv_val(v, W); }
	expr u64(uint64_t v) const { return c.bv_val(v, 64); }
	expr var(const char *name, unsigned bits) const { return c.bv_const(name, bits); }
	// (u64) of an unsigned long, and u64 -> unsigned long (pointer-width wrap)
	expr to64(const expr &e) const { return W == 64 ? e : z3::zext(e, 64 - W); }
	expr trunc(const expr &e) const { return W == 64 ? e : e.extract(W - 1, 0); }
	// exact value: no wrap possible in 128 bits for anything built here
	static expr wide(const expr &e) { return z3::zext(e, 128 - e.get_sort().bv_size()); }
	expr w(uint64_t v) const { return c.bv_val(v, 128); }
	expr two_to_W() const { return z3::shl(w(1), w(W)); }
	expr page_align64(const expr &x) const
	{
		return (x + u64(page_size() - 1)) & u64(~(page_size() - 1));
	}
	expr page_aligned(const expr &x) const { return (x & ul(page_size() - 1)) == ul(0); }
};

struct Geometry {
	expr ok;          // array_map_alloc_check and array_map_alloc succeed
	expr visible;     // PAGE_ALIGN((u64)map.max_entries * elem_size), u64
	expr array_size;  // PAGE_ALIGN(sizeof) + PAGE_ALIGN((u64)alloc entries * elem_size), u64
};

Geometry geometry(const K &k, const Vars &v, bool exact)
{
	z3::context &c = k.c;
	expr me64 = z3::zext(v.max_entries, 32);
	// array_map_alloc_check: value_size == 0 || max_entries == 0 -> EINVAL;
	// value_size > INT_MAX -> E2BIG
	expr ok = v.value_size != c.bv_val(0, 32) && v.max_entries != c.bv_val(0, 32) &&
		  z3::ule(v.value_size, c.bv_val(0x7fffffff, 32));
	// elem_size = round_up(attr->value_size, 8): u32, no wrap below INT_MAX
	expr elem_size = (v.value_size + c.bv_val(7, 32)) & c.bv_val(~7u, 32);
	expr es64 = z3::zext(elem_size, 32);
	expr product = exact ? me64 * es64 : k.var("map_bytes", 64);  // (u64)max_entries * elem_size
	if (!exact)  /* what max_entries >= 1, 8 <= elem_size <= 2^31, 8 | elem_size imply */
		ok = ok && z3::ule(z3::shl(me64, 3), product) && z3::ule(es64, product) &&
		     z3::ult(product, z3::shl(es64, 32)) && z3::ule(product, z3::shl(me64, 31)) &&
		     (product & k.u64(7)) == k.u64(0);
	// !bypass_spec_v1: max_entries = 1 << fls_long(max_entries - 1), E2BIG
	// if that overflows u32: the allocation holds the smallest power of two
	// >= max_entries entries. Abstractly: product <= alloc < 2 * product.
	ok = ok && (v.bypass || z3::ule(v.max_entries, c.bv_val(1u << 31, 32)));
	expr alloc = product;
	if (exact) {
		expr log2 = k.var("round_log2", 64);
		expr pow2 = z3::shl(k.u64(1), log2);
		ok = ok && z3::implies(!v.bypass, z3::ule(log2, k.u64(31)) && z3::uge(pow2, me64) &&
							  (log2 == k.u64(0) || z3::ult(z3::lshr(pow2, 1), me64)));
		alloc = z3::ite(v.bypass, product, z3::shl(es64, log2));
	} else {
		expr rounded = k.var("alloc_bytes", 64);
		ok = ok && z3::implies(!v.bypass, z3::ule(product, rounded) &&
						      z3::ult(rounded, z3::shl(product, 1)) &&
						      (rounded & k.u64(7)) == k.u64(0));
		alloc = z3::ite(v.bypass, product, rounded);
	}
	expr array_size = k.u64(k.hdr() << k.s) + k.page_align64(alloc);
	// bpf_map_area_mmapable_alloc succeeded: the area and its guard page fit
	// in the address space (the weakest form of "vmalloc found room")
	ok = ok && z3::ule(K::wide(array_size) + k.w(k.page_size()), k.two_to_W());
	return {ok, k.page_align64(product), array_size};
}

// The mmap-time decision of each level, on (vm_pgoff, len) both unsigned long.
struct Mmap {
	const K &k;
	const Geometry &g;
	expr pgoff, len;

	// array_map_mmap, pre and v1: vma->vm_pgoff * PAGE_SIZE + (vm_end - vm_start)
	// in unsigned long, widened to u64 against the u64 PAGE_ALIGN(...)
	expr bound_ulong() const { return z3::ule(k.to64(pgoff * k.ul(k.page_size()) + len), g.visible); }
	// v2/v3: (u64)vma->vm_pgoff * PAGE_SIZE + (vm_end - vm_start) in u64
	expr bound_u64() const
	{
		return z3::ule(k.to64(pgoff) * k.u64(k.page_size()) + k.to64(len), g.visible);
	}
	// remap_vmalloc_range(vma, addr, vm_pgoff + hdr_pgoff) -> _partial:
	// check_shl_overflow(pgoff, PAGE_SHIFT, &off); PAGE_ALIGN(size) is len;
	// check_add_overflow(size, off, &end_index) || end_index > get_vm_area_size
	// (area->size - guard = array_size). All unsigned long.
	expr remap_pgoff() const { return pgoff + k.ul(k.hdr()); }
	expr remap_off() const { return z3::shl(remap_pgoff(), k.ul(k.s)); }
	expr remap_ok() const
	{
		expr shl_ok = z3::lshr(remap_pgoff(), k.ul(k.W - k.s)) == k.ul(0);
		expr add_ok = z3::ult(K::wide(len) + K::wide(remap_off()), k.two_to_W());
		return shl_ok && add_ok && z3::ule(k.to64(len + remap_off()), g.array_size);
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
	expr koff(Patch level, const expr &i) const
	{
		expr vmf_pgoff = pgoff + i;  // linear_page_index, pgoff_t
		switch (level) {
		case Patch::pre:  /* remap loop: kaddr += off, then PAGE_SIZE per page */
			return remap_off() + z3::shl(i, k.ul(k.s));
		case Patch::v1:  /* (vmf->pgoff + pgoff) << PAGE_SHIFT, unsigned long */
			return z3::shl(vmf_pgoff + k.ul(k.hdr()), k.ul(k.s));
		default:  /* (((u64)vmf->pgoff + pgoff) << PAGE_SHIFT), then ulong + u64 */
			return k.trunc(z3::shl(k.to64(vmf_pgoff) + k.u64(k.hdr()), k.u64(k.s)));
		}
	}
	// the map's visible data: [hdr, hdr + visible) bytes from the area base
	expr in_visible(const expr &koff) const
	{
		expr lo = k.w(k.hdr() << k.s);
		return z3::uge(K::wide(koff), lo) && z3::ult(K::wide(koff), lo + K::wide(g.visible));
	}
	expr in_allocation(const expr &koff) const { return z3::ult(K::wide(koff), K::wide(g.array_size)); }
};

// Obligation 5: __split_vma, mremap (same size) and dup_mmap keep
// linear_page_index(vma, addr) = ((addr - vm_start) >> PAGE_SHIFT) + vm_pgoff
// (mm/vma.c, mm/mremap.c, kernel/fork.c; kernel-fault-path.md §4.7-4.8).
// One piece [ps, pe) of the original VMA stands for both halves of a split
// and for what munmap/mremap shrinking leave; it is then moved anywhere.
// fork's vm_area_dup copies vm_start/vm_end/vm_pgoff unchanged: no formula.
void invariance(const K &k, z3::solver &s, Vars &v)
{
	expr start = k.var("vm_start", k.W), pgoff = v.vm_pgoff, len = v.len;
	expr ps = k.var("piece_start", k.W), pe = k.var("piece_end", k.W);
	expr to = k.var("move_to", k.W), x = k.var("addr", k.W);
	auto lpi = [&](const expr &vm_start, const expr &vm_pgoff, const expr &a) {
		return z3::lshr(a - vm_start, k.ul(k.s)) + vm_pgoff;
	};
	for (const expr &e : {start, len, ps, pe, to})
		s.add(k.page_aligned(e));
	s.add(z3::ule(K::wide(start) + K::wide(len), k.two_to_W()));
	s.add(z3::ule(K::wide(start), K::wide(ps)) && z3::ult(K::wide(ps), K::wide(pe)) &&
	      z3::ule(K::wide(pe), K::wide(start) + K::wide(len)));
	s.add(z3::ule(K::wide(to) + K::wide(pe - ps), k.two_to_W()));
	s.add(z3::ule(ps, x) && z3::ult(x, pe));
	// __split_vma: new->vm_pgoff += (addr - vma->vm_start) >> PAGE_SHIFT
	expr piece_pgoff = pgoff + z3::lshr(ps - start, k.ul(k.s));
	expr moved = x - ps + to;  // move_vma: copy_vma keeps vm_pgoff
	expr orig = lpi(start, pgoff, x);
	s.add(lpi(ps, piece_pgoff, x) != orig || lpi(to, piece_pgoff, moved) != orig);
}

// Obligation 6: do_fault_around's window (mm/memory.c, the port's
// do_fault_around) handed to v3's array_map_mmap_pages.
expr fault_around_bad(const K &k, const Mmap &m, const expr &i, const expr &j, expr *window_page,
		      expr *window_koff)
{
	auto umax = [](const expr &a, const expr &b) { return z3::ite(z3::uge(a, b), a, b); };
	auto umin = [](const expr &a, const expr &b) { return z3::ite(z3::ule(a, b), a, b); };
	expr vm_start = k.var("vm_start", k.W);
	expr npages = z3::lshr(m.len, k.ul(k.s));  // vma_pages(vma)
	expr addr = vm_start + z3::shl(i, k.ul(k.s));
	expr vmf_pgoff = m.pgoff + i;
	expr nr = k.ul(k.fault_around_pages()), ptrs = k.ul(k.ptrs_per_pte());
	expr pte_off = z3::lshr(addr, k.ul(k.s)) & (ptrs - 1);  // pte_index(address)
	expr vma_off = vmf_pgoff - m.pgoff;
	expr from = umax(pte_off & ~(nr - 1), pte_off - umin(pte_off, vma_off));
	expr to = umin(umin(from + nr, ptrs), pte_off + npages - vma_off) - 1;
	// map_pages(vmf, vmf->pgoff + from_pte - pte_off, vmf->pgoff + to_pte - pte_off):
	// window slot j has pgoff vmf->pgoff + j - pte_off, VMA page i + j - pte_off
	expr p = vmf_pgoff + j - pte_off;
	expr page = K::wide(i) + K::wide(j) - K::wide(pte_off);  // exact, may be "negative"
	*window_page = i + j - pte_off;
	*window_koff = m.koff(Patch::v3, *window_page);
	expr koff = k.trunc(z3::shl(k.to64(p) + k.u64(k.hdr()), k.u64(k.s)));  // array_map_mmap_pages_v3
	expr table_ok = z3::ule(from, pte_off) && z3::ule(pte_off, to) && z3::ult(to, ptrs);
	expr slot_ok = z3::uge(K::wide(i) + K::wide(j), K::wide(pte_off)) &&
		       z3::ult(page, K::wide(npages)) && m.in_visible(koff);
	return (k.page_aligned(vm_start) && z3::ule(K::wide(vm_start) + K::wide(m.len), k.two_to_W())) &&
	       (!table_ok || (z3::ule(from, j) && z3::ule(j, to) && !slot_ok));
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

Query build_query(z3::context &c, const Setup &st, bool exact)
{
	K k{c, st.bits, st.shift};
	Vars v{k.var("value_size", 32), k.var("max_entries", 32), c.bool_const("bypass_spec_v1"),
	       k.var("vm_pgoff", k.W), k.var("len", k.W), k.var("page", k.W), k.ul(0), k.ul(0)};
	/* simplify + bit-blast + SAT: several times faster than the default
	 * QF_BV solver on these queries */
	z3::tactic t = z3::tactic(c, "simplify") & z3::tactic(c, "solve-eqs") &
		       z3::tactic(c, "bit-blast") & z3::tactic(c, "sat");
	Query q{st, t.mk_solver(), v, {}, {}, {}};
	z3::solver &s = q.solver;

	if (st.obligation == 5) {
		invariance(k, s, q.v);
		return q;
	}

	Geometry g = geometry(k, v, exact);
	Mmap m{k, g, v.vm_pgoff, v.len};
	Patch level = *st.level;
	expr npages = z3::lshr(v.len, k.ul(k.s));
	expr in_vma = z3::ult(v.page, npages);
	s.add(g.ok);
	s.add(v.len != k.ul(0) && k.page_aligned(v.len));
	s.add(assumption(st.assume, c, k.W, k.s, v.vm_pgoff, v.len));
	q.v.koff = m.koff(level, v.page);

	switch (st.obligation) {
	case 1:  /* soundness: accepted -> every page inside the visible data */
		s.add(m.accepted(level) && in_vma && !m.in_visible(q.v.koff));
		break;
	case 2:  /* completeness: every VMA inside the visible data is accepted */
		s.add(z3::ule((K::wide(v.vm_pgoff) + K::wide(npages)) * k.w(k.page_size()),
			      K::wide(g.visible)) &&
		      !m.accepted(level));
		break;
	case 3: {  /* eager == lazy: same accepted set, same kernel page */
		expr pre = m.accepted(Patch::pre), lazy = m.accepted(level);
		s.add(pre != lazy || (pre && lazy && in_vma && m.koff(Patch::pre, v.page) != q.v.koff));
		break;
	}
	case 4:  /* the fault offset stays inside the (rounded) allocation */
		s.add(m.accepted(level) && in_vma && !m.in_allocation(q.v.koff));
		break;
	case 6: {  /* v3 fault-around window */
		expr j = k.var("window_slot", k.W);
		s.add(m.accepted(level) && in_vma);
		s.add(fault_around_bad(k, m, v.page, j, &q.v.window, &q.v.koff));
		break;
	}
	}
	// replayable: a small map and a short VMA; preferred: the bad page is
	// the bpf_array header page (offset 0), which the port flags at once
	q.small = {z3::ule(v.value_size, c.bv_val(4096, 32)), z3::ule(v.max_entries, c.bv_val(4096, 32)),
		   z3::ule(v.len, k.ul(16ull << k.s))};
	q.small8 = {v.value_size == c.bv_val(8, 32)};
	if (st.obligation != 2)
		q.prefer = {q.v.koff == k.ul(0)};
	return q;
}

}  // namespace fl::smt
