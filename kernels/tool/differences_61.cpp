// SPDX-License-Identifier: GPL-2.0-only
#include "differences_61.h"

#include <cerrno>
#include <sys/mman.h>

namespace fl::kernels {

namespace {

const Difference61 kFreezePerm = {
	"freeze_perm",
	"Upstream map_freeze() starts with 'if (!(map_get_sys_perms(map, f) & FMODE_CAN_WRITE)) return -EPERM': "
	"a read-only fd, or any fd of an already frozen map (map_get_sys_perms masks FMODE_CAN_WRITE once "
	"frozen), gets EPERM. 6.1's map_freeze has no such check: the read-only fd's freeze succeeds and a "
	"second freeze gets EBUSY from 'if (READ_ONCE(map->frozen))'.",
};

const Difference61 kAnonNoexec = {
	"anon_noexec",
	"Since v6.15 anon_inodefs raises SB_I_NOEXEC, so do_mmap() refuses PROT_EXEC on a BPF map fd with "
	"EPERM (path_noexec). 6.1's anon inodes are executable-mappable: the mmap succeeds.",
};

}  // namespace

const Difference61 *classify_61(const Program &p, const Op &op, const Event &guest, const Event &port)
{
	// 0 only for a read-only fd; EBUSY for a frozen map (or one still mapped writable).
	bool rdonly_fd = p.map.map_flags & uapi::BPF_F_RDONLY;
	if (op.kind == OpKind::freeze && port.ret == -EPERM && (guest.ret == -EBUSY || (guest.ret == 0 && rdonly_fd)))
		return &kFreezePerm;
	if (op.kind == OpKind::mmap && (op.prot & PROT_EXEC) && port.ret == -EPERM && guest.ret != -EPERM)
		return &kAnonNoexec;
	return nullptr;
}

}  // namespace fl::kernels
