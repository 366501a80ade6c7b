// SPDX-License-Identifier: GPL-2.0-only
// Kernel-shaped BPF declarations (include/linux/bpf.h, include/uapi/linux/bpf.h)
// for the array map and its mmap path.
#pragma once

#include "mm.h"

namespace fl::FL_ARCH_NS {

struct bpf_map;

// include/uapi/linux/bpf.h
KCONST(u32) BPF_MAP_TYPE_ARRAY = 2, BPF_MAP_TYPE_PERCPU_ARRAY = 6, BPF_MAP_TYPE_ARENA = 33;
KCONST(u32) BPF_F_NUMA_NODE = 1u << 2, BPF_F_RDONLY = 1u << 3, BPF_F_WRONLY = 1u << 4,
	      BPF_F_RDONLY_PROG = 1u << 7, BPF_F_WRONLY_PROG = 1u << 8,
	      BPF_F_MMAPABLE = 1u << 10, BPF_F_PRESERVE_ELEMS = 1u << 11,
	      BPF_F_INNER_MAP = 1u << 12, BPF_F_SEGV_ON_FAULT = 1u << 17,
	      BPF_F_NO_USER_CONV = 1u << 18;
KCONST(u32) BPF_F_ACCESS_MASK = BPF_F_RDONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY | BPF_F_WRONLY_PROG;
KCONST(u64) BPF_ANY = 0, BPF_NOEXIST = 1, BPF_EXIST = 2, BPF_F_LOCK = 4;
constexpr int NUMA_NO_NODE = -1;

struct bpf_attr_map_create {  // the map-create part of union bpf_attr
	u32 map_type = BPF_MAP_TYPE_ARRAY;
	u32 key_size = 4;
	u32 value_size = 0;
	u32 max_entries = 0;
	u32 map_flags = 0;
	int numa_node = NUMA_NO_NODE;
	u64 map_extra = 0;
};

struct bpf_map_ops {
	int (*map_alloc_check)(bpf_attr_map_create *attr) = nullptr;
	bpf_map *(*map_alloc)(bpf_attr_map_create *attr) = nullptr;
	void (*map_free)(bpf_map *map) = nullptr;
	ulong (*map_lookup_elem)(bpf_map *map, const void *key) = nullptr;  // kernel address or 0
	long (*map_update_elem)(bpf_map *map, const void *key, const void *value, u64 flags) = nullptr;
	int (*map_mmap)(bpf_map *map, vm_area_struct *vma) = nullptr;
	ulong (*map_get_unmapped_area)(file *filp, ulong addr, ulong len, ulong pgoff, ulong flags) = nullptr;
	/* the lazy series: */
	vm_fault_t (*map_mmap_fault)(bpf_map *map, vm_fault *vmf) = nullptr;
	vm_fault_t (*map_mmap_pages)(bpf_map *map, vm_fault *vmf, pgoff_t start_pgoff, pgoff_t end_pgoff) = nullptr;
};

struct bpf_map {
	const bpf_map_ops *ops = nullptr;
	u32 map_type = 0, key_size = 0, value_size = 0, max_entries = 0;
	u32 map_flags = 0;
	int numa_node = NUMA_NO_NODE;
	u64 map_extra = 0;
	bool bypass_spec_v1 = false;
	void *record = nullptr;  /* BTF special fields: none in this harness */
	bool frozen = false;
	s64 writecnt = 0;        /* atomic64_t */
	struct mutex freeze_mutex;
	long refcnt = 1;
	bool kasan_freed = false;  /* not kernel: map_free ran (the map sits in KASAN's quarantine) */
};
inline bool kasan_check_map(const bpf_map *map, const char *where)
{
	return kasan_check(map->kasan_freed, "bpf_map", where);
}
// The reads a map VMA's vm_ops make (the VMA, its file, the map behind it).
inline void kasan_check_map_vma(const vm_area_struct *vma, const bpf_map *map, const char *where)
{
	kasan_check_vma(vma, where);
	if (vma->vm_file)
		kasan_check_file(vma->vm_file, where);
	kasan_check_map(map, where);
}

// sizeof(struct bpf_array) is a few hundred bytes (docs/arraymap.md#struct-bpf_array: offsetof
// value = 0x110 in one 6.x build); any value < PAGE_SIZE gives hdr_pgoff == 1.
KCONST(ulong) BPF_ARRAY_VALUE_OFFSET = 0x110;

struct bpf_array {
	bpf_map map;
	u32 elem_size = 0;
	u32 index_mask = 0;
	// (unsigned long)array: where the struct lives in kernel memory. The
	// struct sits at the tail of the header page so that array->value is
	// page aligned; the C++ object is the port's stand-in for that memory.
	ulong kaddr = 0;
};
#define sizeof_bpf_array BPF_ARRAY_VALUE_OFFSET  /* sizeof(*array): value[] is a flex array */
inline ulong array_value(const bpf_array *array) { return array->kaddr + BPF_ARRAY_VALUE_OFFSET; }

// kernel/bpf/arraymap.c: one ops table per patch level.
extern const bpf_map_ops array_map_ops_pre, array_map_ops_v1, array_map_ops_v2, array_map_ops_v3;
const bpf_map_ops *array_map_ops_for(Patch patch);
bool bpf_bypass_spec_v1(const void *token);

// kernel/bpf/arena.c (64-bit kernels only: CONFIG_MMU && CONFIG_64BIT).
// One ops table; the VMA handling differs by historical level (kcfg->arena).
struct bpf_arena;
extern const bpf_map_ops arena_map_ops;
u64 bpf_arena_alloc_pages(bpf_map *map, u64 addr__ign, u32 page_cnt, int node_id, u64 flags);
void bpf_arena_free_pages(bpf_map *map, u64 ptr__ign, u32 page_cnt);
int bpf_arena_reserve_pages(bpf_map *map, u64 ptr__ign, u32 page_cnt);
u64 bpf_arena_get_kern_vm_start(bpf_arena *arena);
u64 bpf_arena_get_user_vm_start(bpf_arena *arena);
// Not kernel: what the machine's invariants need to see of an arena.
vm_struct *arena_kern_vm(bpf_arena *arena);
u64 arena_user_vm_end(bpf_arena *arena);
std::vector<vm_area_struct *> arena_vma_list(bpf_arena *arena);

// kernel/bpf/syscall.c
extern const file_operations bpf_map_fops;
void bpf_map_write_active_inc(bpf_map *map);
void bpf_map_write_active_dec(bpf_map *map);
bool bpf_map_write_active(bpf_map *map);
// The bpf(2) commands: map_create hands back the new file (the caller
// installs it: bpf_map_new_fd); the others take the map's fd, which they
// hold (fdget/fdput) for the whole command.
long map_create(bpf_attr_map_create *attr, file **filep);
long map_update_elem(int ufd, u32 key, const void *value, u64 flags);
long map_lookup_elem(int ufd, u32 key, void *value);
long map_freeze(int ufd);
void bpf_map_put(bpf_map *map);

}  // namespace fl::FL_ARCH_NS
