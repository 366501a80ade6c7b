// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/common.h"

namespace fl::libarena {

// libbpf's bpf_object__load for an arena map: BPF_MAP_CREATE, then mmap the
// whole arena (user space picks user_vm_start).
Arena::Arena()
{
	Config c;  // pre/arch64/4k: the arena map does not depend on the array patch
	m_ = make_machine(c);
	MapSpec spec;
	spec.map_type = uapi::BPF_MAP_TYPE_ARENA;
	spec.key_size = spec.value_size = 0;
	spec.max_entries = ARENA_PAGES;
	spec.map_flags = uapi::BPF_F_MMAPABLE;
	if (m_->map_create(spec) < 0)
		return;
	int64_t r = m_->mmap(0, 0, u64(ARENA_PAGES) * __PAGE_SIZE, uapi::PROT_READ | uapi::PROT_WRITE,
			     uapi::MAP_SHARED, true, 0);
	if (r > 0)
		base_ = u64(r);
}

u8 Arena::load8(u64 a)
{
	u8 v = 0;
	m_->arena_kernel_read(a, &v, 1);
	return v;
}

u32 Arena::load32(u64 a)
{
	u32 v = 0;
	if (!m_->arena_kernel_read(a, &v, 4))
		v = 0;
	return v;
}

u64 Arena::load64(u64 a)
{
	u64 v = 0;
	if (!m_->arena_kernel_read(a, &v, 8))
		v = 0;
	return v;
}

void Arena::store8(u64 a, u8 v) { m_->arena_kernel_write(a, &v, 1); }
void Arena::store32(u64 a, u32 v) { m_->arena_kernel_write(a, &v, 4); }
void Arena::store64(u64 a, u64 v) { m_->arena_kernel_write(a, &v, 8); }

bool Arena::present(u64 a)
{
	u8 v;
	return m_->arena_kernel_read(a, &v, 1);
}

}  // namespace fl::libarena
