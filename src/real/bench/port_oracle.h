// SPDX-License-Identifier: GPL-2.0-only
// The port as a fault oracle for real page faults. It keeps one simulated
// kernel (sim/Machine at a patch level and width) holding an array map of
// the bench geometry, and mirrors every real VMA there (same pgoff, length,
// MAP_POPULATE). For a real fault it replays the access in the simulated
// process and asks the machine which page now backs the address:
//   - the map data page the real mapping would show there (the linear one,
//     pgoff + offset) -> install it (UFFDIO_CONTINUE);
//   - SIGBUS (the port refused: no ->fault, vmalloc_to_page() failed) or any
//     other page (e.g. v1's wrapped offset lands on the header) -> refuse.
// Not thread-safe: the caller serialises.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "real/bench/backend.h"
#include "sim/machine.h"

namespace fl::bench {

struct Decision {
	enum Kind { install, refuse_sigbus, refuse_other_page } kind = refuse_sigbus;
	uint64_t page = 0;   // the data page to install (install)
	std::string detail;  // why not (refusals)
};

class PortOracle {
public:
	// map_bytes: the array's value bytes (the seed's sizing). *err on failure
	// (e.g. the 32-bit kernel's vmalloc space cannot hold the map).
	PortOracle(const PortLevel &, const Geometry &, std::string *err);

	// mmap of the map at pgoff: the simulated user address, or -errno.
	int64_t mmap(uint64_t pgoff, uint64_t len, bool populate);
	int64_t munmap(uint64_t addr, uint64_t len);
	int64_t madvise_dontneed(uint64_t addr, uint64_t len);
	// A user access at sim address `addr` of a VMA mapping the map from
	// `vma_pgoff` at `vma_start`: which page does the port put there?
	Decision decide(uint64_t vma_start, uint64_t vma_pgoff, uint64_t addr);

	Machine &machine() { return *m_; }
	Config config() const { return m_->config(); }

private:
	std::unique_ptr<Machine> m_;
	Geometry g_;
};

}  // namespace fl::bench
