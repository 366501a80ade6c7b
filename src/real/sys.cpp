// SPDX-License-Identifier: GPL-2.0-only
#include "real/sys.h"

#include <cerrno>
#include <cstring>
#include <sys/syscall.h>
#include <unistd.h>

namespace fl::sys {

namespace {

// The subset of union bpf_attr we use (include/uapi/linux/bpf.h), laid out
// by hand so no kernel header of a particular age is needed.
struct MapCreateAttr {
	uint32_t map_type, key_size, value_size, max_entries, map_flags;
	uint32_t inner_map_fd, numa_node;
	char map_name[16];
	uint32_t map_ifindex, btf_fd, btf_key_type_id, btf_value_type_id, btf_vmlinux_value_type_id;
	uint64_t map_extra;
};
struct ElemAttr {
	uint32_t map_fd, pad;
	uint64_t key, value, flags;  // user pointers as u64
};
constexpr int BPF_MAP_CREATE = 0, BPF_MAP_LOOKUP_ELEM = 1, BPF_MAP_UPDATE_ELEM = 2, BPF_MAP_FREEZE = 22;
constexpr size_t kAttrSize = 128;  // zero-filled tail: the kernel checks unused bytes are 0

int64_t ret(long r)
{
	return r == -1 ? -int64_t(errno) : int64_t(r);
}

// Addresses come back as unsigned long; on i386 a high address is a
// negative long that is not an error.
int64_t ret_addr(long r)
{
	return r == -1 ? -int64_t(errno) : int64_t(uint64_t((unsigned long)r));
}

int64_t bpf(int cmd, const void *attr, size_t size)
{
	alignas(8) unsigned char buf[kAttrSize] = {};
	std::memcpy(buf, attr, size);
	return ret(syscall(SYS_bpf, cmd, buf, kAttrSize));
}

uint64_t ptr(const void *p)
{
	return uint64_t(uintptr_t(p));
}

}  // namespace

int64_t bpf_map_create(const MapSpec &m)
{
	MapCreateAttr a = {};
	a.map_type = m.map_type;
	a.map_extra = m.map_extra;
	a.key_size = m.key_size;
	a.value_size = m.value_size;
	a.max_entries = m.max_entries;
	a.map_flags = m.map_flags;
	return bpf(BPF_MAP_CREATE, &a, sizeof a);
}

int64_t bpf_map_update(int fd, uint32_t index, const std::vector<uint8_t> &value, uint64_t flags)
{
	ElemAttr a = {uint32_t(fd), 0, ptr(&index), ptr(value.data()), flags};
	return bpf(BPF_MAP_UPDATE_ELEM, &a, sizeof a);
}

int64_t bpf_map_lookup(int fd, uint32_t index, std::vector<uint8_t> *value)
{
	ElemAttr a = {uint32_t(fd), 0, ptr(&index), ptr(value->data()), 0};
	return bpf(BPF_MAP_LOOKUP_ELEM, &a, sizeof a);
}

int64_t bpf_map_freeze(int fd)
{
	uint32_t a = uint32_t(fd);
	return bpf(BPF_MAP_FREEZE, &a, sizeof a);
}

int64_t mmap(uint64_t addr, uint64_t len, int prot, int flags, int fd, uint64_t pgoff, unsigned page_shift)
{
#ifdef SYS_mmap2
	// i386: mmap2 takes the offset in 4096-byte units in a 32-bit register.
	(void)page_shift;
	return ret_addr(syscall(SYS_mmap2, (unsigned long)addr, (unsigned long)len, prot, flags, fd,
				(unsigned long)(pgoff << (page_shift - 12))));
#else
	return ret_addr(syscall(SYS_mmap, (unsigned long)addr, (unsigned long)len, prot, flags, fd,
				(unsigned long)(pgoff << page_shift)));
#endif
}

int64_t munmap(uint64_t addr, uint64_t len)
{
	return ret(syscall(SYS_munmap, (unsigned long)addr, (unsigned long)len));
}

int64_t mprotect(uint64_t addr, uint64_t len, int prot)
{
	return ret(syscall(SYS_mprotect, (unsigned long)addr, (unsigned long)len, prot));
}

int64_t mremap(uint64_t addr, uint64_t old_len, uint64_t new_len, int flags, uint64_t new_addr)
{
	return ret_addr(syscall(SYS_mremap, (unsigned long)addr, (unsigned long)old_len, (unsigned long)new_len,
				flags, (unsigned long)new_addr));
}

int64_t madvise(uint64_t addr, uint64_t len, int advice)
{
	return ret(syscall(SYS_madvise, (unsigned long)addr, (unsigned long)len, advice));
}

}  // namespace fl::sys
