// SPDX-License-Identifier: GPL-2.0-only
// Obligations 1-6 of issue 5 as Z3 queries over what the port computes
// (issue 16): array_map_mmap's decision, the page each VMA page maps (the
// fault handler's or remap's vmalloc_to_page), do_mmap's offset checks,
// __split_vma and do_fault_around come from the port's own text compiled
// over symbolic integers (smt/port). What is written here is only the
// properties: the visible data, the allocation, "same page", and the facts
// every map's geometry has (geometry_facts, proved by geometry.cpp from
// array_map_alloc's arithmetic). Properties compare unreduced integers, so
// no wrap can hide inside a property.
//
// Map geometry: the properties depend on the map through
// (u64)max_entries * elem_size (`product`, where array_map_mmap multiplies
// the two) and its vmalloc area's size. The table's queries leave both
// free, bound only by geometry_facts: an over-approximation, so unsat still
// proves the property for every real map. A sat model is re-solved with
// the exact geometry (array_map_alloc run on symbolic attributes, exact
// product) and a small map before it is replayed, so no counterexample
// rests on the abstraction.
#include "smt/kmodel.h"
#include "smt/port/port.h"

namespace fl::smt {

using z3::expr;

// include/bpf.h BPF_ARRAY_VALUE_OFFSET: offsetof(struct bpf_array, value),
// sizeof(*array) for the PAGE_ALIGN; hdr_pgoff = PAGE_ALIGN(0x110) >> PAGE_SHIFT = 1
// for every page size >= 4K.
constexpr uint64_t kValueOffset = 0x110;

uint64_t hdr_bytes(unsigned shift)
{
	uint64_t ps = 1ull << shift;
	return (kValueOffset + ps - 1) & ~(ps - 1);
}

// x rounded up to a page, exactly (no wrap)
static expr align_up(const expr &x, unsigned shift)
{
	expr ps = x.ctx().int_val((uint64_t)1 << shift);
	return x + (ps - 1) - z3::mod(x + (ps - 1), ps);
}

expr visible_bytes(const expr &product, unsigned shift) { return align_up(product, shift); }

expr geometry_facts(z3::context &c, unsigned bits, unsigned shift, const expr &product, const expr &array_size)
{
	expr ps = c.int_val((uint64_t)1 << shift);
	return z3::mod(array_size, ps) == 0 && c.int_val(hdr_bytes(shift)) + align_up(product, shift) <= array_size &&
	       array_size + ps <= c.int_val(port::vmalloc_end(bits) - port::vmalloc_base(bits));
}

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

Query build_query(z3::context &c, const Setup &st, bool exact, bool bypass)
{
	std::vector<expr> ranges;
	auto var = [&](const char *name, unsigned bits) { return uvar(c, name, bits, ranges); };
	unsigned W = st.bits, s = st.shift;
	expr W2 = two_to(c, W), ps = c.int_val((uint64_t)1 << s);
	auto aligned = [&](const expr &e) { return z3::mod(e, ps) == 0; };
	UInt vs = var("value_size", 32), me = var("max_entries", 32);
	UInt pgoff = var("vm_pgoff", W), len = var("len", W), page = var("page", W);
	UInt vm_start = var("vm_start", W);
	Vars v{vs.v, me.v, c.bool_val(bypass), pgoff.v, len.v, page.v, c.int_val(0), c.int_val(0)};
	Query q{st, make_solver(c), v, {}, {}, {}};
	z3::solver &so = q.solver;
	port::Kernel k;
	k.bits = W;
	k.shift = s;
	k.bypass_spec_v1 = bypass;
	port::Vma vma{vm_start.v, pgoff.v, len.v};
	// a VMA: page aligned, non-empty, inside the address space; `facts`
	// (these, the geometry and the variables' ranges) hold on every path
	expr vma_ok = aligned(vm_start.v) && aligned(len.v) && len.v != 0 && vm_start.v + len.v <= W2;
	std::vector<expr> facts;

	if (st.obligation == 5) {
		/* one split at addr, then the piece holding x moved to move_to */
		UInt addr = var("split_at", W), x = var("addr", W), to = var("move_to", W);
		facts = ranges;
		facts.push_back(vma_ok);
		facts.push_back(aligned(addr.v) && aligned(to.v) && vm_start.v < addr.v &&
				addr.v < vm_start.v + len.v && vm_start.v <= x.v && x.v < vm_start.v + len.v &&
				to.v + len.v <= W2);
		for (const expr &f : facts)
			so.add(f);
		so.add(port::split_breaks_index(c, k, vma, addr.v, x.v, to.v, facts));
		for (const expr &r : ranges)
			so.add(r);
		return q;
	}

	Patch level = *st.level;
	k.level = level;
	port::Map m{me.v, c.int_val(0), c.int_val(0), std::nullopt};
	expr product = c.int_val(0), ok = c.bool_val(true);
	if (!exact) {
		UInt es = var("elem_size", 32), prod = var("product", 64), size = var("array_size", 64);
		m = {me.v, es.v, size.v, prod.v};
		product = prod.v;
		ok = geometry_facts(c, W, s, prod.v, size.v);
	} else {
		port::Alloc a = port::map_alloc(c, k, vs.v, me.v);
		m = {a.max_entries, a.elem_size, a.array_size, std::nullopt};
		product = a.max_entries * a.elem_size;
		ok = a.ok;
	}
	facts = ranges;
	facts.push_back(vma_ok);
	facts.push_back(ok);
	expr npages = len.v / ps;
	expr in_vma = page.v < npages;
	expr lo = c.int_val(hdr_bytes(s)), visible = visible_bytes(product, s);
	auto in_visible = [&](const port::Page &p) {
		return p.in_area && p.index * ps >= lo && p.index * ps < lo + visible;
	};
	auto koff = [&](const port::Page &p) { return z3::ite(p.in_area, p.index * ps, W2 - 1); };
	auto accepted = [&](Patch l) {
		port::Kernel kl = k;
		kl.level = l;
		return port::mmap_accepted(c, kl, m, vma, facts);
	};
	auto page_at = [&](Patch l, const expr &i) {
		port::Kernel kl = k;
		kl.level = l;
		return port::page_of(c, kl, m, vma, i, facts);
	};
	for (const expr &f : facts)
		so.add(f);
	so.add(assumption(st.assume, c, s, pgoff, len));

	switch (st.obligation) {
	case 1: {  /* soundness: accepted -> every page inside the visible data */
		port::Page p = page_at(level, page.v);
		q.v.koff = koff(p);
		so.add(accepted(level) && in_vma && !in_visible(p));
		break;
	}
	case 2:  /* completeness: every VMA inside the visible data is accepted */
		so.add((pgoff.v + npages) * ps <= visible && !accepted(level));
		break;
	case 3: {  /* eager == lazy: same accepted set, same kernel page */
		expr pre = accepted(Patch::pre), lazy = accepted(level);
		port::Page pp = page_at(Patch::pre, page.v), pl = page_at(level, page.v);
		q.v.koff = koff(pl);
		expr differ = pp.in_area != pl.in_area || (pp.in_area && pp.index != pl.index);
		so.add(pre != lazy || (pre && lazy && in_vma && differ));
		break;
	}
	case 4: {  /* the fault offset stays inside the allocation */
		port::Page p = page_at(level, page.v);
		q.v.koff = koff(p);
		so.add(accepted(level) && in_vma && !p.in_area);
		break;
	}
	case 6: {  /* v3 fault-around window */
		UInt j = var("window_slot", W);
		so.add(j.v >= 0 && j.v < W2);
		/* the window part needs no accepted VMA: any VMA page i */
		so.add((exact ? accepted(level) : c.bool_val(true)) && in_vma);
		so.add(port::window_bad(c, k, m, vma, page.v, j.v, facts));
		q.v.window = j.v;
		q.v.koff = koff(page_at(level, page.v));
		break;
	}
	}
	// replayable: a small map and a short VMA; preferred: the bad page is
	// the bpf_array header page (offset 0), which the port flags at once
	q.small = {vs.v <= 4096, me.v <= 4096, len.v <= c.int_val((uint64_t)16 << s)};
	q.small8 = {vs.v == 8};
	if (st.obligation != 2)
		q.prefer = {q.v.koff == 0};
	for (const expr &r : ranges)
		so.add(r);
	return q;
}

}  // namespace fl::smt
