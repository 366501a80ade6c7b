// SPDX-License-Identifier: GPL-2.0-only
// Arithmetic properties of the mmap path:
//  MmapDecision     - mmap accepts iff the exact (128-bit) specification
//                     does, and every page of an accepted VMA faults in the
//                     data page vm_pgoff + i;
//  PagesFollowPgoff - the page behind every address equals, on this level
//                     and on eager `pre`, data page vm_pgoff + i, also after
//                     a split (munmap of a middle page), a same-size
//                     mremap move and a fork.
#include "check/execution.h"
#include "props/generators.h"
#include "props/property.h"
#include "props/spec.h"

namespace fl::props {
namespace {

using namespace fl::uapi;

Op mmap_op(int label, uint64_t len_pages, uint64_t pgoff, int prot, int flags)
{
	Op op;
	op.kind = OpKind::mmap;
	op.label = label;
	op.len = Num{len_pages, true};
	op.pgoff = pgoff;
	op.prot = prot;
	op.flags = flags;
	return op;
}

Op load_op(int label, uint64_t page, int proc = 0)
{
	Op op;
	op.kind = OpKind::load;
	op.addr.label = label;
	op.addr.offset = Num{page * kPage + 0xff0, false};
	op.proc = proc;
	return op;
}

// Data page index behind a user address (-1: no page; anything outside
// [0, visible) is a foreign page).
int64_t data_index(Machine &m, int pid, uint64_t addr)
{
	int64_t id = m.user_page_id(pid, addr);
	return id < 0 ? -1 : id - m.map_data_page_id(0);
}

class Arith : public testing::TestWithParam<Config> {};

TEST_P(Arith, MmapDecision)
{
	const Config cfg = GetParam();
	check_property("mmap-decision", cfg, [cfg] {
		const MapSpec spec = *gen_map_spec();
		const uint64_t visible = visible_pages(spec);
		const uint64_t npages = *rc::gen::weightedOneOf<uint64_t>(
			{{3, rc::gen::inRange<uint64_t>(1, 5)}, {2, gen_pages_near_edges(visible)}});
		const uint64_t pgoff = *rc::gen::weightedOneOf<uint64_t>(
			{{1, rc::gen::inRange<uint64_t>(0, 4)}, {3, gen_pages_near_edges(visible)}});

		const uint64_t len = delivered_len(cfg, npages << kPageShift);
		const uint64_t vm_pgoff = delivered_vm_pgoff(cfg, pgoff);
		const bool want = spec_accepts(vm_pgoff, len, visible, kPageShift);

		Program p;
		p.map = spec;
		int a = p.add_label("A");
		p.ops.push_back(mmap_op(a, npages, pgoff, PROT_READ, MAP_SHARED));
		// The pages worth checking: both ends of the VMA.
		const uint64_t n = len >> kPageShift;
		std::vector<uint64_t> pages;
		for (uint64_t i : {uint64_t(0), uint64_t(1), uint64_t(2), n - 2, n - 1})
			if (i < n && (pages.empty() || i > pages.back()))
				pages.push_back(i);
		for (uint64_t i : pages)
			p.ops.push_back(load_op(a, i));

		Execution ex(p, cfg);
		const Event &ev = ex.step();
		const bool got = ev.ret >= 0;
		FL_PROP_ASSERT(got == want, p, cfg,
			       std::string("mmap ") + (got ? "accepted" : "refused (" + errno_name(-ev.ret) + ")") +
				       " but the specification " + (want ? "accepts" : "refuses") +
				       ": vm_pgoff=" + std::to_string(vm_pgoff) + " len=" + std::to_string(len) +
				       " visible=" + std::to_string(visible));
		if (!got)
			return;
		uint64_t base = 0;
		ex.resolve(Addr{a, {}, false}, &base);
		for (uint64_t i : pages) {
			const Event &le = ex.step();
			FL_PROP_ASSERT(le.sig == 0, p, cfg, "signal " + std::to_string(le.sig) + " in page " + std::to_string(i));
			int64_t got_index = data_index(ex.machine(), 0, base + i * kPage);
			FL_PROP_ASSERT(got_index == int64_t(vm_pgoff + i), p, cfg,
				       "page " + std::to_string(i) + " is data page " + std::to_string(got_index) +
					       ", want " + std::to_string(vm_pgoff + i));
		}
		FL_PROP_ASSERT(!ex.violation(), p, cfg, "invariant: " + ex.violation().detail);
	});
}

// One mapping of n pages at pgoff; optionally split at page k, move the
// first piece into a reservation (same size), fork; then every remaining
// page, in every process, on this level and on `pre`, must be pgoff + i.
TEST_P(Arith, PagesFollowPgoff)
{
	const Config cfg = GetParam();
	check_property("pages-follow-pgoff", cfg, [cfg] {
		const MapSpec spec = *gen_map_spec();
		const uint64_t visible = visible_pages(spec);
		const uint64_t n = *rc::gen::inRange<uint64_t>(1, std::min<uint64_t>(visible, 6) + 1);
		const uint64_t from_end = *rc::gen::inRange<uint64_t>(0, visible - n + 1);
		const uint64_t pgoff = visible - n - from_end;  // shrinks toward the visible end
		const bool writable = *rc::gen::arbitrary<bool>() && !(spec.map_flags & BPF_F_RDONLY_PROG);
		const bool populate = *rc::gen::arbitrary<bool>();
		const bool split = n >= 3 && *rc::gen::arbitrary<bool>();
		const uint64_t k = split ? *rc::gen::inRange<uint64_t>(1, n - 1) : n;
		const bool move = *rc::gen::arbitrary<bool>();
		const uint64_t to = *rc::gen::inRange<uint64_t>(0, 8);
		const bool fork = *rc::gen::arbitrary<bool>();

		Program p;
		p.map = spec;
		int r = p.add_label("R"), a = p.add_label("A");
		Op res;
		res.kind = OpKind::reserve;
		res.label = r;
		res.len = Num{16, true};
		p.ops.push_back(res);
		p.ops.push_back(mmap_op(a, n, pgoff, PROT_READ | (writable ? PROT_WRITE : 0),
					MAP_SHARED | (populate ? MAP_POPULATE : 0)));
		if (split) {
			Op op;
			op.kind = OpKind::munmap;
			op.addr = Addr{a, Num{k, true}, false};
			op.len = Num{1, true};
			p.ops.push_back(op);
		}
		int first = a;  // label of pages [0, k)
		if (move) {
			Op op;
			op.kind = OpKind::mremap;
			op.addr = Addr{a, {}, false};
			op.len = op.new_len = Num{k, true};
			op.flags = MREMAP_MAYMOVE | MREMAP_FIXED;
			op.has_at = true;
			op.at = Addr{r, Num{to, true}, false};
			op.label = first = p.add_label("M");
			p.ops.push_back(op);
		}
		if (fork) {
			Op op;
			op.kind = OpKind::fork;
			p.ops.push_back(op);
		}
		// (label, page within label, data page it must be)
		struct Probe { int label; uint64_t page; uint64_t want; int proc; };
		std::vector<Probe> probes;
		for (int proc = 0; proc <= (fork ? 1 : 0); proc++)
			for (uint64_t i = 0; i < n; i++) {
				if (split && i == k)
					continue;
				int label = i < k ? first : a;
				probes.push_back({label, i, pgoff + i, proc});
				p.ops.push_back(load_op(label, i, proc));
			}

		Config eager = cfg;
		eager.patch = Patch::pre;
		Execution ex(p, cfg), ref(p, eager);
		while (!ex.done()) {
			const Event &e = ex.step();
			ref.step();
			FL_PROP_ASSERT(e.ret >= 0 && e.sig == 0, p, cfg,
				       "op " + std::to_string(ex.next_op()) + " failed: " + format_result(p.ops[ex.next_op() - 1], e));
		}
		FL_PROP_ASSERT(!ex.violation(), p, cfg, "invariant: " + ex.violation().detail);
		for (const Probe &pr : probes) {
			uint64_t addr = 0, raddr = 0;
			ex.resolve(Addr{pr.label, {}, false}, &addr);
			ref.resolve(Addr{pr.label, {}, false}, &raddr);
			int64_t got = data_index(ex.machine(), pr.proc, addr + pr.page * kPage);
			int64_t eager_got = data_index(ref.machine(), pr.proc, raddr + pr.page * kPage);
			FL_PROP_ASSERT(got == int64_t(pr.want) && eager_got == int64_t(pr.want), p, cfg,
				       "pid " + std::to_string(pr.proc) + " " + p.labels[pr.label] + "+" +
					       std::to_string(pr.page) + "p: data page " + std::to_string(got) +
					       " (eager " + std::to_string(eager_got) + "), want " + std::to_string(pr.want));
		}
	});
}

INSTANTIATE_TEST_SUITE_P(Props, Arith, testing::ValuesIn(all_configs()), ConfigName());

}  // namespace
}  // namespace fl::props
