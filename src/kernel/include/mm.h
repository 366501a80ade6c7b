// SPDX-License-Identifier: GPL-2.0-only
// Kernel-shaped mm declarations: struct page, vm_area_struct, mm_struct,
// vm_fault, files and inodes, VM_* and FAULT_* flags, and the entry points of
// the ported mm files (include/linux/{mm,mm_types,fs,pagemap,vmalloc}.h; linear_page_index is in pagemap.h).
#pragma once

#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kernel.h"
#include "base/coverage.h"
#include "base/slab.h"
#include "base/stats.h"
#include "locking.h"
#if !defined(FL_SYMBOLIC)
#include "page_index.h"  /* the symbolic build keys pages by term (symbolic/containers.h) */
#endif
#include "pgtable.h"

namespace fl::FL_ARCH_NS {

struct mm_struct;
struct vm_area_struct;
struct vm_fault;
struct file;

// include/linux/mm.h: vm_flags.
KCONST(vm_flags_t) VM_NONE = 0x0, VM_READ = 0x1, VM_WRITE = 0x2, VM_EXEC = 0x4,
		     VM_SHARED = 0x8, VM_MAYREAD = 0x10, VM_MAYWRITE = 0x20, VM_MAYEXEC = 0x40,
		     VM_MAYSHARE = 0x80, VM_GROWSDOWN = 0x100, VM_PFNMAP = 0x400,
		     VM_LOCKED = 0x2000, VM_IO = 0x4000, VM_DONTCOPY = 0x20000,
		     VM_DONTEXPAND = 0x40000, VM_ACCOUNT = 0x100000, VM_NORESERVE = 0x200000,
		     VM_DONTDUMP = 0x04000000, VM_MIXEDMAP = 0x10000000;
KCONST(vm_flags_t) VM_ACCESS_FLAGS = VM_READ | VM_WRITE | VM_EXEC;

// include/linux/mm_types.h: vm_fault_t values.
constexpr vm_fault_t VM_FAULT_OOM = 0x1, VM_FAULT_SIGBUS = 0x2, VM_FAULT_MAJOR = 0x4,
		     VM_FAULT_HWPOISON = 0x10, VM_FAULT_SIGSEGV = 0x40, VM_FAULT_NOPAGE = 0x100,
		     VM_FAULT_LOCKED = 0x200, VM_FAULT_RETRY = 0x400, VM_FAULT_FALLBACK = 0x800,
		     VM_FAULT_DONE_COW = 0x1000;
constexpr vm_fault_t VM_FAULT_ERROR = VM_FAULT_OOM | VM_FAULT_SIGBUS | VM_FAULT_SIGSEGV |
				      VM_FAULT_HWPOISON | VM_FAULT_FALLBACK;

// enum fault_flag
constexpr unsigned int FAULT_FLAG_WRITE = 0x1, FAULT_FLAG_ALLOW_RETRY = 0x4,
		       FAULT_FLAG_USER = 0x40, FAULT_FLAG_REMOTE = 0x80,
		       FAULT_FLAG_VMA_LOCK = 0x1000;

// include/uapi/asm-generic/mman-common.h, mman.h, linux/mman.h
KCONST(ulong) PROT_READ = 0x1, PROT_WRITE = 0x2, PROT_EXEC = 0x4;
KCONST(ulong) MAP_SHARED = 0x01, MAP_PRIVATE = 0x02, MAP_SHARED_VALIDATE = 0x03,
		MAP_TYPE = 0x0f, MAP_FIXED = 0x10, MAP_ANONYMOUS = 0x20, MAP_GROWSDOWN = 0x100,
		MAP_DENYWRITE = 0x800, MAP_EXECUTABLE = 0x1000, MAP_LOCKED = 0x2000,
		MAP_NORESERVE = 0x4000, MAP_POPULATE = 0x8000, MAP_NONBLOCK = 0x10000,
		MAP_STACK = 0x20000, MAP_HUGETLB = 0x40000, MAP_FIXED_NOREPLACE = 0x100000,
		MAP_UNINITIALIZED = 0x4000000;
KCONST(ulong) MREMAP_MAYMOVE = 1, MREMAP_FIXED = 2, MREMAP_DONTUNMAP = 4;
constexpr int MADV_DONTNEED = 4, MADV_DONTFORK = 10, MADV_DOFORK = 11;

// include/linux/mman.h: calc_vm_prot_bits
inline vm_flags_t calc_vm_prot_bits(ulong prot)
{
	return ((prot & PROT_READ) ? VM_READ : 0) | ((prot & PROT_WRITE) ? VM_WRITE : 0) |
	       ((prot & PROT_EXEC) ? VM_EXEC : 0);
}

// include/linux/fs.h
constexpr fmode_t FMODE_READ = 0x1, FMODE_WRITE = 0x2, FMODE_CAN_READ = 0x20000,
		  FMODE_CAN_WRITE = 0x40000;
constexpr unsigned int S_IFMT = 0170000, S_IFREG = 0100000, S_IRUSR = 0400, S_IWUSR = 0200;
inline bool S_ISREG(unsigned int m) { return (m & S_IFMT) == S_IFREG; }
#if BITS_PER_LONG == 32
#define MAX_LFS_FILESIZE ((loff_t)ULONG_MAX << PAGE_SHIFT)
#else
#define MAX_LFS_FILESIZE ((loff_t)0x7fffffffffffffffLL)
#endif

// Where a page came from; only the machine's invariants look at this.
enum class page_owner : u8 { vmalloc, direct_map };

// Not kernel: the invariant checker's list of the pages whose counts
// changed since it last looked (page_refcount is checked on those only, not
// on every page of every area after every op). Intrusive and doubly linked,
// so a page that goes away while listed (vfree) unlinks itself in O(1).
// The bookkeeping of the checker, outside the fuzzers' coverage
// (FL_NO_COVERAGE, base/coverage.h), as are the PTE counts (pte_ghost).
struct page_inv_link {
	page_inv_link *prev = nullptr, *next = nullptr;  // NULL: not listed
	page_inv_link() = default;
	page_inv_link(const page_inv_link &) = delete;
	page_inv_link &operator=(const page_inv_link &) = delete;
	~page_inv_link() { unlink(); }
	bool listed() const { return next != nullptr; }
	FL_NO_COVERAGE void unlink()
	{
		if (!next)
			return;
		prev->next = next;
		next->prev = prev;
		prev = next = nullptr;
	}
};
// The list's head (one per machine, in kernel_globals).
struct page_inv_list {
	page_inv_link head;
	page_inv_list() { head.prev = head.next = &head; }
	page_inv_list(const page_inv_list &) = delete;
	page_inv_list &operator=(const page_inv_list &) = delete;
	~page_inv_list() { clear(); }
	void add(page_inv_link *l)
	{
		l->prev = head.prev;
		l->next = &head;
		head.prev->next = l;
		head.prev = l;
	}
	// f(link) for every listed link, which may not unlink it.
	template <class F> void for_each(F &&f)
	{
		for (page_inv_link *l = head.next; l != &head; l = l->next)
			f(l);
	}
	void clear()
	{
		while (head.next != &head)
			head.next->unlink();
	}
};

struct page_counts;
FL_NO_COVERAGE inline void page_counts_changed(page_counts *pc);
// Not kernel: the type of struct page's counts (atomic_t in the kernel): an
// int that puts its page on the checker's list whenever it changes, so no
// write to a count (the port's _mapcount++, put_page's _refcount--, a slip
// that writes one directly) escapes the incremental check. Field is its
// place in page_counts (container_of without a pointer per count).
template <int Field> class page_count {
public:
	constexpr page_count(int v) : v_(v) {}
	page_count(const page_count &) = delete;
	operator int() const { return v_; }
	page_count &operator=(int v) { v_ = v; changed(); return *this; }
	page_count &operator+=(int d) { v_ += d; changed(); return *this; }
	page_count &operator-=(int d) { v_ -= d; changed(); return *this; }
	page_count &operator++() { return *this += 1; }
	page_count &operator--() { return *this -= 1; }
	int operator++(int) { int old = v_; *this += 1; return old; }
	int operator--(int) { int old = v_; *this -= 1; return old; }
private:
	inline void changed();
	int v_;
};

// The counted part of struct page (standard layout, so the offsets below
// are defined).
struct page_counts {
	page_count<0> _refcount{1};  // the allocator's reference
	page_count<1> _mapcount{0};  // number of PTEs mapping it (kernel stores this -1 based)
	page_count<2> inv_ptes{0};   // not kernel: the PTEs mapping it, as the page tables count them (pte_ghost)
	page_inv_link inv_dirty;     // not kernel: on kernel_globals::inv_dirty_pages
	static page_counts *of(page_inv_link *l)
	{
		return reinterpret_cast<page_counts *>(reinterpret_cast<char *>(l) - offsetof(page_counts, inv_dirty));
	}
};
static_assert(offsetof(page_counts, _mapcount) == sizeof(page_count<0>) &&
	      offsetof(page_counts, inv_ptes) == 2 * sizeof(page_count<0>));
template <int Field> inline void page_count<Field>::changed()
{
	page_counts_changed(reinterpret_cast<page_counts *>(reinterpret_cast<char *>(this) -
							     Field * sizeof(page_count<0>)));
}

// include/linux/mm_types.h: struct page (order-0 only, so page == folio).
struct page : page_counts {
	FL_SLAB_OBJECT  /* not kernel: struct pages from a per-thread slab (base/slab.h) */
	/* not kernel: every field has its initializer; with an implicit
	 * constructor make_unique<page>() zeroed the struct first, a memset
	 * (under ASan a checked one) for each page the arena allocates */
	page() {}
	std::unique_ptr<u8[]> data;  // PAGE_SIZE bytes, allocated on first write
	u8 fill = 0;                 // what every byte holds until then
	page_owner owner = page_owner::vmalloc;
	int area_id = -1;   // vmalloc area (or -1 for the direct map)
	ulong index = 0;    // page index within the area / direct map
};

inline void get_page(page *p) { p->_refcount++; }
void put_page(page *p);
inline int page_ref_count(const page *p) { return p->_refcount; }

// A present PTE maps one page with the rights the hardware checks: those
// of the VMA when it was set (mk_pte(page, vma->vm_page_prot): shared BPF
// mappings have no writenotify, so vm_page_prot is exactly the VMA's
// rights), changed only by mprotect's change_protection. The hardware reads
// these, never the VMA: a lockless look at the VMA tree may land in a
// split's or an mprotect's unfinished edit.
struct pte_t {
	page *pg = nullptr;
	bool write = false;     // pte_write
	bool protnone = false;  // pte_protnone: present, but no access (PROT_NONE)
};
inline bool vma_is_accessible(const vm_area_struct *vma);
// include/linux/mm.h: mk_pte(page, vma->vm_page_prot), vm_get_page_prot of
// a shared mapping: the VMA's rights
inline pte_t mk_pte(page *pg, const vm_area_struct *vma);
// Not kernel: the page tables' count of the PTEs mapping a page, for the
// invariant checker (independent of the port's _mapcount).
FL_NO_COVERAGE inline void pte_ghost(const pte_t &pte, int delta)
{
	if (pte.pg)
		pte.pg->inv_ptes += delta;
}

// include/linux/mm_types.h
struct vm_operations_struct {
	void (*open)(vm_area_struct *) = nullptr;
	void (*close)(vm_area_struct *) = nullptr;
	int (*may_split)(vm_area_struct *, ulong addr) = nullptr;
	int (*mremap)(vm_area_struct *) = nullptr;
	vm_fault_t (*fault)(vm_fault *) = nullptr;
	vm_fault_t (*map_pages)(vm_fault *, pgoff_t start_pgoff, pgoff_t end_pgoff) = nullptr;
	vm_fault_t (*page_mkwrite)(vm_fault *) = nullptr;
};

struct vm_area_struct {
	FL_SLAB_OBJECT  /* not kernel: vm_area_cachep as a per-thread slab (base/slab.h) */
	ulong vm_start = 0, vm_end = 0;
	mm_struct *vm_mm = nullptr;
	vm_flags_t vm_flags = 0;
	const vm_operations_struct *vm_ops = nullptr;
	ulong vm_pgoff = 0;
	file *vm_file = nullptr;
	void *vm_private_data = nullptr;
	bool kasan_freed = false;  // not kernel: set by vm_area_free (the VMA sits in KASAN's quarantine)
};

inline ulong vma_pages(const vm_area_struct *vma) { return (vma->vm_end - vma->vm_start) >> PAGE_SHIFT; }
inline bool vma_is_anonymous(const vm_area_struct *vma) { return !vma->vm_ops; }
inline bool vma_is_accessible(const vm_area_struct *vma) { return vma->vm_flags & VM_ACCESS_FLAGS; }
inline pte_t mk_pte(page *pg, const vm_area_struct *vma)
{
	return pte_t{pg, (vma->vm_flags & VM_WRITE) != 0, !vma_is_accessible(vma)};
}
// include/linux/mm.h (6.3+): vm_flags_set/clear/reset take the per-VMA write lock.
// Each write is declared to the lockset checker (locking.h kVmFlags).
#define vm_flags_set(vma, flags)                                                     \
	do {                                                                         \
		vma_start_write(vma);                                                \
		FL_SHARED_ACCESS(&(vma)->vm_flags, kVmFlags, write, "vm_flags");     \
		(vma)->vm_flags |= (flags);                                          \
	} while (0)
#define vm_flags_clear(vma, flags)                                                   \
	do {                                                                         \
		vma_start_write(vma);                                                \
		FL_SHARED_ACCESS(&(vma)->vm_flags, kVmFlags, write, "vm_flags");     \
		(vma)->vm_flags &= ~(vm_flags_t)(flags);                             \
	} while (0)
#define vm_flags_reset(vma, flags)                                                   \
	do {                                                                         \
		vma_start_write(vma);                                                \
		FL_SHARED_ACCESS(&(vma)->vm_flags, kVmFlags, write, "vm_flags");     \
		(vma)->vm_flags = (flags);                                           \
	} while (0)

struct vm_fault {
	vm_area_struct *vma = nullptr;
	unsigned int flags = 0;
	pgoff_t pgoff = 0;
	ulong address = 0;  // page aligned
	page *pg = nullptr; // vmf->page
};

struct mm_struct {
	std::vector<vm_area_struct *> mmap;  // sorted by vm_start (the maple tree)
	int mm_users = 1;                     // atomic_t; mm_init() sets 1: its first task's
	page_table<pte_t> ptes;               // user page address -> PTE (the page tables)
	int map_count = 0;
	ulong mmap_base = 0;
	ulong task_size = 0;
};

// include/linux/fs.h: superblock s_iflags. The port has no super_block;
// each inode carries its superblock's flags.
constexpr unsigned long SB_I_NODEV = 0x00000004, SB_I_NOEXEC = 0x00000002;

struct inode {
	unsigned int i_mode = 0;
	loff_t i_size = 0;
	unsigned long i_sb_iflags = 0;  // i_sb->s_iflags
};

struct file_operations {
	int (*mmap)(file *, vm_area_struct *) = nullptr;
	ulong (*get_unmapped_area)(file *, ulong addr, ulong len, ulong pgoff, ulong flags) = nullptr;
	void (*release)(file *) = nullptr;
};

struct file {
	inode *f_inode = nullptr;
	fmode_t f_mode = 0;
	const file_operations *f_op = nullptr;
	void *private_data = nullptr;
	long f_count = 1;
	bool kasan_freed = false;  // not kernel: set by the last fput (the file sits in KASAN's quarantine)
};
inline inode *file_inode(const file *f) { return f->f_inode; }
// include/linux/fs.h: path_noexec (no mount flags: the port's files live on
// internal mounts, so only the superblock's SB_I_NOEXEC counts)
inline bool path_noexec(const file *f) { return f->f_inode->i_sb_iflags & SB_I_NOEXEC; }
inline file *get_file(file *f) { f->f_count++; return f; }
void fput(file *f);

// include/linux/fdtable.h (reduced): the open-file table. The harness has one,
// shared by every process and every task it runs (a map fd opened before fork
// stays open in both; its close is the harness's one close), so it is never
// the single-user table that __fget_light may borrow from without a reference.
// close(2) clears a slot under file_lock; fd_install publishes into a slot
// its caller reserved (rcu_assign_pointer), and fget looks up under RCU: the
// lockset checker holds the table to that (kFdTable in locking.h).
constexpr unsigned int NR_OPEN_DEFAULT = BITS_PER_LONG;
struct files_struct {
	spinlock_t file_lock;
	file *fd_array[NR_OPEN_DEFAULT] = {};
};
// include/linux/file.h: struct fd, what fdget hands out (FDPUT_FPUT: it holds
// a reference that fdput drops).
constexpr unsigned int FDPUT_FPUT = 1;
struct fd {
	struct file *file;
	unsigned int flags;
};
// fs/file.c
void fd_install(unsigned int fd, file *f);
int close_fd(unsigned int fd);
file *fget(unsigned int fd);
struct fd fdget(unsigned int fd);
// include/linux/file.h: fdput
inline void fdput(struct fd f)
{
	if (f.flags & FDPUT_FPUT)
		fput(f.file);
}

// Not kernel: an area's (or the direct map's) struct pages by index, created
// on first use (page_index.h); in the symbolic build keyed by the index's
// term (symbolic/containers.h).
#if defined(FL_SYMBOLIC)
using page_index_map = ::fl::sym::term_map<ulong, std::unique_ptr<page>>;
#else
using page_index_map = page_index<page>;
#endif

// include/linux/vmalloc.h: struct vm_struct flags.
KCONST(ulong) VM_IOREMAP = 0x1, VM_ALLOC = 0x2, VM_MAP = 0x4, VM_USERMAP = 0x8,
		VM_DMA_COHERENT = 0x10, VM_NO_GUARD = 0x40, VM_SPARSE = 0x1000;

struct vm_struct {
	int id = 0;
	ulong addr = 0;
	ulong size = 0;  // including the guard page unless VM_NO_GUARD
	ulong flags = 0;
	ulong nr_pages = 0;
	u8 fill = 0;  // initial contents of its pages (0: __GFP_ZERO)
	page_index_map pages;  // created on first use
};
inline ulong get_vm_area_size(const vm_struct *area)
{
	if (!(area->flags & VM_NO_GUARD))
		return area->size - PAGE_SIZE;  /* return actual size without guard page */
	return area->size;
}

// The task that makes the syscall (only its mm matters here).
struct task_struct {
	mm_struct *mm = nullptr;
};
extern thread_local constinit task_struct *current;

// Per-machine kernel globals: the vmalloc space, the direct map, counters.
struct kernel_globals {
	/* first, so it outlives every page listed on it */
	page_inv_list inv_dirty_pages;  // not kernel: pages whose counts changed since the last check
	kernel_config cfg;
	std::vector<std::unique_ptr<vm_struct>> vmap_areas;  // sorted by addr
	int next_area_id = 0;
	ulong vmalloc_start = 0, vmalloc_end = 0;
	ulong page_offset = 0, direct_map_end = 0;
	page_index_map direct_map;  // lowmem pages, by index
	u64 totalram_pages = 0, vmalloc_pages_used = 0;
#if defined(FL_SYMBOLIC)
	BasicStats<::fl::sym::sink> *stats = nullptr;
#else
	Stats *stats = nullptr;
#endif
	files_struct files;  /* the harness's one fd table (see files_struct) */
	/* KASAN: freed VMAs and pages stay here until the machine goes away,
	 * so a use after free is reported (kasan_report) instead of crashing
	 * the harness. */
	std::vector<std::unique_ptr<vm_area_struct>> kasan_quarantine;
	std::vector<std::shared_ptr<void>> kasan_objects;  // freed files, inodes and maps
	std::vector<std::unique_ptr<page>> freed_pages;
	std::string kasan_report;  // the first report since the machine last looked
};
// mm/kasan/report.c: kasan_report, for an access to a freed object.
void kasan_report(const char *what, const char *where);
// What KASAN's shadow check does at an access, for the objects the port
// keeps in quarantine (VMAs, files, maps): false, and a report, if freed.
inline bool kasan_check(bool freed, const char *object, const char *where)
{
	if (freed)
		kasan_report((std::string("slab-use-after-free of a ") + object).c_str(), where);
	return !freed;
}
inline bool kasan_check_vma(const vm_area_struct *vma, const char *where)
{
	return kasan_check(vma->kasan_freed, "vm_area_struct", where);
}
inline bool kasan_check_file(const file *f, const char *where)
{
	return kasan_check(f->kasan_freed, "file", where);
}
extern thread_local constinit kernel_globals *kg;
// (not kernel) a spinlock's lockdep class: the fd table's file_lock, or a
// page-table lock (pte_lockptr: the mm's address).
inline const ::fl::sched::LockClass &spinlock_class(const void *lock)
{
	return kg && lock == &kg->files.file_lock ? kFileLock : ::fl::sched::kPtl;
}
FL_NO_COVERAGE inline void page_counts_changed(page_counts *pc)
{
	if (kg && !pc->inv_dirty.listed())
		kg->inv_dirty_pages.add(&pc->inv_dirty);
}

// mm/vmalloc.c
ulong __vmalloc_node_range(u64 size, ulong align, ulong flags, u8 fill = 0);
void vfree(ulong addr);
vm_struct *find_vm_area(ulong addr);
vm_struct *get_vm_area(ulong size, ulong flags);  // address space only, no pages
void free_vm_area(vm_struct *area);
page *vmalloc_to_page(ulong vmalloc_addr);
int remap_vmalloc_range_partial(vm_area_struct *vma, ulong uaddr, ulong kaddr, ulong pgoff, ulong size);
int remap_vmalloc_range(vm_area_struct *vma, ulong addr, ulong pgoff);
void kernel_memcpy_from(void *dst, ulong kaddr, ulong n);  // reads through vmalloc_to_page
void kernel_memcpy_to(ulong kaddr, const void *src, ulong n);
u8 *page_address_rw(page *p);  // the page's bytes (allocated on demand)
inline u8 page_byte(const page *p, ulong off) { return p->data ? p->data[off] : p->fill; }

// mm/memory.c
int vm_insert_page(vm_area_struct *vma, ulong addr, page *pg);
vm_fault_t handle_mm_fault(vm_area_struct *vma, ulong address, unsigned int flags);
void zap_page_range_single(vm_area_struct *vma, ulong address, ulong size);
void unmap_vmas(vm_area_struct *vma, ulong start, ulong end);
int copy_page_range(vm_area_struct *dst_vma, vm_area_struct *src_vma);
void move_page_tables(vm_area_struct *vma, ulong old_addr, vm_area_struct *new_vma, ulong new_addr, ulong len);
void change_protection(vm_area_struct *vma, ulong start, ulong end);
pte_t *pte_lookup(mm_struct *mm, ulong addr);  // NULL when pte_none (the MMU's walk; the port reads with ptep_get)

// mm/mmap.c
ulong get_unmapped_area(file *f, ulong addr, ulong len, ulong pgoff, ulong flags);
ulong mm_get_unmapped_area(mm_struct *mm, file *f, ulong addr, ulong len, ulong pgoff, ulong flags);
ulong do_mmap(file *f, ulong addr, ulong len, ulong prot, ulong flags, vm_flags_t vm_flags,
	      ulong pgoff, ulong *populate);
ulong vm_mmap_pgoff(file *f, ulong addr, ulong len, ulong prot, ulong flag, ulong pgoff);
ulong ksys_mmap_pgoff(ulong addr, ulong len, ulong prot, ulong flags, ulong fd, ulong pgoff);
int do_munmap(mm_struct *mm, ulong start, size_t len);
int __vm_munmap(ulong start, size_t len);
void exit_mmap(mm_struct *mm);
vm_area_struct *find_vma(mm_struct *mm, ulong addr);
vm_area_struct *vma_lookup(mm_struct *mm, ulong addr);
vm_area_struct *find_vma_intersection(mm_struct *mm, ulong start, ulong end);

// mm/vma.c
vm_area_struct *vm_area_alloc(mm_struct *mm);
vm_area_struct *vm_area_dup(vm_area_struct *orig);
void vm_area_free(vm_area_struct *vma);
void vma_link(mm_struct *mm, vm_area_struct *vma);
void vma_unlink(mm_struct *mm, vm_area_struct *vma);
int __split_vma(vm_area_struct *vma, ulong addr, int new_below);
int split_vma(vm_area_struct *vma, ulong addr, int new_below);
vm_area_struct *vma_modify_flags(vm_area_struct *vma, ulong start, ulong end, vm_flags_t new_flags);
void remove_vma(vm_area_struct *vma);
int do_vmi_munmap(mm_struct *mm, ulong start, size_t len);

// mm/mprotect.c, mm/mremap.c, mm/madvise.c, mm/gup.c, kernel/fork.c
int do_mprotect_pkey(ulong start, size_t len, ulong prot);
ulong sys_mremap(ulong addr, ulong old_len, ulong new_len, ulong flags, ulong new_addr);
int do_madvise(mm_struct *mm, ulong start, size_t len_in, int behavior);
int __mm_populate(ulong start, ulong len, int ignore_errors);
int dup_mmap(mm_struct *mm, mm_struct *oldmm);
void mmget(mm_struct *mm);
void mmput(mm_struct *mm);

// arch/x86/mm/fault.c: a user access that missed the TLB. Returns the signal
// (0, SIGBUS or SIGSEGV) and on success the PTE now present.
int do_user_addr_fault(ulong address, bool write);

}  // namespace fl::FL_ARCH_NS
