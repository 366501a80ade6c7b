// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/port_oracle.h"

#include <cstring>

#include "real/bench/host_util.h"

namespace fl::bench {

PortOracle::PortOracle(const PortLevel &lvl, const Geometry &g, std::string *err) : g_(g)
{
	Config cfg;
	cfg.arch = lvl.arch;
	cfg.patch = lvl.patch;
	cfg.door = lvl.door;
	m_ = make_machine(cfg);
	if (m_->page_size() != g.page_size) {
		*err = "the port runs 4K pages only here";
		return;
	}
	MapSpec spec;
	spec.max_entries = g.max_entries();
	int64_t fd = m_->map_create(spec);
	if (fd < 0) {
		*err = "the " + std::string(to_string(lvl.arch)) + "-bit port cannot create a map of " +
		       std::to_string(g.map_bytes) + " bytes (errno " + std::to_string(-fd) + ")";
		return;
	}
	// Same stamps as the real backing store, so loads compare byte for byte.
	for (uint64_t i = 0; i < g.pages(); i++) {
		uint64_t stamp = page_stamp(i);
		std::vector<uint8_t> bytes(sizeof(stamp));
		memcpy(bytes.data(), &stamp, sizeof(stamp));
		m_->kernel_poke(i * g.page_size, bytes);
	}
}

int64_t PortOracle::mmap(uint64_t pgoff, uint64_t len, bool populate)
{
	int flags = uapi::MAP_SHARED | (populate ? uapi::MAP_POPULATE : 0);
	return m_->mmap(0, 0, len, uapi::PROT_READ | uapi::PROT_WRITE, flags, true, pgoff);
}

int64_t PortOracle::munmap(uint64_t addr, uint64_t len)
{
	return m_->munmap(0, addr, len);
}

int64_t PortOracle::madvise_dontneed(uint64_t addr, uint64_t len)
{
	return m_->madvise(0, addr, len, uapi::MADV_DONTNEED);
}

Decision PortOracle::decide(uint64_t vma_start, uint64_t vma_pgoff, uint64_t addr)
{
	Decision d;
	// A read fault: ->fault picks the same page for reads and writes, and a
	// read leaves the map's data alone.
	Access a = m_->load(0, addr, 1);
	Violation v = m_->take_op_violation();
	if (a.sig) {
		d.kind = Decision::refuse_sigbus;
		d.detail = a.sig == uapi::sigbus ? "the port raises SIGBUS" : "the port raises SIGSEGV";
		return d;
	}
	uint64_t linear = vma_pgoff + (addr - vma_start) / g_.page_size;
	if (linear < g_.pages() && m_->user_page_id(0, addr) == m_->map_data_page_id(linear)) {
		d.kind = Decision::install;
		d.page = linear;
		return d;
	}
	d.kind = Decision::refuse_other_page;
	if (!v)  // name the page: the invariants say what it is (refusals only: O(map))
		v = m_->check_invariants();
	d.detail = "the port maps a page other than data page " + std::to_string(linear) +
		   (v ? std::string(" (") + to_string(v.what) + ": " + v.detail + ")" : std::string());
	return d;
}

}  // namespace fl::bench
