// SPDX-License-Identifier: GPL-2.0-only
// The uffd backend: real page faults driving the port's decisions.
//
// The map's data lives in a memfd (every data page in the page cache,
// stamped). Each mapping is a MAP_SHARED mmap of the memfd at the requested
// pgoff, registered with userfaultfd in MINOR mode (a page that is in the page
// cache: the data pages) and MISSING mode (a hole: offsets past the data,
// which the file is grown sparsely to reach, so that shmem's own
// beyond-EOF SIGBUS never answers in the port's place). Fault-around is off
// for uffd-minor VMAs, so every first touch of a page is one message.
//
// A handler thread reads each fault, asks the PortOracle (the same mapping
// mirrored in the simulated kernel) and either resolves it with
// UFFDIO_CONTINUE - which can only map the page cache page at the faulting
// file offset, so it is done only when the port picks exactly that data
// page - or refuses it with UFFDIO_POISON: a poison PTE marker, on which the
// woken toucher's retried access takes a real SIGBUS (BUS_MCEERR_AR; the
// kernel logs an "MCE: Killing ..." line for it). So no page the port would
// not install is ever installed. MAP_POPULATE is MADV_POPULATE_READ after
// registration (populating before would bypass the port); patch level pre
// populates every mapping that way, as remap_vmalloc_range() does.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "real/bench/backend.h"
#include "real/bench/host_util.h"
#include "real/bench/port_oracle.h"

namespace fl::bench {

struct UffdCounts {
	uint64_t faults = 0, continued = 0, refused = 0;
	std::string last_refusal;
};

class UffdBackend final : public Backend {
public:
	// nullptr and *skip when userfaultfd, MINOR shmem faults or poison are
	// unavailable (unprivileged, old kernel), or the port cannot hold the map.
	static std::unique_ptr<UffdBackend> create(const Geometry &, const PortLevel &, std::string *skip);
	~UffdBackend() override;

	std::unique_ptr<Worker> make_worker(std::string *err) override;

	// One mapping of the map at pgoff (in pages), len bytes. nullptr and
	// *err when the port's mmap refuses (with its errno) or the host fails.
	void *map_at(uint64_t pgoff, uint64_t len, bool populate, std::string *err);
	bool unmap(void *addr, std::string *err);
	// MADV_DONTNEED on [addr, addr+len) of a mapping, real and simulated.
	bool dontneed(void *addr, uint64_t len, std::string *err);

	UffdCounts counts() const;
	PortOracle &oracle() { return oracle_; }

private:
	struct Vma {
		uint64_t len, pgoff, sim_addr;
	};
	UffdBackend(const Geometry &, const PortLevel &, std::string *err);
	void handler_loop();
	void handle_fault(uint64_t addr);
	const Vma *vma_of(uint64_t addr, uint64_t *start) const;  // under mu_

	Geometry g_;
	PortLevel lvl_;
	PortOracle oracle_;
	UniqueFd memfd_, uffd_, stop_;
	uint64_t file_bytes_ = 0;
	mutable std::mutex mu_;  // oracle_, vmas_, file_bytes_, counts_
	std::map<uint64_t, Vma> vmas_;  // by real start address
	UffdCounts counts_;
	std::thread handler_;
};

}  // namespace fl::bench
