// SPDX-License-Identifier: GPL-2.0-only
// The symbolic build of the port (issue 16): the port's headers and the
// functions smt/port/functions.txt lists (port_extract.inc, their text
// unchanged) over Sym integers, a small kernel for them to run in (one
// vmalloc area, the map, one VMA), stubs for what they call and nobody
// proves, and the entries of port.h. Compiled once per unsigned-long width
// (FL_BITS 32/64, namespaces fl::sym32/fl::sym64).
#include "smt/port/sym.h"

#include <map>
#include <memory>
#include <stdexcept>

#include "bpf.h"
#include "smt/port/entries.h"
#include "smt/uint.h"

// BUG_ON traps in the concrete builds; here a path that reaches it is an
// outcome of its own (a feasible one is a crash of the concrete port).
struct BugOn {
	const char *cond;
};
#undef BUG_ON
#define BUG_ON(cond)                         \
	do {                                 \
		if (cond)                    \
			throw BugOn{#cond};  \
	} while (0)

namespace fl::FL_ARCH_NS {

// Not kernel code in the port either (a recognisable image of struct
// bpf_array in the header page, for the machine): nothing to prove.
static void array_map_write_struct_image(bpf_array *) {}
// declared by arraymap.cpp, defined by memory.cpp: a stub below
bool map_pages_install_pte(vm_fault *vmf, ulong addr, page *pg);

}  // namespace fl::FL_ARCH_NS

#include "port_extract.inc"

namespace fl::FL_ARCH_NS {

using ::fl::smt::sym::Explorer;
using ::fl::smt::sym::Sym;
namespace port = ::fl::smt::port;
namespace sym = ::fl::smt::sym;
namespace smt = ::fl::smt;

thread_local kernel_globals *kg;
thread_local const kernel_config *kcfg;
thread_local task_struct *current;

namespace {

// A loop the stubs stop after its second iteration (sym.h: every path ends).
struct LoopCut {};

struct Insert {
	z3::expr uaddr;
	bool in_area;  // a page of the map's area
	z3::expr index;
};

// The kernel one path runs in.
struct World {
	kernel_globals g;
	Stats stats;
	mm_struct mm;
	task_struct task;
	bpf_array array;
	vm_operations_struct vm_ops;
	std::vector<Insert> inserts;  // vm_insert_page / map_pages_install_pte, in order
	std::optional<std::pair<z3::expr, z3::expr>> window;  // map_pages(start, end)
	vm_area_struct *linked = nullptr;  // vma_link's VMA (__split_vma's new piece)
	int lookups = 0;                   // pte_lookup calls

	explicit World(const port::Kernel &k)
	{
		g.cfg = kernel_config{k.shift, k.bypass_spec_v1, k.door, k.level};
		g.stats = &stats;
		g.vmalloc_start = port::vmalloc_base(BITS_PER_LONG);
		g.vmalloc_end = port::vmalloc_end(BITS_PER_LONG);
		g.page_offset = g.direct_map_end = 0;  /* no lowmem: only the map's area has pages */
		kg = &g;
		kcfg = &g.cfg;
		g.totalram_pages = (u64)((1ull << 30) >> k.shift);
		task.mm = &mm;
		current = &task;
		self = this;
	}
	~World()
	{
		kg = nullptr;
		kcfg = nullptr;
		current = nullptr;
		self = nullptr;
	}
	// the map's vmalloc area at the base, as bpf_map_area_mmapable_alloc
	// left it, and the bpf_array in its header page (array_map_alloc)
	void add_map(const port::Map &m)
	{
		auto area = std::make_unique<vm_struct>();
		area->id = 0;
		area->addr = port::kAreaAddr;
		/* the geometry facts bound the area by the vmalloc space */
		area->size = Sym<BITS_PER_LONG>::of(m.array_size, port::vmalloc_end(BITS_PER_LONG) - port::vmalloc_base(BITS_PER_LONG)) + PAGE_SIZE;
		area->flags = VM_USERMAP | VM_ALLOC;
		g.vmap_areas.push_back(std::move(area));
		array.map.map_flags = BPF_F_MMAPABLE;
		array.map.max_entries = u32::of(m.max_entries);
		array.elem_size = u32::of(m.elem_size);
		array.kaddr = port::kAreaAddr + PAGE_ALIGN((ulong)sizeof_bpf_array) - BPF_ARRAY_VALUE_OFFSET;
	}
	static thread_local World *self;
};
thread_local World *World::self = nullptr;

Insert insert_of(ulong addr, page *pg)
{
	bool in_area = pg && pg->owner == page_owner::vmalloc && pg->area_id == 0;
	return {addr.e(), in_area, in_area ? pg->index.e() : sym::ctx().int_val(0)};
}

vm_area_struct make_vma(World &w, const port::Vma &v)
{
	vm_area_struct vma;
	vma.vm_start = ulong::of(v.vm_start);
	vma.vm_end = vma.vm_start + ulong::of(v.len);
	vma.vm_pgoff = ulong::of(v.vm_pgoff);
	vma.vm_mm = &w.mm;
	vma.vm_flags = VM_READ | VM_SHARED | VM_MAYREAD | VM_MAYSHARE;
	vma.vm_private_data = &w.array.map;
	vma.vm_ops = &w.vm_ops;
	return vma;
}

void setup(Explorer &x, const port::Map *m, const std::vector<z3::expr> &facts)
{
	x.facts = facts;
	if (m && m->product) {
		x.abstract_products = true;
		x.products.emplace(std::make_pair(m->max_entries.id(), m->elem_size.id()), *m->product);
	}
}

struct MmapPath {
	int ret = 0;
	bool cut = false, bug = false;
	std::vector<Insert> inserts;
};

std::vector<std::pair<z3::expr, MmapPath>> run_mmap(z3::context &c, const port::Kernel &k, const port::Map &m,
						      const port::Vma &v, const std::vector<z3::expr> &facts)
{
	Explorer x(c);
	setup(x, &m, facts);
	return x.explore<MmapPath>([&] {
		World w(k);
		w.add_map(m);
		vm_area_struct vma = make_vma(w, v);
		MmapPath r;
		try {
			switch (k.level) {
			case Patch::pre: r.ret = array_map_mmap_pre(&w.array.map, &vma); break;
			case Patch::v1: r.ret = array_map_mmap_v1(&w.array.map, &vma); break;
			default: r.ret = array_map_mmap_v2(&w.array.map, &vma); break;
			}
		} catch (const LoopCut &) {
			r.cut = true;  /* remap's loop reached its third page, past every check */
		} catch (const BugOn &) {
			r.bug = true;
		}
		r.inserts = w.inserts;
		return r;
	});
}

bool accepted(const MmapPath &r) { return !r.bug && (r.cut || r.ret == 0); }

// vmalloc_to_page(kaddr) on the map's area alone
port::Page lookup(z3::context &c, const port::Kernel &k, const port::Map &m, const z3::expr &kaddr,
		  const std::vector<z3::expr> &facts)
{
	Explorer x(c);
	setup(x, &m, facts);
	auto paths = x.explore<Insert>([&] {
		World w(k);
		w.add_map(m);
		ulong a = ulong::of(kaddr);
		return insert_of(a, vmalloc_to_page(a));
	});
	return {sym::any_path(c, paths, [&](const Insert &r) { return c.bool_val(r.in_area); }),
		sym::join(paths, [](const Insert &r) { return r.index; }, c.int_val(0))};
}

// The pages remap_vmalloc_range's loop advances by per iteration: the
// second insert's page index minus the first's, on every path with two
// inserts of the map's pages. A constant (1 in the port: kaddr += PAGE_SIZE)
// by a query, once per page size: a non-constant step ends the proof.
int64_t remap_step(z3::context &c, const port::Kernel &k, const std::vector<std::pair<z3::expr, MmapPath>> &paths,
		   const std::vector<z3::expr> &facts)
{
	static std::map<unsigned, int64_t> known;  /* by PAGE_SHIFT; this width's build */
	if (auto it = known.find(k.shift); it != known.end())
		return it->second;
	std::vector<std::pair<z3::expr, z3::expr>> steps;  // (path, step)
	for (auto &[cond, r] : paths)
		if (accepted(r) && r.inserts.size() == 2 && r.inserts[0].in_area && r.inserts[1].in_area)
			steps.emplace_back(cond, r.inserts[1].index - r.inserts[0].index);
	int64_t d = 1;
	for (int attempt = 0; attempt < 2 && !steps.empty(); attempt++) {
		z3::solver s(c);
		for (const z3::expr &f : facts)
			s.add(f);
		z3::expr other = c.bool_val(false);
		for (auto &[cond, step] : steps)
			other = other || (cond && step != c.int_val(d));
		s.add(other);
		z3::check_result r = s.check();
		if (r == z3::unsat)
			return known[k.shift] = d;
		if (r != z3::sat || attempt == 1)
			throw std::runtime_error("remap_vmalloc_range's loop: no constant step per page");
		z3::model m = s.get_model();
		for (auto &[cond, step] : steps)
			if (m.eval(cond, true).is_true()) {
				d = m.eval(step, true).get_numeral_int64();
				break;
			}
	}
	return known[k.shift] = d;
}

}  // namespace

// stubs: what the analysed functions call and the proof does not look into.
// vm_insert_page and the map_pages PTE install record what they are given
// and stop the loop that calls them at its third page.
int vm_insert_page(vm_area_struct *, ulong addr, page *pg)
{
	World &w = *World::self;
	if (w.inserts.size() == 2)
		throw LoopCut{};
	w.inserts.push_back(insert_of(addr, pg));
	return 0;
}

bool map_pages_install_pte(vm_fault *, ulong addr, page *pg)
{
	World &w = *World::self;
	if (w.inserts.size() == 2)
		throw LoopCut{};
	w.inserts.push_back(insert_of(addr, pg));
	return true;
}

// the first call of each map_pages iteration: no PTE yet, and the loop
// stops at its third slot (a slot without a page installs nothing)
pte_t *pte_lookup(mm_struct *, ulong)
{
	if (++World::self->lookups == 3)
		throw LoopCut{};
	return nullptr;
}
void vma_link(mm_struct *, vm_area_struct *vma) { World::self->linked = vma; }
void put_page(page *p) { p->_refcount--; }
void kernel_memcpy_to(ulong, const void *, ulong) {}

z3::expr port_mmap_accepted(z3::context &c, const port::Kernel &k, const port::Map &m, const port::Vma &v,
			    const std::vector<z3::expr> &facts)
{
	auto paths = run_mmap(c, k, m, v, facts);
	return sym::any_path(c, paths, [&](const MmapPath &r) { return c.bool_val(accepted(r)); });
}

port::Page port_page_of(z3::context &c, const port::Kernel &k, const port::Map &m, const port::Vma &v,
			const z3::expr &i, const std::vector<z3::expr> &facts)
{
	z3::expr W2 = smt::two_to(c, BITS_PER_LONG), ps = c.int_val((uint64_t)1 << k.shift);
	if (k.level != Patch::pre) {
		/* the fault at VMA page i: handle_mm_fault's vmf, then ->fault */
		z3::expr address = z3::mod(v.vm_start + i * ps, W2);
		Explorer x(c);
		setup(x, &m, facts);
		auto paths = x.explore<Insert>([&] {
			World w(k);
			w.add_map(m);
			vm_area_struct vma = make_vma(w, v);
			vm_fault vmf;
			vmf.vma = &vma;
			vmf.address = ulong::of(address);
			vmf.pgoff = linear_page_index(&vma, vmf.address);
			vm_fault_t ret = k.level == Patch::v1 ? array_map_mmap_fault_v1(&w.array.map, &vmf)
							      : array_map_mmap_fault_v2(&w.array.map, &vmf);
			return insert_of(vmf.address, ret ? nullptr : vmf.pg);
		});
		return {sym::any_path(c, paths, [&](const Insert &r) { return c.bool_val(r.in_area); }),
			sym::join(paths, [](const Insert &r) { return r.index; }, c.int_val(0))};
	}
	/* pre: remap_vmalloc_range's loop inserted pages at uaddr 0 and 1 of
	 * the VMA; page i is where its step (the second insert minus the
	 * first) takes it, looked up by vmalloc_to_page like the loop does */
	auto paths = run_mmap(c, k, m, v, facts);
	z3::expr in_area = c.bool_val(false), index = c.int_val(0);
	z3::expr base = c.int_val(port::kAreaAddr);
	int64_t step_pages = remap_step(c, k, paths, facts);
	for (auto &[cond, r] : paths) {
		if (!accepted(r) || r.inserts.empty())
			continue;
		const Insert &a = r.inserts[0];
		if (!a.in_area)
			continue;
		z3::expr ok = a.uaddr == v.vm_start;
		if (r.inserts.size() > 1) {
			const Insert &b = r.inserts[1];
			ok = ok && b.uaddr == z3::mod(a.uaddr + ps, W2) && (i == 0 || c.bool_val(b.in_area));
		}
		z3::expr kaddr = z3::mod(base + a.index * ps + i * c.int_val(step_pages) * ps, W2);
		port::Page p = lookup(c, k, m, kaddr, facts);
		in_area = in_area || (cond && ok && p.in_area);
		index = z3::ite(cond, p.index, index);
	}
	return {in_area, index};
}

z3::expr port_door_passes(z3::context &c, const port::Kernel &k, const z3::expr &pgoff, const z3::expr &len)
{
	Explorer x(c);
	auto paths = x.explore<bool>([&] {
		World w(k);
		inode ino;
		ino.i_mode = k.door == Door::regular ? S_IFREG : 0;  /* the anon inode has no type */
		file f;
		f.f_inode = &ino;
		ulong ret = do_mmap_offset_checks(&f, &ino, ulong::of(len), ulong::of(pgoff));
		return ret.value() == 0;
	});
	return sym::any_path(c, paths, [&](bool ok) { return c.bool_val(ok); });
}

z3::expr port_split_keeps_index(z3::context &c, const port::Kernel &k, const port::Vma &v, const z3::expr &addr,
				const z3::expr &x_, const z3::expr &move_to, const std::vector<z3::expr> &facts)
{
	z3::expr bad = c.bool_val(false);
	for (int new_below : {0, 1}) {
		Explorer x(c);
		setup(x, nullptr, facts);
		auto paths = x.explore<z3::expr>([&] {
			World w(k);
			vm_area_struct vma = make_vma(w, v);
			vma.vm_ops = nullptr;
			vm_area_struct orig = vma;
			ulong xa = ulong::of(x_);
			pgoff_t want = linear_page_index(&orig, xa);
			try {
				__split_vma(&vma, ulong::of(addr), new_below);
			} catch (const BugOn &) {
				return sym::ctx().bool_val(true);
			}
			/* the two pieces: the VMA itself and the one vma_link got */
			std::unique_ptr<vm_area_struct> other(w.linked);
			z3::expr out = sym::ctx().bool_val(false);
			for (const vm_area_struct *piece : {&vma, other.get()}) {
				z3::expr in = xa.e() >= piece->vm_start.e() && xa.e() < piece->vm_end.e();
				/* mremap's move_vma: copy_vma keeps vm_pgoff, the piece moves to move_to */
				vm_area_struct moved = *piece;
				moved.vm_start = ulong::of(move_to);
				moved.vm_end = moved.vm_start + (piece->vm_end - piece->vm_start);
				ulong mx = xa - piece->vm_start + moved.vm_start;
				out = out || (in && (linear_page_index(piece, xa).e() != want.e() ||
						     linear_page_index(&moved, mx).e() != want.e()));
			}
			return out;
		});
		bad = bad || sym::any_path(c, paths, [&](const z3::expr &e) { return e; });
	}
	return bad;
}

namespace {

struct WindowPath {
	bool cut = false;
	std::optional<std::pair<z3::expr, z3::expr>> window;
	std::vector<Insert> inserts;
};

// vm_ops->map_pages of a BPF map VMA: kernel/bpf/syscall.c's
// bpf_map_mmap_pages hands the window to map->ops->map_mmap_pages
vm_fault_t sym_map_pages(vm_fault *vmf, pgoff_t start_pgoff, pgoff_t end_pgoff)
{
	World &w = *World::self;
	w.window = std::make_pair(start_pgoff.e(), end_pgoff.e());
	return array_map_mmap_pages_v3(&w.array.map, vmf, start_pgoff, end_pgoff);
}

}  // namespace

z3::expr port_window_bad(z3::context &c, const port::Kernel &k, const port::Map &m, const port::Vma &v,
			 const z3::expr &i, const z3::expr &j, const std::vector<z3::expr> &facts)
{
	z3::expr W2 = smt::two_to(c, BITS_PER_LONG), ps = c.int_val((uint64_t)1 << k.shift);
	unsigned table_shift = k.shift + (k.shift - (BITS_PER_LONG == 64 ? 3 : 2));  /* PTRS_PER_PTE */
	z3::expr address = z3::mod(v.vm_start + i * ps, W2);
	Explorer x(c);
	setup(x, &m, facts);
	x.check_feasible = true;  /* do_fault_around's max/min/min3 branch a lot */
	auto paths = x.explore<WindowPath>([&] {
		World w(k);
		w.add_map(m);
		w.vm_ops.map_pages = sym_map_pages;
		vm_area_struct vma = make_vma(w, v);
		vm_fault vmf;
		vmf.vma = &vma;
		vmf.address = ulong::of(address);
		vmf.pgoff = linear_page_index(&vma, vmf.address);
		WindowPath r;
		try {
			do_fault_around(&vmf);
		} catch (const LoopCut &) {
			r.cut = true;
		}
		r.window = w.window;
		r.inserts = w.inserts;
		return r;
	});
	/* the page ->fault maps at VMA page q, once, as a function of q */
	z3::expr q = c.int_const("fault_page_q");
	port::Kernel kf = k;
	kf.level = Patch::v2;
	std::vector<z3::expr> qfacts = facts;
	qfacts.push_back(q >= 0 && q < W2);
	port::Page fq = port_page_of(c, kf, m, v, q, qfacts);
	z3::expr npages = v.len / ps, bad = c.bool_val(false);
	for (auto &[cond, r] : paths) {
		if (!r.window)
			continue;
		auto [start, end] = *r.window;
		z3::expr nr = z3::mod(end - start + 1, W2);
		/* slot j: pgoff start + j, VMA page (that - vm_pgoff), whose
		 * address must share the faulting address's PTE table */
		z3::expr page = z3::mod(start + j - v.vm_pgoff, W2);
		z3::expr slot_addr = z3::mod(v.vm_start + page * ps, W2);
		z3::expr outside = j < nr && (page >= npages || slot_addr / smt::two_to(c, table_shift) !=
									  address / smt::two_to(c, table_shift));
		/* the slots the port installed (the first two): at their VMA
		 * page's address, with the page ->fault would map there */
		for (size_t n = 0; n < r.inserts.size(); n++) {
			const Insert &ins = r.inserts[n];
			z3::expr pn = z3::mod(start + (int)n - v.vm_pgoff, W2);
			z3::expr_vector from(c), to(c);
			from.push_back(q);
			to.push_back(pn);
			z3::expr want_in = fq.in_area.substitute(from, to), want_index = fq.index.substitute(from, to);
			outside = outside || ins.uaddr != z3::mod(v.vm_start + pn * ps, W2) ||
				  c.bool_val(ins.in_area) != want_in || (want_in && ins.index != want_index);
		}
		bad = bad || (cond && outside);
	}
	return bad;
}

port::Alloc port_map_alloc(z3::context &c, const port::Kernel &k, const z3::expr &value_size,
			   const z3::expr &max_entries)
{
	struct AllocPath {
		bool ok = false;
		z3::expr me, es, size;
		bool bug = false;
	};
	Explorer x(c);
	x.facts = {value_size >= 0 && value_size < smt::two_to(c, 32), max_entries >= 0 && max_entries < smt::two_to(c, 32)};
	auto paths = x.explore<AllocPath>([&] {
		World w(k);
		bpf_attr_map_create attr;
		attr.value_size = u32::of(value_size);
		attr.max_entries = u32::of(max_entries);
		attr.map_flags = BPF_F_MMAPABLE;
		AllocPath r{false, c.int_val(0), c.int_val(0), c.int_val(0)};
		if (array_map_alloc_check(&attr))
			return r;
		bpf_map *map;
		try {
			map = array_map_alloc(&attr);
		} catch (const BugOn &) {
			r.bug = true;
			return r;
		}
		if (IS_ERR(map))
			return r;
		std::unique_ptr<bpf_array> array(container_of_array(map));
		r = {true, array->map.max_entries.e(), array->elem_size.e(),
		     get_vm_area_size(kg->vmap_areas.at(0).get()).e()};
		return r;
	});
	return {sym::any_path(c, paths, [&](const AllocPath &r) { return c.bool_val(r.ok); }),
		sym::any_path(c, paths, [&](const AllocPath &r) { return c.bool_val(r.bug); }),
		sym::join(paths, [](const AllocPath &r) { return r.me; }, c.int_val(0)),
		sym::join(paths, [](const AllocPath &r) { return r.es; }, c.int_val(0)),
		sym::join(paths, [](const AllocPath &r) { return r.size; }, c.int_val(0))};
}

}  // namespace fl::FL_ARCH_NS
