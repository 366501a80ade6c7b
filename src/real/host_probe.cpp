// SPDX-License-Identifier: GPL-2.0-only
#include "real/host_probe.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "real/host_executor.h"
#include "real/sys.h"

namespace fl {

namespace {

std::string errno_text(int64_t neg)
{
	return std::strerror(int(-neg));
}

struct Probe {
	bool available = false;
	std::string reason;
	std::optional<bool> bypass;
};

const Probe &probe()
{
	static const Probe p = [] {
		Probe r;
		MapSpec small;
		small.max_entries = 1;
		int64_t fd = sys::bpf_map_create(small);
		if (fd < 0) {
			r.reason = "bpf(BPF_MAP_CREATE): " + errno_text(fd);
			return r;
		}
		int64_t a = sys::mmap(0, 4096, uapi::PROT_READ, uapi::MAP_SHARED, int(fd), 0, 12);
		close(int(fd));
		if (a < 0) {
			r.reason = "mmap of a BPF array: " + errno_text(a);
			return r;
		}
		sys::munmap(uint64_t(a), 4096);
		r.available = true;
		// kernel/bpf/arraymap.c array_map_alloc(): without the bypass,
		// max_entries is rounded up to a power of two in u32 and
		// 0xffffffff wraps to 0: -E2BIG before anything is allocated.
		// With it (bpf_bypass_spec_v1(): cpu_mitigations_off() ||
		// CAP_PERFMON, which root has), 0xffffffff * 4096 bytes go to
		// vmalloc, which refuses more than totalram at once: -ENOMEM.
		// Observed on the 6.18 host as root: -ENOMEM, i.e. bypass.
		MapSpec huge;
		huge.value_size = 4096;
		huge.max_entries = 0xffffffffu;
		int64_t h = sys::bpf_map_create(huge);
		if (h >= 0)
			close(int(h));
		else if (h == -E2BIG)
			r.bypass = false;
		else if (h == -ENOMEM)
			r.bypass = true;
		else
			r.reason = "spec_v1 probe: unexpected " + errno_text(h);
		return r;
	}();
	return p;
}

bool answer(const Probe &p, std::string *reason)
{
	if (!p.available && reason)
		*reason = p.reason;
	return p.available;
}

// Whether the host creates a BPF_MAP_TYPE_ARENA at all; probed on first
// use only, so that runs without arena Programs never make one. A kernel
// before 6.9 or without the JIT's arena support refuses with -EINVAL or
// -EOPNOTSUPP. The 6.18.44-fc CI host refuses with -EPERM although root
// has CAP_BPF and creates arrays, ringbufs and cpumaps (upstream's
// map_create() gates the arena in the same CAP_BPF case as the cpumap),
// with no BPF LSM program or seccomp filter loaded, and before
// arena_map_alloc() reads the attributes (key_size=1 also gets -EPERM, not
// -EINVAL): a policy of that vendor kernel.
const Probe &arena_probe()
{
	static const Probe p = [] {
		Probe r;
		if (const char *forced = std::getenv(kRefuseArenaEnv); forced && *forced) {
			r.reason = std::string("the host refuses BPF_MAP_TYPE_ARENA (") + kRefuseArenaEnv + " is set)";
			return r;
		}
		if (!host_bpf_available(&r.reason))
			return r;
		MapSpec arena;  // 4 pages, BPF_F_MMAPABLE (the default), map_extra 0: valid on every arena kernel
		arena.map_type = uapi::BPF_MAP_TYPE_ARENA;
		arena.key_size = arena.value_size = 0;
		arena.max_entries = 4;
		int64_t fd = sys::bpf_map_create(arena);
		if (fd < 0) {
			r.reason = "the host refuses BPF_MAP_TYPE_ARENA (-" + errno_name(-fd) + ")";
			return r;
		}
		close(int(fd));
		r.available = true;
		return r;
	}();
	return p;
}

}  // namespace

bool host_arena_available(std::string *reason)
{
	return answer(arena_probe(), reason);
}

bool host_bpf_available(std::string *reason)
{
	return answer(probe(), reason);
}

std::optional<bool> host_bypass_spec_v1(std::string *reason)
{
	const Probe &p = probe();
	if (!p.bypass && reason)
		*reason = p.reason;
	return p.bypass;
}

namespace real {

bool map_size_allowed(const MapSpec &m, std::string *reason)
{
	// Refused before array_map_alloc() allocates (array_map_alloc_check):
	if (m.key_size != 4 || m.value_size == 0 || m.max_entries == 0 || m.value_size > 0x7fffffffu)
		return true;
	uint64_t entries = m.max_entries;
	if (!host_bypass_spec_v1(nullptr).value_or(false)) {
		uint64_t pow2 = 1;
		while (pow2 < entries)
			pow2 <<= 1;
		if (pow2 > 0x80000000u)
			return true;  // -E2BIG
		entries = pow2;
	}
	const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
	const uint64_t elem = (uint64_t(m.value_size) + 7) & ~uint64_t(7);
	const uint64_t bytes = page + (entries * elem + page - 1) / page * page;
	struct sysinfo si = {};
	sysinfo(&si);
	const uint64_t ram = uint64_t(si.totalram) * si.mem_unit;
	const uint64_t machine_ram = sizeof(long) == 8 ? kMachineRam64 : kMachineRam32;
	if (bytes <= kMaxHostMapBytes || (bytes > ram && bytes > machine_ram))
		return true;
	if (reason)
		*reason = "a map of " + std::to_string(bytes >> 20) + " MiB (the executor allocates at most " +
			  std::to_string(kMaxHostMapBytes >> 20) + " MiB, and the machine's " +
			  std::to_string(machine_ram >> 20) + " MiB of RAM would hold it)";
	return false;
}

}  // namespace real

}  // namespace fl
