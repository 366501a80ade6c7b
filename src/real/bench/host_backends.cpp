// SPDX-License-Identifier: GPL-2.0-only
// The plain host backends: bpf-array (the host kernel's eager mmap-able
// array), bpf-arena (the kernel's own lazily faulted map), memfd (MAP_SHARED
// page cache, the userspace analogue) and anon (the floor).
#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include "real/bench/backend.h"
#include "real/bench/bpf_sys.h"
#include "real/bench/host_util.h"

namespace fl::bench {

namespace {

// mmap(addr, len, RW, flags, fd, 0); nullptr and *err ("what: strerror").
void *map_rw(void *addr, uint64_t len, int flags, int fd, const char *what, std::string *err)
{
	void *p = ::mmap(addr, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p != MAP_FAILED)
		return p;
	*err = errno_text(what);
	return nullptr;
}

bool unmap_len(void *addr, uint64_t len, std::string *err)
{
	if (::munmap(addr, len) == 0)
		return true;
	*err = errno_text("munmap");
	return false;
}

// mmap(NULL, len, RW, flags, fd, 0) and munmap: bpf-array, memfd and anon.
class PlainWorker final : public Worker {
public:
	PlainWorker(int fd, uint64_t len, int flags) : fd_(fd), len_(len), flags_(flags) {}
	void *map(bool populate, std::string *err) override
	{
		return map_rw(nullptr, len_, flags_ | (populate ? MAP_POPULATE : 0), fd_, "mmap", err);
	}
	bool unmap(void *addr, std::string *err) override { return unmap_len(addr, len_, err); }

private:
	int fd_;
	uint64_t len_;
	int flags_;
};

class PlainBackend final : public Backend {
public:
	PlainBackend(UniqueFd fd, uint64_t len, int flags) : fd_(std::move(fd)), len_(len), flags_(flags) {}
	std::unique_ptr<Worker> make_worker(std::string *) override
	{
		return std::make_unique<PlainWorker>(fd_.get(), len_, flags_);
	}

private:
	UniqueFd fd_;
	uint64_t len_;
	int flags_;
};

// An arena fixes its user address at the first mmap; every later mmap must
// pass that address and the full length (docs/toolchain.md#bpf-arena-mmap). So each worker
// owns an arena, makes its first mapping when created - before any producer
// runs, so no two arenas can be given the same free range - and remaps with
// MAP_FIXED_NOREPLACE: never over another thread's mapping.
class ArenaWorker final : public Worker {
public:
	ArenaWorker(UniqueFd fd, uint64_t len, void *first) : fd_(std::move(fd)), len_(len), addr_(first) {}
	~ArenaWorker() override
	{
		if (held_)
			::munmap(addr_, len_);
	}
	void *map(bool populate, std::string *err) override
	{
		if (held_) {  // the creation mapping: drop it, then map as every time
			::munmap(addr_, len_);
			held_ = false;
		}
		int flags = MAP_SHARED | MAP_FIXED_NOREPLACE | (populate ? MAP_POPULATE : 0);
		return map_rw(addr_, len_, flags, fd_.get(), "mmap(arena at its fixed address)", err);
	}
	bool unmap(void *addr, std::string *err) override { return unmap_len(addr, len_, err); }

private:
	UniqueFd fd_;
	uint64_t len_;
	void *addr_;
	bool held_ = true;
};

class ArenaBackend final : public Backend {
public:
	explicit ArenaBackend(const Geometry &g) : g_(g) {}
	std::unique_ptr<Worker> make_worker(std::string *err) override
	{
		int fd = bpf_create_arena(uint32_t(g_.pages()));
		if (fd < 0) {
			*err = std::string("bpf(BPF_MAP_CREATE arena): ") + strerror(-fd);
			return nullptr;
		}
		UniqueFd owned(fd);
		void *first = map_rw(nullptr, g_.mmap_bytes(), MAP_SHARED, fd, "mmap(arena)", err);
		if (!first)
			return nullptr;
		return std::make_unique<ArenaWorker>(std::move(owned), g_.mmap_bytes(), first);
	}

private:
	Geometry g_;
};

std::string privilege_hint(int err)
{
	return err == EPERM || err == EACCES ? " (bpf(2) needs root or CAP_BPF here)" : "";
}

}  // namespace

std::unique_ptr<Backend> make_host_backend(const std::string &name, const Geometry &g, std::string *skip)
{
	const uint64_t len = g.mmap_bytes();
	if (name == "anon")
		return std::make_unique<PlainBackend>(UniqueFd(), len, MAP_PRIVATE | MAP_ANONYMOUS);
	if (name == "memfd") {
		UniqueFd fd = make_filled_memfd("faultline-bench", g, skip);
		return fd ? std::make_unique<PlainBackend>(std::move(fd), len, MAP_SHARED) : nullptr;
	}
	if (name == "bpf-array") {
		int fd = bpf_create_mmapable_array(g.max_entries());
		if (fd < 0) {
			*skip = std::string("bpf-array: bpf(BPF_MAP_CREATE): ") + strerror(-fd) + privilege_hint(-fd);
			return nullptr;
		}
		return std::make_unique<PlainBackend>(UniqueFd(fd), len, MAP_SHARED);
	}
	if (name == "bpf-arena") {
		if (g.pages() > (1u << 20)) {
			*skip = "bpf-arena: an arena maps at most 4 GiB";
			return nullptr;
		}
		/* a host whose bpf(2) works but refuses arena maps (the oracle's probe) */
		std::string why;
		if (host_refuses_arena(&why)) {
			*skip = "bpf-arena: " + why;
			return nullptr;
		}
		/* probe once here, so a missing privilege is a skip, not a run error */
		int fd = bpf_create_arena(uint32_t(g.pages()));
		if (fd < 0) {
			*skip = std::string("bpf-arena: bpf(BPF_MAP_CREATE arena): ") + strerror(-fd) + privilege_hint(-fd);
			return nullptr;
		}
		close(fd);
		return std::make_unique<ArenaBackend>(g);
	}
	*skip = "unknown backend " + name;
	return nullptr;
}

}  // namespace fl::bench
