// SPDX-License-Identifier: GPL-2.0-only
// The stateful model test (rc::state): commands generated from the model
// (model.h) run on the port in the machine; after each one the return
// value, errno, data and signal must match the model, and so must the
// write-active count, frozen, and every machine invariant. Each command is
// also recorded as a Program op, so a failure exports as a replayable file.
#include <rapidcheck/state.h>

#include "check/trace.h"
#include "props/generators.h"
#include "props/model.h"
#include "props/property.h"

namespace fl::props {
namespace {

using namespace fl::uapi;

constexpr uint64_t k4GPages = (uint64_t(1) << 32) / kPage;

struct Sut {
	Config cfg;
	std::unique_ptr<Machine> m;
	Program prog;                  // what ran so far, as a Program
	std::map<int, uint64_t> addr;  // base -> address
	std::map<int, int> label;      // base -> Program label
	int holes = 0;

	~Sut() { dump_case("model", prog, cfg); }
	Sut(const Config &c, const MapSpec &spec) : cfg(c), m(make_machine(c))
	{
		prog.map = spec;
		const int64_t fd = m->map_create(spec);
		FL_PROP_ASSERT(fd >= 0, prog, cfg, "map_create returned " + std::to_string(fd));
		Op op;
		op.kind = OpKind::reserve;
		op.label = label[0] = prog.add_label("R");
		op.len = Num{kRegionPages, true};
		prog.ops.push_back(op);
		addr[0] = uint64_t(m->mmap(0, 0, kRegionPages * kPage, PROT_NONE, MAP_PRIVATE, false, 0));
	}
	Addr at(int base, uint64_t byte) { return Addr{label.at(base), Num{byte, false}, false}; }
	uint64_t va(const MVma &v, uint64_t page, uint64_t byte = 0) { return addr.at(v.base) + (v.start + page) * kPage + byte; }
	void define(int base, uint64_t a)
	{
		addr[base] = a;
		label[base] = prog.add_label("M" + std::to_string(base));
	}
	// Keep the reservation whole: a hole could otherwise receive a later
	// non-fixed mmap and then be clobbered by a MAP_FIXED one.
	void refill(int pid, int region_page, uint64_t n)
	{
		if (region_page < 0)
			return;
		Op op;
		op.kind = OpKind::reserve;
		op.proc = pid;
		op.label = prog.add_label("H" + std::to_string(++holes));
		op.len = Num{n, true};
		op.has_at = true;
		op.at = Addr{label.at(0), Num{uint64_t(region_page), true}, false};
		prog.ops.push_back(op);
		m->mmap(pid, addr.at(0) + uint64_t(region_page) * kPage, n * kPage, PROT_NONE, MAP_PRIVATE | MAP_FIXED, false, 0);
	}
	// The common postconditions.
	void check(const Model &after)
	{
		Violation v = m->take_op_violation();
		if (!v)
			v = m->check_invariants();
		FL_PROP_ASSERT(!v, prog, cfg, std::string("invariant ") + to_string(v.what) + ": " + v.detail);
		FL_PROP_ASSERT(m->map_writecnt() == after.writecnt(), prog, cfg,
			       "writecnt " + std::to_string(m->map_writecnt()) + ", model " + std::to_string(after.writecnt()));
		FL_PROP_ASSERT(m->map_frozen() == after.frozen, prog, cfg, "frozen differs from the model");
	}
};

using Cmd = rc::state::Command<Model, Sut>;

std::string err(int64_t r) { return r < 0 ? "-" + errno_name(-r) : std::to_string(r); }

// A VMA of `pid` picked at generation time, found again at apply time (the
// shrinker may have removed what created it).
struct VmaRef {
	int pid = 0, base = 0;
	uint64_t start = 0;
	static VmaRef pick(const Model &s, bool pid0_only)
	{
		std::vector<size_t> idx;
		for (size_t i = 0; i < s.vmas().size(); i++)
			if (!pid0_only || s.vmas()[i].pid == 0)
				idx.push_back(i);
		RC_PRE(!idx.empty());
		const MVma &v = s.vmas()[*rc::gen::elementOf(idx)];
		return VmaRef{v.pid, v.base, v.start};
	}
	const MVma &get(const Model &s) const { return s.vmas()[size_t(s.find(pid, base, start))]; }
	void pre(const Model &s) const { RC_PRE(s.find(pid, base, start) >= 0); }
};

struct Mmap : Cmd {
	uint64_t n = *rc::gen::inRange<uint64_t>(1, 5);
	uint64_t pgoff;
	int prot = *rc::gen::element(PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE);
	bool populate = *rc::gen::arbitrary<bool>();
	bool fixed = *rc::gen::arbitrary<bool>();
	uint64_t page = *rc::gen::inRange<uint64_t>(0, kRegionPages - 4);
	explicit Mmap(const Model &s)
		: pgoff(*rc::gen::weightedOneOf<uint64_t>({{4, rc::gen::inRange<uint64_t>(0, s.visible)},
							   {1, rc::gen::inRange<uint64_t>(s.visible, s.visible + 3)}}))
	{
		// 4 GiB and more, non-fixed and not populated (the reservation is
		// 32 pages; populating would fault every page): up to the map's
		// end (accepted) or one page past it (refused).
		if (s.huge && *rc::gen::inRange(0, 2) == 0) {
			pgoff = *rc::gen::element<uint64_t>(0, 1, s.visible - k4GPages);
			n = *rc::gen::element<uint64_t>(s.visible - pgoff, s.visible - pgoff + 1, k4GPages);
			fixed = populate = false;
		}
	}
	void checkPreconditions(const Model &s) const override
	{
		RC_PRE(!fixed || s.region_free(0, page, n));
	}
	int64_t expected(const Model &s) const
	{
		if ((prot & PROT_WRITE) && s.frozen)
			return -EPERM;
		if ((prot & PROT_WRITE) && (s.spec.map_flags & BPF_F_RDONLY_PROG))
			return -EACCES;
		if (pgoff + n > s.visible)
			return -EINVAL;
		return 0;
	}
	void apply(Model &s) const override
	{
		int base = s.next_base++;
		if (expected(s) < 0)
			return;
		s.edit_vmas().push_back(MVma{0, base, 0, n, pgoff, prot, bool(prot & PROT_WRITE), fixed ? int(page) : -1,
				      {}});
	}
	void run(const Model &s, Sut &sut) const override
	{
		Op op;
		op.kind = OpKind::mmap;
		op.len = Num{n, true};
		op.pgoff = pgoff;
		op.prot = prot;
		op.flags = MAP_SHARED | (populate ? MAP_POPULATE : 0) | (fixed ? MAP_FIXED : 0);
		op.has_at = fixed;
		op.at = Addr{sut.label.at(0), Num{page, true}, false};
		uint64_t a = fixed ? sut.addr.at(0) + page * kPage : 0;
		int base = s.next_base;
		sut.define(base, 0);
		op.label = sut.label.at(base);
		sut.prog.ops.push_back(op);
		int64_t r = sut.m->mmap(0, a, n * kPage, prot, op.flags, true, pgoff);
		sut.addr[base] = uint64_t(r);
		int64_t want = expected(s);
		FL_PROP_ASSERT((r < 0 ? r : 0) == want, sut.prog, sut.cfg, "mmap returned " + err(r) + ", model " + err(want));
		FL_PROP_ASSERT(!fixed || r < 0 || uint64_t(r) == a, sut.prog, sut.cfg, "MAP_FIXED mapped elsewhere");
		// A refused MAP_FIXED mmap has already unmapped the reservation
		// under it (mmap_region unmaps first): fill the hole again.
		if (fixed && r < 0)
			sut.refill(0, int(page), n);
		sut.check(nextState(s));
	}
	void show(std::ostream &os) const override
	{
		os << "mmap " << n << "p pgoff=" << pgoff << " prot=" << prot << (populate ? " populate" : "")
		   << (fixed ? " fixed@" + std::to_string(page) : "");
	}
};

// munmap, mprotect, madvise(DONTNEED) over [first, first+count) of one VMA.
struct RangeOp : Cmd {
	OpKind kind = *rc::gen::element(OpKind::munmap, OpKind::mprotect, OpKind::madvise);
	VmaRef ref;
	uint64_t first = 0, count = 0;
	int prot = *rc::gen::element(PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE);
	explicit RangeOp(const Model &s) : ref(VmaRef::pick(s, true))
	{
		const MVma &v = ref.get(s);
		bool whole = *rc::gen::arbitrary<bool>();
		first = whole ? 0 : *rc::gen::inRange<uint64_t>(0, v.n);
		count = whole ? v.n : *rc::gen::inRange<uint64_t>(1, v.n - first + 1);
	}
	void checkPreconditions(const Model &s) const override
	{
		ref.pre(s);
		RC_PRE(first + count <= ref.get(s).n);
	}
	bool refused(const Model &s) const
	{
		return kind == OpKind::mprotect && (prot & PROT_WRITE) && !ref.get(s).maywrite;
	}
	void apply(Model &s) const override
	{
		// mprotect to the same protection changes nothing (mprotect_fixup
		// returns before splitting).
		if (refused(s) || (kind == OpKind::mprotect && prot == ref.get(s).prot))
			return;
		size_t i = size_t(s.find(ref.pid, ref.base, ref.start));
		MVma v = s.vmas()[i];
		if (kind == OpKind::madvise) {
			if (s.eager)
				for (uint64_t p = first; p < first + count; p++)
					s.edit_vmas()[i].zapped.insert(p);
			return;
		}
		std::vector<MVma> &vmas = s.edit_vmas();
		vmas.erase(vmas.begin() + long(i));
		auto piece = [&](uint64_t from, uint64_t to, int prot_) {
			if (from >= to)
				return;
			MVma w = v;
			w.start = v.start + from;
			w.n = to - from;
			w.pgoff = v.pgoff + from;
			w.prot = prot_;
			w.region_page = v.region_page < 0 ? -1 : v.region_page + int(from);
			w.zapped.clear();
			for (auto z = v.zapped.lower_bound(from); z != v.zapped.end() && *z < to; ++z)
				w.zapped.insert(*z - from);
			vmas.push_back(w);
		};
		piece(0, first, v.prot);
		if (kind == OpKind::mprotect)
			piece(first, first + count, prot);
		piece(first + count, v.n, v.prot);
	}
	void run(const Model &s, Sut &sut) const override
	{
		const MVma &v = ref.get(s);
		Op op;
		op.kind = kind;
		op.addr = sut.at(v.base, (v.start + first) * kPage);
		op.len = Num{count, true};
		op.prot = prot;
		op.advice = MADV_DONTNEED;
		sut.prog.ops.push_back(op);
		uint64_t a = sut.va(v, first);
		int64_t r = kind == OpKind::munmap     ? sut.m->munmap(0, a, count * kPage)
			    : kind == OpKind::mprotect ? sut.m->mprotect(0, a, count * kPage, prot)
						       : sut.m->madvise(0, a, count * kPage, MADV_DONTNEED);
		int64_t want = refused(s) ? -EACCES : 0;
		FL_PROP_ASSERT(r == want, sut.prog, sut.cfg, std::string(to_string(kind)) + " returned " + err(r) + ", model " + err(want));
		if (kind == OpKind::munmap && v.region_page >= 0)
			sut.refill(0, v.region_page + int(first), count);
		sut.check(nextState(s));
	}
	void show(std::ostream &os) const override
	{
		os << to_string(kind) << " M" << ref.base << "+" << ref.start + first << "p len=" << count << "p prot=" << prot;
	}
};

// mremap of a whole VMA: grow (refused, VM_DONTEXPAND), shrink in place,
// or a same-size MREMAP_FIXED move into the reservation.
struct Mremap : Cmd {
	VmaRef ref;
	int mode = *rc::gen::inRange(0, 3);  // 0 grow, 1 shrink, 2 move
	uint64_t new_n = 0;
	uint64_t page = *rc::gen::inRange<uint64_t>(0, kRegionPages - 4);
	explicit Mremap(const Model &s) : ref(VmaRef::pick(s, true))
	{
		const MVma &v = ref.get(s);
		new_n = mode == 0 ? v.n + 1 : mode == 1 ? *rc::gen::inRange<uint64_t>(1, v.n + 1) : v.n;
	}
	void checkPreconditions(const Model &s) const override
	{
		ref.pre(s);
		const MVma &v = ref.get(s);
		const bool sized = mode == 0 ? new_n == v.n + 1 : new_n <= v.n;
		RC_PRE(sized);
		const bool fits = mode != 2 || (new_n == v.n && page + v.n <= kRegionPages && s.region_free(0, page, v.n));
		RC_PRE(fits);
	}
	void apply(Model &s) const override
	{
		MVma &v = s.edit_vmas()[size_t(s.find(ref.pid, ref.base, ref.start))];
		int base = s.next_base++;
		if (mode == 1) {
			v.n = new_n;
			v.zapped.erase(v.zapped.lower_bound(new_n), v.zapped.end());
		} else if (mode == 2) {
			v.base = base;
			v.start = 0;
			v.region_page = int(page);
		}
	}
	void run(const Model &s, Sut &sut) const override
	{
		const MVma &v = ref.get(s);
		Op op;
		op.kind = OpKind::mremap;
		op.addr = sut.at(v.base, v.start * kPage);
		op.len = Num{v.n, true};
		op.new_len = Num{new_n, true};
		op.flags = mode == 2 ? MREMAP_MAYMOVE | MREMAP_FIXED : mode == 0 ? MREMAP_MAYMOVE : 0;
		uint64_t to = sut.addr.at(0) + page * kPage;
		int base = s.next_base;
		if (mode == 2) {
			op.has_at = true;
			op.at = Addr{sut.label.at(0), Num{page, true}, false};
			sut.define(base, to);
			op.label = sut.label.at(base);
		}
		sut.prog.ops.push_back(op);
		int64_t r = sut.m->mremap(0, sut.va(v, 0), v.n * kPage, new_n * kPage, op.flags, mode == 2 ? to : 0);
		int64_t want = mode == 0 ? -EFAULT : int64_t(sut.va(v, 0));
		if (mode == 2)
			want = int64_t(to);
		FL_PROP_ASSERT(r == want, sut.prog, sut.cfg, "mremap returned " + err(r) + ", model " + err(want));
		if (mode == 1 && v.region_page >= 0)
			sut.refill(0, v.region_page + int(new_n), v.n - new_n);
		if (mode == 2 && v.region_page >= 0)
			sut.refill(0, v.region_page, v.n);
		sut.check(nextState(s));
	}
	void show(std::ostream &os) const override
	{
		os << "mremap M" << ref.base << "+" << ref.start << "p " << (mode == 0 ? "grow" : mode == 1 ? "shrink" : "move")
		   << " new_len=" << new_n << "p";
	}
};

// A load or store somewhere inside a VMA of a live process.
struct Access : Cmd {
	bool store = *rc::gen::arbitrary<bool>();
	VmaRef ref;
	uint64_t page = 0, byte = 0;
	unsigned size = *rc::gen::element(8u, 4u, 1u);
	uint64_t value = *rc::gen::inRange<uint64_t>(1, 1u << 16);
	explicit Access(const Model &s) : ref(VmaRef::pick(s, false))
	{
		// ... or the last page, or on a mapping of more than 4 GiB the page
		// 4 GiB past its start (where an offset into the VMA leaves u32)
		const uint64_t n = ref.get(s).n;
		page = *rc::gen::weightedOneOf<uint64_t>({{3, rc::gen::inRange<uint64_t>(0, n)},
							  {1, rc::gen::just(n - 1)},
							  {1, rc::gen::just(n > k4GPages ? k4GPages : n - 1)}});
		// ... or an element boundary, where an update astride its element shows
		const uint64_t elem = s.elem_size() % kPage;
		byte = *rc::gen::element<uint64_t>(0, 8, kPage - 16, elem, 2 * elem % kPage) / size * size;
	}
	void checkPreconditions(const Model &s) const override
	{
		ref.pre(s);
		RC_PRE(page < ref.get(s).n);
	}
	int sig(const Model &s) const
	{
		const MVma &v = ref.get(s);
		if (v.prot == PROT_NONE || (store && !(v.prot & PROT_WRITE)))
			return sigsegv;
		return s.eager && v.zapped.count(page) ? sigbus : 0;
	}
	uint64_t offset(const Model &s) const { return (ref.get(s).pgoff + page) * kPage + byte; }
	void apply(Model &s) const override
	{
		if (!store || sig(s))
			return;
		uint64_t off = offset(s);
		for (unsigned i = 0; i < size; i++)
			s.set_byte(off + i, uint8_t(value >> (8 * i)));
	}
	void run(const Model &s, Sut &sut) const override
	{
		const MVma &v = ref.get(s);
		Op op;
		op.kind = store ? OpKind::store : OpKind::load;
		op.proc = v.pid;
		op.addr = sut.at(v.base, (v.start + page) * kPage + byte);
		op.size = size;
		op.value = store ? value : 0;
		sut.prog.ops.push_back(op);
		uint64_t a = sut.va(v, page, byte);
		fl::Access got = store ? sut.m->store(v.pid, a, size, value) : sut.m->load(v.pid, a, size);
		int want = sig(s);
		FL_PROP_ASSERT(got.sig == want, sut.prog, sut.cfg,
			       "signal " + std::to_string(got.sig) + ", model " + std::to_string(want));
		if (!store && !want) {
			FL_PROP_ASSERT(got.bytes == s.read(offset(s), size), sut.prog, sut.cfg, "loaded bytes differ from the model");
		}
		sut.check(nextState(s));
	}
	void show(std::ostream &os) const override
	{
		os << (store ? "store" : "load") << " pid" << ref.pid << " M" << ref.base << "+" << ref.start + page << "p+" << byte
		   << " size=" << size;
	}
};

struct Fork : Cmd {
	void checkPreconditions(const Model &s) const override { RC_PRE(size_t(s.procs) < s.alive.size()); }
	void apply(Model &s) const override
	{
		int child = s.procs++;
		s.alive[size_t(child)] = true;
		std::vector<MVma> copies;
		for (const MVma &v : s.vmas())
			if (v.pid == 0) {
				copies.push_back(v);
				copies.back().pid = child;
			}
		std::vector<MVma> &vmas = s.edit_vmas();
		vmas.insert(vmas.end(), copies.begin(), copies.end());
	}
	void run(const Model &s, Sut &sut) const override
	{
		Op op;
		op.kind = OpKind::fork;
		sut.prog.ops.push_back(op);
		int64_t r = sut.m->fork(0);
		FL_PROP_ASSERT(r == int64_t(s.procs), sut.prog, sut.cfg, "fork returned " + err(r));
		sut.check(nextState(s));
	}
	void show(std::ostream &os) const override { os << "fork"; }
};

struct Exit : Cmd {
	int pid;
	explicit Exit(const Model &s) : pid(*rc::gen::inRange(1, std::max(2, s.procs))) {}
	void checkPreconditions(const Model &s) const override { RC_PRE(pid < s.procs && s.alive[size_t(pid)]); }
	void apply(Model &s) const override
	{
		s.alive[size_t(pid)] = false;
		std::erase_if(s.edit_vmas(), [&](const MVma &v) { return v.pid == pid; });
	}
	void run(const Model &s, Sut &sut) const override
	{
		Op op;
		op.kind = OpKind::exit;
		op.proc = pid;
		sut.prog.ops.push_back(op);
		int64_t r = sut.m->exit(pid);
		FL_PROP_ASSERT(r == 0, sut.prog, sut.cfg, "exit returned " + err(r));
		sut.check(nextState(s));
	}
	void show(std::ostream &os) const override { os << "exit pid" << pid; }
};

// bpf(2): update, lookup, freeze.
struct Bpf : Cmd {
	// freeze ends every later update and writable mmap: rarer than the rest
	OpKind kind = *rc::gen::element(OpKind::update, OpKind::update, OpKind::lookup, OpKind::lookup, OpKind::freeze);
	uint32_t index;
	uint64_t value = *rc::gen::inRange<uint64_t>(1, 1u << 16);
	// BPF_NOEXIST always fails on an array (every element exists)
	int flags = *rc::gen::element(int(BPF_ANY), int(BPF_ANY), int(BPF_EXIST), int(BPF_NOEXIST));
	explicit Bpf(const Model &s) : index(pick_index(s)) {}
	// The first few elements (where neighbours meet), any, or (a lookup)
	// one the model holds non-zero bytes of: reading back what an update or a store
	// wrote is what catches a write landing in the wrong element; an
	// independent index of up to 64 rarely meets it.
	uint32_t pick_index(const Model &s) const
	{
		std::vector<uint32_t> written;
		for (const auto &[off, b] : s.bytes())
			if (const uint64_t i = off / s.elem_size(); i < s.spec.max_entries && (written.empty() || written.back() != i))
				written.push_back(uint32_t(i));
		if (kind == OpKind::lookup && !written.empty() && *rc::gen::inRange(0, 2))
			return *rc::gen::elementOf(written);
		return *rc::gen::weightedOneOf<uint32_t>({{1, rc::gen::inRange<uint32_t>(0, 4)},
							  {1, rc::gen::inRange<uint32_t>(0, s.spec.max_entries + 1)}});
	}
	int64_t expected(const Model &s) const
	{
		switch (kind) {
		case OpKind::update:
			if (s.frozen)
				return -EPERM;
			if (index >= s.spec.max_entries)
				return -E2BIG;
			return flags == int(BPF_NOEXIST) ? -EEXIST : 0;
		case OpKind::lookup:
			return index >= s.spec.max_entries ? -ENOENT : 0;
		default:
			// map_get_sys_perms drops FMODE_CAN_WRITE once frozen: -EPERM first
			return s.frozen ? -EPERM : s.writecnt() ? -EBUSY : 0;
		}
	}
	void apply(Model &s) const override
	{
		if (expected(s) < 0)
			return;
		if (kind == OpKind::freeze)
			s.frozen = true;
		if (kind == OpKind::update) {
			const uint64_t at = index * s.elem_size();
			s.zero_bytes(at, at + s.spec.value_size);
			for (uint64_t i = 0; i < std::min<uint64_t>(8, s.spec.value_size); i++)
				s.set_byte(at + i, uint8_t(value >> (8 * i)));
		}
	}
	void run(const Model &s, Sut &sut) const override
	{
		Op op;
		op.kind = kind;
		op.index = index;
		op.value = kind == OpKind::update ? value : 0;
		op.flags = kind == OpKind::update ? flags : 0;
		sut.prog.ops.push_back(op);
		std::vector<uint8_t> v;
		int64_t r;
		if (kind == OpKind::update) {
			// The Program's update writes 8 bytes; keep the SUT equal to it.
			v.assign(8, 0);
			for (int i = 0; i < 8; i++)
				v[size_t(i)] = uint8_t(value >> (8 * i));
			r = sut.m->map_update(index, v, uint64_t(flags));
		} else if (kind == OpKind::lookup) {
			r = sut.m->map_lookup(index, &v);
		} else {
			r = sut.m->map_freeze();
		}
		int64_t want = expected(s);
		FL_PROP_ASSERT(r == want, sut.prog, sut.cfg, std::string(to_string(kind)) + " returned " + err(r) + ", model " + err(want));
		if (kind == OpKind::lookup && r == 0) {
			FL_PROP_ASSERT(v == s.read(index * s.elem_size(), s.spec.value_size), sut.prog, sut.cfg, "lookup bytes differ from the model");
		}
		sut.check(nextState(s));
	}
	void show(std::ostream &os) const override
	{
		os << to_string(kind) << " idx=" << index << " val=" << value << " flags=" << flags;
	}
};

// A model's copies share its bytes and VMAs (model.h: Cow) until one of
// them changes: the change is seen by none of the others (RapidCheck keeps
// the earlier states and runs the commands against them).
TEST(ModelCopies, AChangeLeavesTheOtherCopiesAlone)
{
	Model a;
	a.set_byte(8, 1);
	a.edit_vmas().push_back(MVma{});
	const Model b = a;
	Model c = a;
	a.set_byte(8, 2);
	a.set_byte(9, 3);
	a.edit_vmas().clear();
	c.zero_bytes(0, 16);
	c.edit_vmas()[0].zapped.insert(1);
	EXPECT_EQ(a.read(8, 2), (std::vector<uint8_t>{2, 3}));
	EXPECT_EQ(b.read(8, 2), (std::vector<uint8_t>{1, 0}));
	EXPECT_EQ(c.read(8, 2), (std::vector<uint8_t>{0, 0}));
	EXPECT_TRUE(a.vmas().empty());
	ASSERT_EQ(b.vmas().size(), 1u);
	EXPECT_TRUE(b.vmas()[0].zapped.empty());
	ASSERT_EQ(c.vmas().size(), 1u);
	EXPECT_EQ(c.vmas()[0].zapped.size(), 1u);
}

class Model_ : public testing::TestWithParam<Config> {};

TEST_P(Model_, Stateful)
{
	const Config cfg = GetParam();
	check_property("model", cfg, [cfg] {
		// Small maps (every mapping fits in the reservation) and, where a
		// mapping of the whole map is free (a lazy level at 64 bits), the
		// big geometries of gen_big_map_spec.
		const bool lazy64 = cfg.patch != Patch::pre && cfg.arch == Arch::A64;
		MapSpec spec;
		if (lazy64 && *rc::gen::inRange(0, 4) == 0) {
			spec = *gen_big_map_spec();
		} else {
			spec = *gen_map_spec();
			spec.max_entries = std::min<uint32_t>(spec.max_entries, 64);
		}
		Model s0;
		s0.spec = spec;
		s0.visible = visible_pages(spec);
		s0.eager = cfg.patch == Patch::pre;
		s0.huge = lazy64 && s0.visible >= k4GPages;
		Sut sut(cfg, spec);
		// At most 24 commands a case: long enough for fork-after-split-
		// after-move stories, short enough for ASan.
		const auto cmds = *rc::gen::resize(
			24, rc::state::gen::commands(s0, rc::state::gen::execOneOfWithArgs<Mmap, Mmap, RangeOp, Mremap, Access,
											   Access, Access, Fork, Exit, Bpf, Bpf>()));
		rc::state::runAll(cmds, s0, sut);
	});
}

INSTANTIATE_TEST_SUITE_P(Props, Model_, testing::ValuesIn(all_configs()), ConfigName());

}  // namespace
}  // namespace fl::props
