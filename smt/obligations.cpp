// SPDX-License-Identifier: GPL-2.0-only
// Obligations 1-7 over what the port computes (kmodel.h). Each row explores
// the port's own code paths (smt/port/explore.h) and states the obligation's
// negation as a disjunction over them:
//  1 soundness: a PTE the port installs for an accepted VMA maps a page of
//    the map's visible data (pre: remap_vmalloc_range's; lazy: the fault's)
//  2 completeness: every VMA inside the visible data that reaches
//    f_op->mmap is accepted
//  3 eager == lazy: pre and the lazy level accept the same VMAs, and the
//    fault maps the page pre's remap mapped at that address
//  4 the page installed is one of the map's area (the allocation)
//  5 __split_vma and vm_area_dup (fork) keep linear_page_index
//  6 v3's ->map_pages window, over any earlier PTEs: every PTE it installs
//    is inside the VMA, in the faulting address's PTE table, on visible data
//  7 the geometry facts hold for every map array_map_alloc creates
#include <cstdio>
#include <optional>

#include "smt/kmodel.h"

namespace fl::smt::port {
const World &world32();
const World &world64();
const World &world(unsigned bits) { return bits == 32 ? world32() : world64(); }
}  // namespace fl::smt::port

namespace fl::smt {

using sym::Event;
using sym::Path;
using z3::expr;

std::string Setup::key() const
{
	std::string page = shift == 12 ? "4k" : "64k";
	if (obligation == 7)
		return "7 any " + std::to_string(bits) + " " + page + " " + (bypass ? "bypass" : "mask");
	return std::to_string(obligation) + " " + (level ? fl::to_string(*level) : "any") + " " + std::to_string(bits) +
	       " " + page + " " + to_string(assume);
}

std::string Setup::file() const
{
	std::string tail = obligation == 7 ? (bypass ? "bypass" : "mask")
					   : assume == Assume::none ? "any" : to_string(assume);
	return "o" + std::to_string(obligation) + "-" + (level ? fl::to_string(*level) : "any") + "-arch" +
	       std::to_string(bits) + "-" + (shift == 12 ? "4k" : "64k") + "-" + tail + ".smt2";
}

std::vector<Setup> all_setups()
{
	std::vector<Setup> out;
	for (int ob = 1; ob <= 7; ob++) {
		std::vector<std::optional<Patch>> levels;
		if (ob == 5 || ob == 7)
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
					if (ob == 7) {
						for (bool bypass : {true, false})
							out.push_back({ob, level, bits, shift, Assume::none, bypass});
						continue;
					}
					for (Assume a : {Assume::anon, Assume::regular, Assume::direct})
						out.push_back({ob, level, bits, shift, a});
				}
	}
	return out;
}

z3::expr Query::formula() const
{
	return session->purify(*assumptions && *negated);
}

// Every map map_create leaves (obligation 7 proves it of array_map_alloc):
// its area, guard page included, page aligned inside the vmalloc space;
// array_map_vmalloc_addr(array) is the area; the visible data after the
// header page(s) inside the area without its guard page; elem_size a
// multiple of 8 up to 2^31.
expr geometry_facts(z3::context &c, const port::Kernel &k, const port::Geometry &g)
{
	expr ps = c.int_val((uint64_t)1 << k.shift);
	return g.addr >= fl::sym::int_of(g.vmalloc_start) && g.addr + g.size <= fl::sym::int_of(g.vmalloc_end) &&
	       z3::mod(g.addr, ps) == 0 && z3::mod(g.size, ps) == 0 && g.size >= 2 * ps &&
	       g.vmalloc_addr == g.addr && c.int_val(g.hdr_bytes) + g.visible <= g.size - ps &&
	       z3::mod(g.elem_size, 8) == 0 && g.elem_size >= 8 && g.elem_size <= c.int_val((uint64_t)1 << 31);
}

namespace {

port::Kernel kernel_of(const Setup &st, Patch level)
{
	Door door = st.assume == Assume::anon ? Door::anon : st.assume == Assume::regular ? Door::regular : Door::direct;
	return {level, st.bits, st.shift, door, st.bypass};
}

struct Run {
	std::vector<Path> paths;
	std::vector<std::optional<port::Mapped>> out;
};

Run explore_mmap(Query &q, const char *name, const port::Kernel &k)
{
	sym::Explorer e(name);
	auto r = e.explore<port::Mapped>([&]() { return port::world(k.bits).mmap_fault(k, *q.in); });
	return {std::move(r.paths), std::move(r.out)};
}

// a path that did not finish: the row cannot be proved from the others
void note_cut(Query &q, const Path &p)
{
	if (p.status != Path::bug && p.status != Path::cut)
		return;
	if (!q.cut++)
		q.cut_why = p.why;
}

// the page of an install is visible data: the map's area, after the header
expr visible_page(z3::context &c, const port::Geometry &g, unsigned shift, const Event &e)
{
	if (e.area != port::kMapAreaId)
		return c.bool_val(false);
	expr off = e.b * c.int_val((uint64_t)1 << shift);
	return off >= c.int_val(g.hdr_bytes) && off < c.int_val(g.hdr_bytes) + g.visible;
}

expr mapped_area_page(z3::context &c, const Event &e) { return c.bool_val(e.area == port::kMapAreaId); }

// the user fault a path took, if it got that far
std::optional<expr> fault_of(const Path &p)
{
	for (const Event &e : p.events)
		if (e.kind == Event::fault)
			return e.a;
	return std::nullopt;
}

// obligations 1 and 4: a bad PTE; pre's installs happen inside f_op->mmap,
// a lazy level's in the fault (the one at the faulting address). A path cut
// later (a loop it could not accelerate) counts with the PTEs it installed
// before: enough for a counterexample, which the replay then confirms.
expr bad_install(Query &q, const Run &r, bool lazy, const std::function<expr(const Event &)> &bad)
{
	z3::context &c = q.session->c;
	expr any = c.bool_val(false);
	for (size_t i = 0; i < r.paths.size(); i++) {
		const Path &p = r.paths[i];
		note_cut(q, p);
		std::optional<expr> fault = fault_of(p);
		if (lazy && !fault)
			continue;
		expr some = c.bool_val(false);
		for (const Event &e : p.events)
			if (e.kind == Event::install) {
				some = some || (lazy ? e.a == *fault && bad(e) : bad(e));
				std::string n = "path" + std::to_string(i) + " install area " + std::to_string(e.area);
				q.debug.push_back({n + " cond", p.cond});
				q.debug.push_back({n + " uaddr", e.a});
				q.debug.push_back({n + " index", e.b});
				q.debug.push_back({n + " bad", bad(e)});
			}
		any = any || (p.cond && some);
	}
	return any;
}

// what f_op->mmap said: the VMA it got was accepted (ret 0) or refused
expr mmap_said(const Run &r, bool accepted, const std::function<expr(const Event &)> &about = nullptr)
{
	z3::context &c = r.paths.empty() ? fl::sym::ctx() : r.paths[0].cond.ctx();
	expr any = c.bool_val(false);
	for (const Path &p : r.paths)
		for (const Event &e : p.events)
			if (e.kind == Event::mmap && (e.ret == 0) == accepted)
				any = any || (p.cond && (about ? about(e) : c.bool_val(true)));
	return any;
}

expr negated_property(Query &q, const port::Geometry &g)
{
	const Setup &st = q.setup;
	z3::context &c = q.session->c;
	Patch level = *st.level;
	Run r = explore_mmap(q, "l", kernel_of(st, level));
	q.paths += (unsigned)r.paths.size();
	q.debug.push_back({"visible", g.visible});
	q.debug.push_back({"area size", g.size});
	bool lazy = level != Patch::pre;
	auto not_visible = [&](const Event &e) { return !visible_page(c, g, st.shift, e); };
	switch (st.obligation) {
	case 1:
		return bad_install(q, r, lazy, not_visible);
	case 4:
		return bad_install(q, r, lazy, [&](const Event &e) { return !mapped_area_page(c, e); });
	case 2: {  /* refused although inside the visible data */
		for (const Path &p : r.paths)
			note_cut(q, p);
		expr ps = c.int_val((uint64_t)1 << st.shift);
		return mmap_said(r, false, [&](const Event &e) { return e.a * ps + (e.c - e.b) <= g.visible; });
	}
	case 3: {
		Run pre = explore_mmap(q, "p", kernel_of(st, Patch::pre));
		q.paths += (unsigned)pre.paths.size();
		for (const Path &p : r.paths)
			note_cut(q, p);
		for (const Path &p : pre.paths)
			note_cut(q, p);
		expr differ = (mmap_said(pre, true) && mmap_said(r, false)) || (mmap_said(pre, false) && mmap_said(r, true));
		// the page pre's remap put at the faulting address, and the fault's
		for (size_t i = 0; i < r.paths.size(); i++) {
			if (!r.out[i] || !r.out[i]->faulted)
				continue;
			const Path &p = r.paths[i];
			const expr &at = r.out[i]->fault;
			for (const Path &pp : pre.paths)
				for (const Event &pe : pp.events) {
					if (pe.kind != Event::install)
						continue;
					expr other = c.bool_val(true);  /* the fault installed nothing there */
					for (const Event &e : p.events)
						if (e.kind == Event::install)
							other = other && (e.a != at || e.area != pe.area || e.b != pe.b);
					differ = differ || (p.cond && pp.cond && pe.a == at && other);
				}
		}
		return differ;
	}
	case 6: {  /* every PTE of the window, the faulting address's included */
		expr any = c.bool_val(false);
		expr ps = c.int_val((uint64_t)1 << st.shift);
		expr table = ps * c.int_val((uint64_t)(1u << st.shift) / (st.bits / 8));  /* PTRS_PER_PTE pages */
		for (size_t i = 0; i < r.paths.size(); i++) {
			const Path &p = r.paths[i];
			note_cut(q, p);
			if (!r.out[i] || !r.out[i]->faulted)
				continue;
			const port::Mapped &m = *r.out[i];
			expr some = c.bool_val(false);
			for (const Event &e : p.events)
				if (e.kind == Event::install)
					some = some || e.a < m.vm_start || e.a >= m.vm_end || e.a / table != m.fault / table ||
					       !visible_page(c, g, st.shift, e);
			any = any || (p.cond && some);
		}
		return any;
	}
	}
	return c.bool_val(false);
}

// obligation 5: __split_vma (either piece first) and vm_area_dup of the
// piece keep linear_page_index of an address in it
expr split_negated(Query &q)
{
	const Setup &st = q.setup;
	fl::sym::Session &s = *q.session;
	z3::context &c = s.c;
	uint64_t ps = (uint64_t)1 << st.shift;
	auto aligned = [&](const char *name) {
		expr v = c.int_const(name);
		s.domain.push_back(v >= 0 && v <= fl::sym::int_of((fl::sym::pow2(st.bits) - 1) / ps));
		return v * c.int_val(ps);
	};
	expr start = aligned("vm_start"), len = aligned("len"), at = aligned("split_at");
	expr pgoff = s.var("vm_pgoff", st.bits), addr = s.var("addr", st.bits);
	// a VMA ends below 2^BITS (TASK_SIZE): its vm_end does not wrap to 0
	s.domain.push_back(len > 0 && start + len < fl::sym::int_of(fl::sym::pow2(st.bits)) && start < at &&
			   at < start + len && start <= addr && addr < start + len);
	port::Kernel k = kernel_of(st, Patch::pre);
	expr any = c.bool_val(false);
	for (int below : {0, 1}) {
		sym::Explorer e(below ? "b" : "a");
		auto r = e.explore<port::Split>(
			[&]() { return port::world(st.bits).split(k, start, len, pgoff, at, addr, below); });
		q.paths += (unsigned)r.paths.size();
		for (size_t i = 0; i < r.paths.size(); i++) {
			note_cut(q, r.paths[i]);
			if (r.out[i])
				any = any || (r.paths[i].cond &&
					      (r.out[i]->after_split != r.out[i]->index || r.out[i]->after_dup != r.out[i]->index));
		}
	}
	return any;
}

// obligation 7: a map array_map_alloc creates (exact products) breaks a fact
expr geometry_negated(Query &q)
{
	const Setup &st = q.setup;
	fl::sym::Session &s = *q.session;
	z3::context &c = s.c;
	expr vs = s.var("value_size", 32), me = s.var("max_entries", 32);
	port::Kernel k{Patch::pre, st.bits, st.shift, Door::anon, st.bypass};
	sym::Explorer e("g");
	auto r = e.explore<port::Allocated>([&]() { return port::world(st.bits).alloc(k, vs, me); });
	q.paths += (unsigned)r.paths.size();
	expr any = c.bool_val(false);
	for (size_t i = 0; i < r.paths.size(); i++) {
		note_cut(q, r.paths[i]);
		if (r.out[i] && r.out[i]->ok) {
			const port::Geometry &g = r.out[i]->g;
			any = any || (r.paths[i].cond && !geometry_facts(c, k, g));
			for (auto [n, e] : {std::pair{"addr", g.addr}, {"size", g.size}, {"vaddr", g.vmalloc_addr}, {"visible", g.visible}, {"es", g.elem_size}})
				q.debug.push_back({"path" + std::to_string(i) + " " + n, e});
			q.debug.push_back({"path" + std::to_string(i) + " cond", r.paths[i].cond});
		}
	}
	return any;
}

}  // namespace

Query build_query(const Setup &st)
{
	Query q;
	q.setup = st;
	q.session = std::make_unique<fl::sym::Session>();
	fl::sym::Session::Scope scope(*q.session);
	fl::sym::Session &s = *q.session;
	z3::context &c = s.c;
	if (st.obligation == 5) {
		q.negated = split_negated(q);
		q.assumptions = s.domain_formula();
		return q;
	}
	if (st.obligation == 7) {
		q.negated = geometry_negated(q);
		q.assumptions = s.domain_formula();
		return q;
	}
	port::Kernel k = kernel_of(st, *st.level);
	q.in = port::Inputs::make(s, k);
	const port::Inputs &in = *q.in;
	port::Geometry g = port::world(st.bits).geometry(k, in);
	// the map and a neighbouring area as vmalloc leaves them, and the door's ABI:
	// in the domain, so every exploration's branches see them
	s.domain.push_back(geometry_facts(c, k, g));
	s.domain.push_back(in.nbase.e + in.nsize.e <= in.base.e || in.base.e + in.size.e <= in.nbase.e);
	s.domain.push_back(in.nbase.e + in.nsize.e <= fl::sym::int_of(g.vmalloc_end));
	if (st.assume != Assume::direct)
		s.domain.push_back(reachable_pgoff(c, st.bits, st.shift, in.vm_pgoff.e));
	q.negated = negated_property(q, g);
	q.assumptions = s.domain_formula();
	return q;
}

}  // namespace fl::smt
