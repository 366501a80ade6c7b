// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/uffd_backend.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace fl::bench {

namespace {

// Newer than Debian's 6.1 UAPI headers (Linux 6.6).
constexpr uint64_t kFeaturePoison = 1ull << 14;
struct uffdio_poison_ {
	struct uffdio_range range;
	uint64_t mode;
	int64_t updated;
};
constexpr unsigned long kUffdioPoison = _IOWR(UFFDIO, 0x08, struct uffdio_poison_);

std::string errno_skip(const char *what)
{
	std::string s = errno_text(what);
	if (errno == EPERM || errno == EACCES)
		s += " (userfaultfd needs root here: vm.unprivileged_userfaultfd = 0)";
	return s;
}

}  // namespace

std::unique_ptr<UffdBackend> UffdBackend::create(const Geometry &g, const PortLevel &lvl, std::string *skip)
{
	std::string err;
	std::unique_ptr<UffdBackend> b(new UffdBackend(g, lvl, &err));
	if (!err.empty()) {
		*skip = "uffd: " + err;
		return nullptr;
	}
	return b;
}

UffdBackend::UffdBackend(const Geometry &g, const PortLevel &lvl, std::string *err)
	: g_(g), lvl_(lvl), oracle_(lvl, g, err)
{
	if (!err->empty())
		return;
	memfd_ = make_filled_memfd("faultline-uffd", g, err);
	if (!memfd_)
		return;
	file_bytes_ = g.mmap_bytes();
	uffd_ = UniqueFd(int(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK)));
	if (!uffd_) {
		*err = errno_skip("userfaultfd");
		return;
	}
	struct uffdio_api api = {};
	api.api = UFFD_API;
	api.features = UFFD_FEATURE_MINOR_SHMEM | UFFD_FEATURE_MISSING_SHMEM | kFeaturePoison;
	if (ioctl(uffd_.get(), UFFDIO_API, &api) != 0) {
		*err = errno_text("UFFDIO_API (minor shmem faults and poison need Linux >= 6.6)");
		return;
	}
	stop_ = UniqueFd(eventfd(0, EFD_CLOEXEC));
	if (!stop_) {
		*err = errno_text("eventfd");
		return;
	}
	handler_ = std::thread([this] { handler_loop(); });
}

UffdBackend::~UffdBackend()
{
	if (handler_.joinable()) {
		uint64_t one = 1;
		(void)!write(stop_.get(), &one, sizeof(one));
		handler_.join();
	}
	std::lock_guard lk(mu_);
	for (auto &[start, vma] : vmas_)
		::munmap(reinterpret_cast<void *>(start), vma.len);
}

void *UffdBackend::map_at(uint64_t pgoff, uint64_t len, bool populate, std::string *err)
{
	const bool eager = lvl_.patch == Patch::pre;
	if (pgoff > (uint64_t(INT64_MAX) - len) / g_.page_size) {
		*err = "mmap: pgoff " + std::to_string(pgoff) + " is beyond the host's file offsets";
		return nullptr;
	}
	void *p;
	{
		std::lock_guard lk(mu_);
		int64_t sim = oracle_.mmap(pgoff, len, populate);
		if (sim < 0) {
			errno = int(-sim);
			*err = errno_text("mmap (refused by the port)");
			return nullptr;
		}
		// Offsets past the data must fault into uffd (MISSING), not hit
		// shmem's beyond-EOF SIGBUS: grow the file sparsely to cover them.
		uint64_t end = pgoff * g_.page_size + len;
		if (end > file_bytes_) {
			if (ftruncate(memfd_.get(), off_t(end)) != 0) {
				*err = errno_text("ftruncate(memfd)");
				oracle_.munmap(uint64_t(sim), len);
				return nullptr;
			}
			file_bytes_ = end;
		}
		p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_.get(), off_t(pgoff * g_.page_size));
		if (p == MAP_FAILED) {
			*err = errno_text("mmap(memfd)");
			oracle_.munmap(uint64_t(sim), len);
			return nullptr;
		}
		struct uffdio_register reg = {};
		reg.range.start = reinterpret_cast<uint64_t>(p);
		reg.range.len = len;
		reg.mode = UFFDIO_REGISTER_MODE_MINOR | UFFDIO_REGISTER_MODE_MISSING;
		if (ioctl(uffd_.get(), UFFDIO_REGISTER, &reg) != 0) {
			*err = errno_text("UFFDIO_REGISTER");
			::munmap(p, len);
			oracle_.munmap(uint64_t(sim), len);
			return nullptr;
		}
		vmas_[reinterpret_cast<uint64_t>(p)] = Vma{len, pgoff, uint64_t(sim)};
	}
	// Outside the lock: every page of the populate faults into the handler.
	// Errors are ignored, as mm_populate() ignores them.
	if (populate || eager)
		(void)madvise(p, len, MADV_POPULATE_READ);
	return p;
}

bool UffdBackend::unmap(void *addr, std::string *err)
{
	std::lock_guard lk(mu_);
	auto it = vmas_.find(reinterpret_cast<uint64_t>(addr));
	if (it == vmas_.end()) {
		*err = "munmap: not a uffd mapping";
		return false;
	}
	Vma vma = it->second;
	vmas_.erase(it);
	oracle_.munmap(vma.sim_addr, vma.len);
	if (::munmap(addr, vma.len) != 0) {
		*err = errno_text("munmap");
		return false;
	}
	return true;
}

bool UffdBackend::dontneed(void *addr, uint64_t len, std::string *err)
{
	std::lock_guard lk(mu_);
	uint64_t start;
	const Vma *vma = vma_of(reinterpret_cast<uint64_t>(addr), &start);
	if (!vma) {
		*err = "madvise: not a uffd mapping";
		return false;
	}
	oracle_.madvise_dontneed(vma->sim_addr + (reinterpret_cast<uint64_t>(addr) - start), len);
	if (madvise(addr, len, MADV_DONTNEED) != 0) {
		*err = errno_text("madvise(MADV_DONTNEED)");
		return false;
	}
	return true;
}

UffdCounts UffdBackend::counts() const
{
	std::lock_guard lk(mu_);
	return counts_;
}

const UffdBackend::Vma *UffdBackend::vma_of(uint64_t addr, uint64_t *start) const
{
	auto it = vmas_.upper_bound(addr);
	if (it == vmas_.begin())
		return nullptr;
	--it;
	if (addr >= it->first + it->second.len)
		return nullptr;
	*start = it->first;
	return &it->second;
}

void UffdBackend::handler_loop()
{
	struct pollfd fds[2] = {{uffd_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
	for (;;) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			return;
		if (fds[1].revents)
			return;
		struct uffd_msg msg;
		while (read(uffd_.get(), &msg, sizeof(msg)) == ssize_t(sizeof(msg)))
			if (msg.event == UFFD_EVENT_PAGEFAULT)
				handle_fault(msg.arg.pagefault.address & ~(g_.page_size - 1));
	}
}

void UffdBackend::handle_fault(uint64_t addr)
{
	std::lock_guard lk(mu_);  // also orders the ioctls with map/unmap
	counts_.faults++;
	uint64_t start;
	const Vma *vma = vma_of(addr, &start);
	if (!vma) {
		counts_.last_refusal = "fault outside every known mapping";
	} else {
		Decision d = oracle_.decide(vma->sim_addr, vma->pgoff, vma->sim_addr + (addr - start));
		if (d.kind == Decision::install) {
			struct uffdio_continue c = {};
			c.range.start = addr;
			c.range.len = g_.page_size;
			// EEXIST: another thread's fault on the same page won the race.
			if (ioctl(uffd_.get(), UFFDIO_CONTINUE, &c) == 0 || errno == EEXIST) {
				counts_.continued++;
				return;
			}
			counts_.last_refusal = errno_text("UFFDIO_CONTINUE");
		} else {
			counts_.last_refusal = d.detail;
		}
	}
	// Refuse: a poison marker makes the retried access SIGBUS. If even that
	// fails, wake the toucher without a page: it refaults (and we refuse again).
	counts_.refused++;
	uffdio_poison_ poison = {};
	poison.range.start = addr;
	poison.range.len = g_.page_size;
	if (ioctl(uffd_.get(), kUffdioPoison, &poison) != 0 && errno != EEXIST) {
		counts_.last_refusal += "; " + errno_text("UFFDIO_POISON");
		struct uffdio_range r = {addr, g_.page_size};
		ioctl(uffd_.get(), UFFDIO_WAKE, &r);
	}
}

std::unique_ptr<Worker> UffdBackend::make_worker(std::string *)
{
	class UffdWorker final : public Worker {
	public:
		explicit UffdWorker(UffdBackend *b) : b_(b) {}
		void *map(bool populate, std::string *err) override
		{
			return b_->map_at(0, b_->g_.mmap_bytes(), populate, err);
		}
		bool unmap(void *addr, std::string *err) override { return b_->unmap(addr, err); }

	private:
		UffdBackend *b_;
	};
	return std::make_unique<UffdWorker>(this);
}

}  // namespace fl::bench
