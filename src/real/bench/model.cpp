// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/model.h"

namespace fl::bench {

namespace {

Stats operator-(const Stats &a, const Stats &b)
{
	return Stats{a.faults - b.faults,
		     a.fault_handlers - b.fault_handlers,
		     a.map_pages_calls - b.map_pages_calls,
		     a.vma_lock_retries - b.vma_lock_retries,
		     a.ptes_installed - b.ptes_installed,
		     a.ptes_zapped - b.ptes_zapped,
		     a.ptl_locks - b.ptl_locks,
		     a.lost_races - b.lost_races,
		     a.last_fault_around};
}

}  // namespace

ModelCounts model_iteration(const Geometry &g, const Pattern &pat, const PortLevel &lvl, std::string *err)
{
	Config cfg;
	cfg.arch = lvl.arch;
	cfg.patch = lvl.patch;
	cfg.door = lvl.door;
	auto m = make_machine(cfg);
	MapSpec spec;
	spec.max_entries = g.max_entries();
	if (int64_t fd = m->map_create(spec); fd < 0) {
		*err = "model: the " + std::string(to_string(lvl.arch)) + "-bit port cannot create a map of " +
		       std::to_string(g.map_bytes) + " bytes (errno " + std::to_string(-fd) + ")";
		return {};
	}
	ModelCounts c;
	const Stats before = m->stats();
	int flags = uapi::MAP_SHARED | (pat.populate ? uapi::MAP_POPULATE : 0);
	int64_t addr = m->mmap(0, 0, g.mmap_bytes(), uapi::PROT_READ | uapi::PROT_WRITE, flags, true, 0);
	if (addr < 0) {
		*err = "model: the port refuses the mmap (errno " + std::to_string(-addr) + ")";
		return {};
	}
	c.addr = uint64_t(addr);
	c.ptes_at_mmap = m->stats().ptes_installed - before.ptes_installed;
	for (uint64_t i = 0; i < pat.touch_pages; i++)
		if (m->load(0, uint64_t(addr) + i * g.page_size, 1).sig) {
			*err = "model: touching page " + std::to_string(i) + " raised a signal";
			return {};
		}
	m->munmap(0, uint64_t(addr), g.mmap_bytes());
	c.op = m->stats() - before;
	return c;
}

std::string model_line(const ModelCounts &c, const PortLevel &lvl)
{
	const Stats &s = c.op;
	auto n = [](uint64_t v) { return std::to_string(v); };
	return std::string("arraymap-mmap: model ") + to_string(lvl.patch) + "/arch" + to_string(lvl.arch) +
	       ": per op: ptes at mmap " + n(c.ptes_at_mmap) + ", faults " + n(s.faults) + " (" +
	       n(s.vma_lock_retries) + " vma-lock retries), fault handlers " + n(s.fault_handlers) +
	       ", map_pages " + n(s.map_pages_calls) + ", ptes installed " + n(s.ptes_installed) + ", zapped " +
	       n(s.ptes_zapped) + ", ptl locks " + n(s.ptl_locks);
}

}  // namespace fl::bench
