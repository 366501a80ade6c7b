// SPDX-License-Identifier: GPL-2.0-only
// The symbolic kernel of world.h, compiled once per width with the port's
// symbolic build (FL_SYMBOLIC, FL_BITS): the port's own headers, types and
// functions, in the namespace fl::sym_arch32 / fl::sym_arch64. Set up the
// way the machine sets up its kernel (src/sim/arch/machine_impl.cpp) and
// map_create its file (kernel/bpf/syscall.cpp), with the map's geometry and
// placement symbolic.
#include <memory>

#include "bpf.h"
#include "pagemap.h"
#include "smt/port/world.h"

namespace fl::FL_ARCH_NS {

namespace port = ::fl::smt::port;
using ::fl::sym::Event;
using ::fl::sym::saw;

namespace {

// x86_64 4-level and i386 3G/1G, as the machine lays them out
struct Layout {
	uint64_t page_offset, lowmem_bytes, vmalloc_start, vmalloc_end, task_size;
};
#if FL_BITS == 64
constexpr Layout kLayout = {0xffff888000000000ull, 1ull << 30, 0xffffc90000000000ull, 0xffffe90000000000ull,
			    1ull << 47};
#else
constexpr Layout kLayout = {0xc0000000ull, 896ull << 20, 0xf8800000ull, 0xff000000ull, 0xc0000000ull};
#endif
using port::kMapAreaId;
using port::kNeighbourId;

ulong var(const z3::expr &e) { return ulong::var(e); }
template <class W> W input(const port::Input &in) { return W(::fl::sym::term(in.e, in.lo, in.hi, in.tz)); }

// The world of one run: kernel globals, one process, the map and its file.
struct World {
	kernel_config cfg;
	BasicStats<::fl::sym::sink> stats;
	kernel_globals g;
	mm_struct mm;
	task_struct task;
	inode ino;
	file f;
	std::unique_ptr<bpf_array> array;
	kernel_globals *old_kg = kg;
	const kernel_config *old_kcfg = kcfg;
	task_struct *old_current = current;

	explicit World(const port::Kernel &k)
	{
		cfg = kernel_config{k.shift, k.bypass_spec_v1, k.door, k.patch, Historic::none, ArenaFix::fixed};
		g.cfg = cfg;
		g.stats = &stats;
		kg = &g;
		kcfg = &g.cfg;
		g.page_offset = (ulong)kLayout.page_offset;
		g.direct_map_end = (ulong)(kLayout.page_offset + kLayout.lowmem_bytes);
		g.vmalloc_start = (ulong)kLayout.vmalloc_start;
		g.vmalloc_end = (ulong)kLayout.vmalloc_end;
		g.totalram_pages = (u64)((FL_BITS == 32 ? 1ull << 30 : 64ull << 30) >> k.shift);
		mm.task_size = (ulong)(kLayout.task_size - PAGE_SIZE);
		mm.mmap_base = (ulong)((kLayout.task_size - (128ull << 20)) & PAGE_MASK);
		task.mm = &mm;
		current = &task;
		::fl::sym::install_probe<ulong, pte_t>::fn = [](const ulong &addr, const pte_t &pte) {
			saw(Event{Event::install, addr.expr(), pte.pg->index.expr(), ::fl::sym::ctx().int_val(0),
				  pte.pg->area_id, 0});
		};
	}
	~World()
	{
		::fl::sym::install_probe<ulong, pte_t>::fn = nullptr;
		for (vm_area_struct *vma : mm.mmap)
			delete vma;
		kg = old_kg;
		kcfg = old_kcfg;
		current = old_current;
	}
	World(const World &) = delete;

	vm_struct *add_area(int id, const port::Input &addr, const port::Input &size, ulong flags)
	{
		auto a = std::make_unique<vm_struct>();
		a->id = id;
		a->addr = input<ulong>(addr);
		a->size = input<ulong>(size);
		a->flags = flags;
		a->nr_pages = (a->size - PAGE_SIZE) >> PAGE_SHIFT;
		g.vmap_areas.push_back(std::move(a));
		return g.vmap_areas.back().get();
	}

	// the map as array_map_alloc leaves it (the facts say how it relates
	// to the area), and its file as map_create opens it
	void add_map(const port::Inputs &in, const port::Kernel &k)
	{
		vm_struct *area = add_area(kMapAreaId, in.base, in.size, VM_ALLOC | VM_USERMAP);
		add_area(kNeighbourId, in.nbase, in.nsize, VM_ALLOC);
		array = std::make_unique<bpf_array>();
		array->map.ops = array_map_ops_for(k.patch);
		array->map.map_type = BPF_MAP_TYPE_ARRAY;
		array->map.key_size = 4;
		array->map.max_entries = input<u32>(in.max_entries);
		array->map.map_flags = BPF_F_MMAPABLE;
		array->map.bypass_spec_v1 = k.bypass_spec_v1;
		array->elem_size = input<u32>(in.elem_size);
		array->map.value_size = array->elem_size;
		array->kaddr = area->addr + PAGE_ALIGN((ulong)sizeof_bpf_array) - BPF_ARRAY_VALUE_OFFSET;
		open_file(&array->map);
	}

	void open_file(bpf_map *map)
	{
		ino.i_mode = S_IRUSR | S_IWUSR | (kcfg->door == Door::regular ? S_IFREG : 0);
		ino.i_sb_iflags = SB_I_NODEV | SB_I_NOEXEC;
		f.f_inode = &ino;
		f.f_op = &probe_fops;
		f.private_data = map;
		f.f_mode = FMODE_READ | FMODE_WRITE | FMODE_CAN_READ | FMODE_CAN_WRITE;
		f.f_count = 2;  /* the fd table's reference: never released here */
	}

	// bpf_map_fops, with f_op->mmap's VMA and result seen on the way out
	static int probe_mmap(file *filp, vm_area_struct *vma)
	{
		int ret = bpf_map_fops.mmap(filp, vma);
		saw(Event{Event::mmap, vma->vm_pgoff.expr(), vma->vm_start.expr(), vma->vm_end.expr(), -1, ret});
		return ret;
	}
	static inline const file_operations probe_fops = {
		.mmap = probe_mmap,
		.get_unmapped_area = bpf_map_fops.get_unmapped_area,
		.release = nullptr,
	};
};

port::Geometry geometry_of(const bpf_array *array, const vm_struct *area)
{
	u64 visible = PAGE_ALIGN((u64)array->map.max_entries * array->elem_size);
	ulong vmalloc_addr = round_down(array->kaddr, PAGE_SIZE);  /* array_map_vmalloc_addr */
	return {area->addr.expr(), area->size.expr(), vmalloc_addr.expr(), visible.expr(),
		array->elem_size.expr(), (uint64_t)PAGE_ALIGN((ulong)sizeof_bpf_array),
		kLayout.vmalloc_start, kLayout.vmalloc_end};
}

port::Geometry geometry(const port::Kernel &k, const port::Inputs &in)
{
	World w(k);
	w.add_map(in, k);
	return geometry_of(w.array.get(), w.g.vmap_areas[0].get());
}

port::Mapped mmap_fault(const port::Kernel &k, const port::Inputs &in)
{
	World w(k);
	w.add_map(in, k);
	z3::context &c = ::fl::sym::ctx();
	port::Mapped out{false, false, c.int_val(0), c.int_val(0), c.int_val(0)};
	ulong populate;
	ulong ret = do_mmap(&w.f, 0, input<ulong>(in.len), PROT_READ, MAP_SHARED, 0, input<ulong>(in.vm_pgoff), &populate);
	if (IS_ERR_VALUE(ret))
		return out;
	vm_area_struct *vma = find_vma(&w.mm, ret);
	out.accepted = true;
	out.vm_start = vma->vm_start.expr();
	out.vm_end = vma->vm_end.expr();
	if (!k.fault)
		return out;
	ulong page = input<ulong>(in.page);
	if (kcfg->patch == Patch::pre || !(page < vma_pages(vma)))
		return out;  /* pre: remap_vmalloc_range installed every page */
	ulong address = vma->vm_start + (page << PAGE_SHIFT);
	out.faulted = true;
	out.fault = address.expr();
	saw(Event{Event::fault, out.fault, c.int_val(0), c.int_val(0), -1, 0});
	handle_mm_fault(vma, address, FAULT_FLAG_USER);
	return out;
}

port::Allocated alloc(const port::Kernel &k, const z3::expr &value_size, const z3::expr &max_entries)
{
	World w(k);
	z3::context &c = ::fl::sym::ctx();
	port::Allocated out{false, {c.int_val(0), c.int_val(0), c.int_val(0), c.int_val(0), c.int_val(0), 0, 0, 0},
			    c.int_val(0)};
	bpf_attr_map_create attr;
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = u32::var(value_size);
	attr.max_entries = u32::var(max_entries);
	attr.map_flags = BPF_F_MMAPABLE;
	file *f = nullptr;
	if (map_create(&attr, &f))
		return out;
	bpf_array *array = reinterpret_cast<bpf_array *>(f->private_data);
	out.ok = true;
	out.g = geometry_of(array, find_vm_area(round_down(array->kaddr, PAGE_SIZE)));
	out.max_entries = array->map.max_entries.expr();
	delete f->f_inode;
	delete f;
	delete array;
	return out;
}

port::Split split(const port::Kernel &k, const z3::expr &start, const z3::expr &len, const z3::expr &pgoff,
		  const z3::expr &at, const z3::expr &addr, int new_below)
{
	World w(k);
	vm_area_struct *vma = vm_area_alloc(&w.mm);
	vma->vm_start = var(start);
	vma->vm_end = vma->vm_start + var(len);
	vma->vm_pgoff = var(pgoff);
	vma_link(&w.mm, vma);
	ulong a = var(addr);
	pgoff_t before = linear_page_index(vma, a);
	__split_vma(vma, var(at), new_below);
	vm_area_struct *piece = vma_lookup(&w.mm, a);
	pgoff_t after = linear_page_index(piece, a);
	vm_area_struct *child = vm_area_dup(piece);  /* dup_mmap's copy of the VMA */
	pgoff_t forked = linear_page_index(child, a);
	delete child;
	return {before.expr(), after.expr(), forked.expr()};
}

}  // namespace

}  // namespace fl::FL_ARCH_NS

namespace fl::smt::port {

#if FL_BITS == 64
const World &world64()
#else
const World &world32()
#endif
{
	static const World w = {FL_ARCH_NS::geometry, FL_ARCH_NS::mmap_fault, FL_ARCH_NS::alloc, FL_ARCH_NS::split};
	return w;
}

}  // namespace fl::smt::port

namespace fl::smt::port {

#if FL_BITS == 64
Inputs Inputs::make(fl::sym::Session &s, const Kernel &k)
{
	using fl::sym::u128;
	const uint64_t ps = 1ull << k.shift;
	const u128 top = fl::sym::pow2(k.bits) - 1;
	// a multiple of `unit` in [lo, hi]: unit * a fresh variable
	auto multiple = [&](const char *name, uint64_t unit, u128 lo, u128 hi) {
		z3::expr v = s.c.int_const(name);
		s.domain.push_back(v >= fl::sym::int_of(lo / unit) && v <= fl::sym::int_of(hi / unit));
		unsigned tz = (unsigned)__builtin_ctzll(unit);
		return Input{unit == 1 ? v : fl::sym::int_of(unit) * v, lo, hi, tz};
	};
	auto word = [&](const char *name, unsigned bits) { return Input{s.var(name, bits), 0, fl::sym::pow2(bits) - 1, 0}; };
	const uint64_t vstart = k.bits == 64 ? 0xffffc90000000000ull : 0xf8800000ull;
	const uint64_t vend = k.bits == 64 ? 0xffffe90000000000ull : 0xff000000ull;
	(void)top;
	return {multiple("max_entries", 1, 1, 0xffffffffu),
		multiple("elem_size", 8, 8, 1ull << 31),
		multiple("base", ps, vstart, vend - 2 * ps),
		multiple("size", ps, 2 * ps, vend - vstart),
		multiple("nbase", ps, vstart, vend - 2 * ps),
		multiple("nsize", ps, 2 * ps, vend - vstart),
		word("vm_pgoff", k.bits),
		word("len", k.bits),
		word("page", k.bits)};
}
#endif
}  // namespace fl::smt::port
