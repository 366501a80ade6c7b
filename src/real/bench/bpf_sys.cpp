// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/bpf_sys.h"

#include <cerrno>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "real/host_executor.h"

namespace fl::bench {

namespace {

constexpr uint32_t kBpfMapTypeArena = 33;

int map_create(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t max_entries)
{
	union bpf_attr attr = {};
	attr.map_type = type;
	attr.key_size = key_size;
	attr.value_size = value_size;
	attr.max_entries = max_entries;
	attr.map_flags = BPF_F_MMAPABLE;
	long fd = syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : int(fd);
}

}  // namespace

int bpf_create_mmapable_array(uint32_t max_entries)
{
	return map_create(BPF_MAP_TYPE_ARRAY, 4, 8, max_entries);
}

int bpf_create_arena(uint32_t pages)
{
	return map_create(kBpfMapTypeArena, 0, 0, pages);
}

bool host_refuses_arena(std::string *reason)
{
	return host_bpf_available(nullptr) && !host_arena_available(reason);
}

}  // namespace fl::bench
