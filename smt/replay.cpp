// SPDX-License-Identifier: GPL-2.0-only
// Every counterexample is run on the machine: the map from the model's
// geometry, `mmap A len=Np pgoff=X prot=r` through the assumption's door,
// and a load at the offending page. run_differential then says whether the
// port shows what the solver claims: a violation (foreign_page,
// page_identity, ...), a SIGBUS, a refusal, or an eager/lazy difference.
#include "smt/replay.h"

#include <cinttypes>
#include <csignal>
#include <cstdio>

#include "check/differential.h"
#include "check/trace.h"

namespace fl::smt {

static std::string hex(uint64_t v)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
	return buf;
}

Replay replay(const Setup &st, const Values &v)
{
	Replay r;
	const bool bypass = true;  /* the geometry replay_row solved for */
	uint64_t pgoff = v.vm_pgoff, len = v.len, page = v.page;
	r.values = "value_size=" + std::to_string(v.value_size) + " max_entries=" + std::to_string(v.max_entries) +
		   " bypass_spec_v1=1 vm_pgoff=" + hex(pgoff) + " len=" + hex(len) + " page=" + hex(page);
	if (!st.level) {
		r.what = "no replay (level-independent)";
		return r;
	}

	Config cfg;
	cfg.arch = st.bits == 32 ? Arch::A32 : Arch::A64;
	cfg.patch = *st.level;
	cfg.page_shift = st.shift;
	cfg.door = st.assume == Assume::anon ? Door::anon
		   : st.assume == Assume::regular ? Door::regular
						   : Door::direct;
	cfg.bypass_spec_v1 = bypass;

	Program &p = r.program;
	p.header = {cfg.arch, cfg.patch, cfg.page_shift, cfg.door, cfg.bypass_spec_v1};
	p.map.value_size = v.value_size;
	p.map.max_entries = v.max_entries;
	Op mm;
	mm.kind = OpKind::mmap;
	mm.label = p.add_label("A");
	mm.len = {(len + (1ull << st.shift) - 1) >> st.shift, true};  /* do_mmap's PAGE_ALIGN */
	mm.pgoff = pgoff;  /* in range for the door: the narrowing keeps it */
	mm.prot = uapi::PROT_READ;
	mm.flags = uapi::MAP_SHARED;
	p.ops.push_back(mm);
	if (st.obligation != 2) {
		Op ld;
		ld.kind = OpKind::load;
		ld.addr = {mm.label, {page, true}, false};
		ld.size = 8;
		p.ops.push_back(ld);
	}

	RunReport rep = run_differential(p, cfg);
	if (rep.trace.map_ret) {
		r.what = "map create " + errno_name(rep.trace.map_ret);
		return r;
	}
	int64_t ret = rep.trace.events.empty() ? 0 : rep.trace.events[0].ret;
	std::string mmap_res = ret < 0 ? "mmap " + errno_name(ret) : "mmap ok";
	if (st.obligation == 2) {  /* the model: refused although inside */
		r.reproduced = ret < 0;
		r.what = mmap_res;
		return r;
	}
	if (rep.verdict.kind != Verdict::ok) {
		r.reproduced = true;
		r.what = rep.verdict.str();
	} else if (rep.reference_verdict.kind != Verdict::ok && st.obligation == 3) {
		r.reproduced = true;
		r.what = "pre: " + rep.reference_verdict.str();
	} else if (ret >= 0 && rep.trace.events.size() > 1 && rep.trace.events[1].sig) {
		r.reproduced = st.obligation != 3;  /* kaddr hit no page: vmalloc_to_page NULL */
		r.what = "load SIG" + std::string(rep.trace.events[1].sig == SIGBUS ? "BUS" : "SEGV");
	} else {
		r.what = mmap_res + ", load ok";
	}
	return r;
}

}  // namespace fl::smt
