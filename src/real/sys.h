// SPDX-License-Identifier: GPL-2.0-only
// Raw system calls for the host executor: bpf(2) on one array map and the
// memory-management calls, each returning a value >= 0 or -errno, the way
// the machine's syscalls do. Raw syscall(2), no libbpf and no glibc
// argument checks, so the kernel sees exactly what the Program says, and
// the code links statically for x86_64 and i386 alike.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/machine.h"  // MapSpec and the uapi constants (header-only parts)

namespace fl::sys {

int64_t bpf_map_create(const MapSpec &);
int64_t bpf_map_update(int fd, uint32_t index, const std::vector<uint8_t> &value, uint64_t flags);
int64_t bpf_map_lookup(int fd, uint32_t index, std::vector<uint8_t> *value);
int64_t bpf_map_freeze(int fd);

// pgoff is in 4096-byte units on i386 (mmap2) and in pages everywhere
// (turned into a byte offset, modulo 2^64, for x86_64's mmap).
int64_t mmap(uint64_t addr, uint64_t len, int prot, int flags, int fd, uint64_t pgoff, unsigned page_shift);
int64_t munmap(uint64_t addr, uint64_t len);
int64_t mprotect(uint64_t addr, uint64_t len, int prot);
int64_t mremap(uint64_t addr, uint64_t old_len, uint64_t new_len, int flags, uint64_t new_addr);
int64_t madvise(uint64_t addr, uint64_t len, int advice);

}  // namespace fl::sys
