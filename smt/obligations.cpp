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
#include <map>
#include <memory>
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

const z3::expr *Query::part(size_t i)
{
	while (parts.size() <= i && !exhausted) {
		fl::sym::Session::Scope scope(*session);
		if (std::optional<z3::expr> p = next_part(*this))
			parts.push_back(std::move(*p));
		else
			exhausted = true;
	}
	return i < parts.size() ? &parts[i] : nullptr;
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

Door door_of(Assume a) { return a == Assume::anon ? Door::anon : a == Assume::regular ? Door::regular : Door::direct; }

// a path that did not finish: the row cannot be proved from the others
void note_path(Query &q, const Path &p)
{
	q.paths++;
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

// the user fault a path took, if it got that far
std::optional<expr> fault_of(const Path &p)
{
	for (const Event &e : p.events)
		if (e.kind == Event::fault)
			return e.a;
	return std::nullopt;
}

// what f_op->mmap said on a path: the VMA it got accepted (ret 0) or
// refused, and `about` that VMA
expr mmap_said(const Path &p, bool accepted, const std::function<expr(const Event &)> &about = nullptr)
{
	z3::context &c = p.cond.ctx();
	expr any = c.bool_val(false);
	for (const Event &e : p.events)
		if (e.kind == Event::mmap && (e.ret == 0) == accepted)
			any = any || (about ? about(e) : c.bool_val(true));
	return any;
}

}  // namespace

// The explorations of one setting (kmodel.h), in one Session (the order
// explorations run in one Z3 context steers its heuristics: for
// obligation 3 the level's own paths first, then pre's): each level's
// mmap_fault, and mmap alone (obligation 2 asks only what f_op->mmap said),
// each path kept once explored, for every row that asks.
struct Scenario {
	unsigned bits, shift;
	Assume assume;
	std::shared_ptr<fl::sym::Session> session = std::make_shared<fl::sym::Session>();
	std::optional<port::Inputs> in;  // the map's inputs and geometry
	std::optional<port::Geometry> g;

	struct Stream {
		Stream(const port::Kernel &k, const std::string &name) : k(k), e(name) {}
		port::Kernel k;
		sym::Explorer e;
		std::vector<Path> paths;
		std::vector<std::optional<port::Mapped>> out;  // done paths: what mmap_fault returned
		std::optional<port::Mapped> last;
	};
	std::map<std::pair<Patch, bool>, std::unique_ptr<Stream>> streams;

	port::Kernel kernel(Patch level, bool fault) const
	{
		return {level, bits, shift, door_of(assume), true, fault};
	}

	// `which`'s exploration
	Stream &stream(Patch which, bool fault)
	{
		std::unique_ptr<Stream> &s = streams[{which, fault}];
		if (!s) {
			/* the explorer's name prefixes its loop variables: one per stream */
			s = std::make_unique<Stream>(kernel(which, fault), std::string(to_string(which)) + (fault ? "" : "m"));
			s->e.start([this, raw = s.get()]() { raw->last.emplace(port::world(bits).mmap_fault(raw->k, *in)); });
		}
		return *s;
	}

	// path i of the stream, explored if it is not yet; false past the last
	bool have(Stream &s, size_t i)
	{
		fl::sym::Session::Scope scope(*session);
		while (s.paths.size() <= i) {
			std::optional<Path> p = s.e.next();
			if (!p)
				return false;
			s.paths.push_back(std::move(*p));
			s.out.push_back(std::move(s.last));
			s.last.reset();
		}
		return true;
	}
};

std::shared_ptr<Scenario> make_scenario(const Setup &st)
{
	auto sc = std::make_shared<Scenario>();
	sc->bits = st.bits;
	sc->shift = st.shift;
	sc->assume = st.assume;
	fl::sym::Session &s = *sc->session;
	fl::sym::Session::Scope scope(s);
	z3::context &c = s.c;
	port::Kernel k = sc->kernel(*st.level, true);
	const port::Inputs &in = sc->in.emplace(port::Inputs::make(s, k));
	const port::Geometry &g = sc->g.emplace(port::world(st.bits).geometry(k, in));
	// the map and a neighbouring area as vmalloc leaves them, and the door's ABI:
	// in the domain, so every exploration's branches see them
	s.domain.push_back(geometry_facts(c, k, g));
	s.domain.push_back(in.nbase.e + in.nsize.e <= in.base.e || in.base.e + in.size.e <= in.nbase.e);
	s.domain.push_back(in.nbase.e + in.nsize.e <= fl::sym::int_of(g.vmalloc_end));
	if (st.assume != Assume::direct)
		s.domain.push_back(reachable_pgoff(c, st.bits, st.shift, in.vm_pgoff.e));
	return sc;
}

namespace {

// obligations 1-4 and 6: path by path of the level's stream
void mmap_rows(Query &q)
{
	const Setup &st = q.setup;
	Scenario &sc = *q.scenario;
	z3::context &c = sc.session->c;
	const port::Geometry &g = *sc.g;
	const Patch level = *st.level;
	const bool lazy = level != Patch::pre;
	const expr ps = c.int_val((uint64_t)1 << st.shift);
	Scenario::Stream &s = sc.stream(level, st.obligation != 2);
	auto not_visible = [&sc, &c, shift = st.shift](const Event &e) { return !visible_page(c, *sc.g, shift, e); };

	// obligation 3: pre's paths, whole, in the level's session, after the
	// level's own (the order the paths reach the session in steers Z3:
	// with pre's explored first, v3's window loop at 64 bits went
	// unfinished): after those an earlier row of the level explored (in
	// the table, obligation 1's), or else its first kLevelFirst; the rest
	// stream as the row asks
	expr pre_accepts = c.bool_val(false), pre_refuses = c.bool_val(false);
	Scenario::Stream *pre = nullptr;
	if (st.obligation == 3) {
		constexpr size_t kLevelFirst = 20;
		if (s.paths.empty())
			for (size_t i = 0; i < kLevelFirst && sc.have(s, i); i++)
				;
		pre = &sc.stream(Patch::pre, true);
		for (size_t i = 0; sc.have(*pre, i); i++) {
			const Path &pp = pre->paths[i];
			note_path(q, pp);
			pre_accepts = pre_accepts || (pp.cond && mmap_said(pp, true));
			pre_refuses = pre_refuses || (pp.cond && mmap_said(pp, false));
		}
	}

	auto index = std::make_shared<size_t>(0);
	q.next_part = [&sc, &s, pre, index, g, ps, lazy, not_visible, pre_accepts, pre_refuses](
			      Query &q) -> std::optional<expr> {
		size_t i = (*index)++;
		if (!sc.have(s, i))
			return std::nullopt;
		const Path &p = s.paths[i];
		note_path(q, p);
		const std::optional<port::Mapped> &m = s.out[i];
		z3::context &c = p.cond.ctx();
		expr bad = c.bool_val(false);
		switch (q.setup.obligation) {
		case 1:
		case 4: {  /* a bad PTE: pre's inside f_op->mmap, a lazy level's at the fault */
			// a path cut later (a loop it could not accelerate) counts with
			// the PTEs it installed before: enough for a counterexample, which
			// the replay then confirms
			std::optional<expr> fault = fault_of(p);
			if (lazy && !fault)
				break;
			for (const Event &e : p.events)
				if (e.kind == Event::install) {
					expr wrong = q.setup.obligation == 1 ? not_visible(e) : c.bool_val(e.area != port::kMapAreaId);
					bad = bad || (lazy ? e.a == *fault && wrong : wrong);
				}
			break;
		}
		case 2:  /* refused although inside the visible data */
			bad = mmap_said(p, false, [&](const Event &e) { return e.a * ps + (e.c - e.b) <= g.visible; });
			break;
		case 3: {  /* pre accepts what the level refuses, or the other way, or another page */
			bad = (mmap_said(p, false) && pre_accepts) || (mmap_said(p, true) && pre_refuses);
			if (!m || !m->faulted)
				break;
			const expr &at = m->fault;
			for (const Path &pp : pre->paths)
				for (const Event &pe : pp.events) {
					if (pe.kind != Event::install)
						continue;
					expr other = c.bool_val(true);  /* the fault installed nothing there */
					for (const Event &e : p.events)
						if (e.kind == Event::install)
							other = other && (e.a != at || e.area != pe.area || e.b != pe.b);
					bad = bad || (pp.cond && pe.a == at && other);
				}
			break;
		}
		case 6: {  /* every PTE of the window, the faulting address's included */
			if (!m || !m->faulted)
				break;
			expr table = ps * c.int_val((uint64_t)(1u << q.setup.shift) / (q.setup.bits / 8));  /* PTRS_PER_PTE pages */
			for (const Event &e : p.events)
				if (e.kind == Event::install)
					bad = bad || e.a < m->vm_start || e.a >= m->vm_end || e.a / table != m->fault / table ||
					      not_visible(e);
			break;
		}
		}
		return p.cond && bad;
	};
}

// a level-independent row: every path explored, its disjuncts handed out in order
void all_parts(Query &q, std::vector<expr> parts)
{
	auto left = std::make_shared<std::vector<expr>>(std::move(parts));
	auto index = std::make_shared<size_t>(0);
	q.next_part = [left, index](Query &) -> std::optional<expr> {
		if (*index >= left->size())
			return std::nullopt;
		return (*left)[(*index)++];
	};
}

// obligation 5: __split_vma (either piece first) and vm_area_dup of the
// piece keep linear_page_index of an address in it
void split_rows(Query &q)
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
	port::Kernel k{Patch::pre, st.bits, st.shift, Door::anon};
	std::vector<expr> parts;
	for (int below : {0, 1}) {
		sym::Explorer e(below ? "b" : "a");
		auto r = e.explore<port::Split>(
			[&]() { return port::world(st.bits).split(k, start, len, pgoff, at, addr, below); });
		for (size_t i = 0; i < r.paths.size(); i++) {
			note_path(q, r.paths[i]);
			if (r.out[i])
				parts.push_back(r.paths[i].cond &&
						(r.out[i]->after_split != r.out[i]->index || r.out[i]->after_dup != r.out[i]->index));
		}
	}
	all_parts(q, std::move(parts));
}

// obligation 7: a map array_map_alloc creates (exact products) breaks a fact
void geometry_rows(Query &q)
{
	const Setup &st = q.setup;
	fl::sym::Session &s = *q.session;
	z3::context &c = s.c;
	expr vs = s.var("value_size", 32), me = s.var("max_entries", 32);
	port::Kernel k{Patch::pre, st.bits, st.shift, Door::anon, st.bypass};
	sym::Explorer e("g");
	auto r = e.explore<port::Allocated>([&]() { return port::world(st.bits).alloc(k, vs, me); });
	std::vector<expr> parts;
	for (size_t i = 0; i < r.paths.size(); i++) {
		note_path(q, r.paths[i]);
		if (r.out[i] && r.out[i]->ok)
			parts.push_back(r.paths[i].cond && !geometry_facts(c, k, r.out[i]->g));
	}
	all_parts(q, std::move(parts));
}

}  // namespace

z3::expr Query::assumptions() const
{
	z3::expr all = session->domain_formula();
	for (const z3::expr &a : assumed)
		all = all && a;
	return all;
}

Query build_range_query(const Setup &direct, std::shared_ptr<Scenario> scenario)
{
	Query q = build_query(direct, std::move(scenario));
	q.setup.assume = Assume::range;
	fl::sym::Session::Scope scope(*q.session);
	q.assumed.push_back(reachable_pgoff(q.session->c, direct.bits, direct.shift, q.in->vm_pgoff.e));
	return q;
}

Query build_query(const Setup &st, std::shared_ptr<Scenario> scenario)
{
	Query q;
	q.setup = st;
	if (st.obligation == 5 || st.obligation == 7) {
		q.session = std::make_shared<fl::sym::Session>();
		fl::sym::Session::Scope scope(*q.session);
		if (st.obligation == 5)
			split_rows(q);
		else
			geometry_rows(q);
		return q;
	}
	if (!scenario)
		scenario = make_scenario(st);
	q.scenario = scenario;
	q.session = scenario->session;
	q.in = &*scenario->in;
	fl::sym::Session::Scope scope(*q.session);
	mmap_rows(q);
	return q;
}

}  // namespace fl::smt
