// SPDX-License-Identifier: GPL-2.0-only
// The machine's set-up and its syscall front doors: the bpf(2) map commands,
// and mmap/munmap/mprotect/mremap/madvise/fork/exit in one process, with the
// arguments narrowed to unsigned long as the syscall ABI narrows them.
#include "machine_impl.h"

#include <cstring>
#include <exception>
#include <optional>

namespace fl::FL_ARCH_NS {

namespace {

// Memory layout of the simulated kernels (x86_64 4-level, i386 3G/1G).
struct Layout {
	u64 page_offset, lowmem_bytes, vmalloc_start, vmalloc_end, task_size;
};
constexpr Layout kLayout64 = {0xffff888000000000ull, 1ull << 30, 0xffffc90000000000ull,
			      0xffffe90000000000ull, 1ull << 47};
constexpr Layout kLayout32 = {0xc0000000ull, 896ull << 20, 0xf8800000ull, 0xff000000ull,
			      0xc0000000ull};
// RAM: 1 GiB on i386 (its vmalloc space is smaller anyway); 64 GiB on
// x86_64, so that maps with more than 4 GiB of data can be created (their
// pages are sparse: free until touched).
constexpr u64 kNeighbourPages = 4;

// A syscall's return register: an address/count, or -errno in the top page.
int64_t sysret(ulong ret)
{
	return IS_ERR_VALUE(ret) ? -(int64_t)(ulong)(0 - ret) : (int64_t)ret;
}

}  // namespace

// (every entry into the machine, each of the allocator's arena loads and
// stores among them: no coverage, base/coverage.h)
FL_NO_COVERAGE MachineImpl::Enter::Enter(const MachineImpl *m, int pid)
	: kg_(kg), kcfg_(kcfg), current_(current)
{
	kg = &m->kg_;
	kcfg = &m->kg_.cfg;
	current = nullptr;
	if (pid >= 0 && pid < (int)m->procs_.size())
		current = const_cast<task_struct *>(&m->procs_[pid]->task);
}

MachineImpl::Enter::~Enter()
{
	kg = kg_;
	kcfg = kcfg_;
	current = current_;
}

MachineImpl::MachineImpl(const Config &cfg) : cfg_(cfg)
{
	const Layout &l = cfg.arch == Arch::A32 ? kLayout32 : kLayout64;

	kg_.cfg = kernel_config{cfg.page_shift, cfg.bypass_spec_v1, cfg.door, cfg.patch, cfg.historic, cfg.arena};
	kg_.stats = &stats_;
	kg_.page_offset = (ulong)l.page_offset;
	kg_.direct_map_end = (ulong)(l.page_offset + l.lowmem_bytes);
	kg_.vmalloc_start = (ulong)l.vmalloc_start;
	kg_.vmalloc_end = (ulong)l.vmalloc_end;
	kg_.totalram_pages = (cfg.arch == Arch::A32 ? kMachineRam32 : kMachineRam64) >> cfg.page_shift;

	register_sched_tls();
	Enter e(this);
	auto p = std::make_unique<Process>();
	p->task.mm = &p->mm;
	p->mm.task_size = (ulong)(l.task_size - PAGE_SIZE);
	p->mm.mmap_base = (ulong)((l.task_size - (128ull << 20)) & PAGE_MASK);
	procs_.push_back(std::move(p));
	/* a neighbour below the map's area: vmalloc_to_page() past the map's
	 * guard page lands in the area above, before it in this one */
	add_neighbour_area();
}

// Another subsystem's vmalloc area next to the map's, filled with a pattern
// so that a page leaked from it shows in user-space loads.
void MachineImpl::add_neighbour_area()
{
	__vmalloc_node_range(kNeighbourPages << PAGE_SHIFT, PAGE_SIZE, 0, 0x5a);
}

MachineImpl::~MachineImpl()
{
	for (size_t pid = 0; pid < procs_.size(); pid++) {
		if (procs_[pid]->alive) {
			exit((int)pid);
		} else if (!procs_[pid]->mm.mmap.empty()) {
			/* a schedule cut short while a task still used an exited process's mm */
			Enter e(this, (int)pid);
			exit_mmap(&procs_[pid]->mm);
		}
	}
	if (map_fd_file())
		map_close();
	for (file *f : held_files_)  /* holds a candidate took and never used */
		if (f) {
			Enter e(this);
			fput(f);
			fd_syscalls_--;
			forget_map_if_freed();
		}
}

MachineImpl::Process *MachineImpl::proc(int pid)
{
	if (pid < 0 || pid >= (int)procs_.size() || !procs_[pid]->alive)
		return nullptr;
	return procs_[pid].get();
}

const MachineImpl::Process *MachineImpl::proc(int pid) const
{
	return const_cast<MachineImpl *>(this)->proc(pid);
}

bool MachineImpl::process_alive(int pid) const
{
	return proc(pid) != nullptr;
}

MachineImpl::MmUser::MmUser(MachineImpl *m, int pid) : m_(m), mm_(nullptr)
{
	if (Process *p = m->proc(pid)) {
		mm_ = &p->mm;
		mmget(mm_);
	}
}

MachineImpl::MmUser::~MmUser() noexcept(false)
{
	if (!mm_)
		return;
	if (std::uncaught_exceptions()) {
		mm_->mm_users--;
		return;
	}
	mmput(mm_);
	if (!mm_->mm_users)
		m_->forget_map_if_freed();  /* the exited mm's VMAs held the map's file */
}

void MachineImpl::note(Invariant what, std::string detail)
{
	if (!op_violation_)
		op_violation_ = Violation{what, std::move(detail)};
}

Violation MachineImpl::take_op_violation()
{
	if (!kg_.kasan_report.empty()) {  /* a KASAN report during the op */
		note(Invariant::use_after_free, kg_.kasan_report);
		kg_.kasan_report.clear();
	}
	Violation v = std::move(op_violation_);
	op_violation_ = Violation{};
	return v;
}

// Does anything still hold the map's file: the fd table, a syscall in flight
// on the fd, or a VMA? Its last fput (whoever drops it) frees it and the map.
bool MachineImpl::map_file_held() const
{
	if (map_fd_file() || fd_syscalls_)
		return true;
	for (auto &p : procs_)
		for (vm_area_struct *vma : p->mm.mmap)
			if (vma->vm_file == map_vm_file_)
				return true;
	return false;
}

// The map struct is freed once nothing holds its file.
void MachineImpl::forget_map_if_freed()
{
	if (!map_vm_file_ || map_file_held())
		return;
	map_vm_file_ = nullptr;
	array_ = nullptr;
	arena_ = nullptr;
	arena_slots_.clear();
}

int64_t MachineImpl::map_create(const MapSpec &spec)
{
	Enter e(this);
	bpf_attr_map_create attr;
	file *f = nullptr;

	if (map_vm_file_)
		return -EBUSY;  /* harness limit: one map per program */
	attr.key_size = spec.key_size;
	attr.value_size = spec.value_size;
	attr.max_entries = spec.max_entries;
	attr.map_flags = spec.map_flags;
	attr.map_type = spec.map_type;
	attr.map_extra = spec.map_extra;
	int area_before = kg_.next_area_id;
	long err = fl::FL_ARCH_NS::map_create(&attr, &f);
	if (err)
		return err;
	fd_install(kMapFd, f);  /* bpf_map_new_fd: the table's reference */
	map_vm_file_ = f;
	if (static_cast<bpf_map *>(f->private_data)->map_type == BPF_MAP_TYPE_ARENA) {
		arena_ = reinterpret_cast<bpf_arena *>(f->private_data);
		arena_slots_.clear();
		return kMapFd;
	}
	array_ = reinterpret_cast<bpf_array *>(f->private_data);
	map_area_id_ = area_before;
	hdr_pages_ = PAGE_ALIGN((ulong)sizeof_bpf_array) >> PAGE_SHIFT;
	visible_pages_ = PAGE_ALIGN((u64)array_->map.max_entries * array_->elem_size) >> PAGE_SHIFT;
	/* and a neighbour above it */
	add_neighbour_area();
	return kMapFd;
}

int64_t MachineImpl::map_update(uint32_t index, const std::vector<uint8_t> &value, uint64_t flags)
{
	Enter e(this);
	FdSyscall held(this);
	std::vector<uint8_t> buf(value);
	buf.resize(array_ ? array_->map.value_size : 0);
	return map_update_elem(kMapFd, index, buf.data(), flags);
}

int64_t MachineImpl::map_lookup(uint32_t index, std::vector<uint8_t> *value)
{
	Enter e(this);
	FdSyscall held(this);
	value->assign(array_ ? array_->map.value_size : 0, 0);
	long err = map_lookup_elem(kMapFd, index, value->data());
	if (err)
		value->clear();
	return err;
}

int64_t MachineImpl::map_freeze()
{
	Enter e(this);
	FdSyscall held(this);
	file *f = map_fd_file();  /* a peek for the check below; the port takes its own reference */
	if (!f)
		return fl::FL_ARCH_NS::map_freeze(kMapFd);  /* -EBADF */
	bool writable_live = false;
	for (auto &p : procs_)
		for (vm_area_struct *vma : p->mm.mmap)
			if (is_map_vma(vma) && (vma->vm_flags & VM_MAYWRITE))
				writable_live = true;
	if (arena_)  /* the arena's vm_ops never drop writecnt: freeze_iff is about arrays */
		return fl::FL_ARCH_NS::map_freeze(kMapFd);
	bool was_frozen = array_->map.frozen;
	bool fd_writable = f->f_mode & FMODE_WRITE;
	long err = fl::FL_ARCH_NS::map_freeze(kMapFd);
	bool expect_ok = !writable_live && !was_frozen && fd_writable;
	/* Concurrent writers make this op-level check meaningless; the
	 * interleaving explorer's ghost invariants take its place. */
	if ((err == 0) != expect_ok && !sched::active())
		note(Invariant::freeze_iff,
		     std::string("freeze returned ") + std::to_string(err) +
			     (writable_live ? " with a writable mapping live" : " with nothing writable live"));
	return err;
}

int64_t MachineImpl::map_close()
{
	Enter e(this);
	int err = close_fd(kMapFd);  /* drops the table's reference only */
	forget_map_if_freed();
	return err;
}

// The candidates' stand-in for the fdget at the start of a syscall that began
// before a close of the fd (Machine::map_fd_hold): fs/file.c's fget, the
// reference that syscall holds until its fput.
int MachineImpl::map_fd_hold()
{
	Enter e(this);
	file *f = fget(kMapFd);
	if (!f)
		return -EBADF;
	fd_syscalls_++;
	held_files_.push_back(f);
	return (int)held_files_.size() - 1;
}

void MachineImpl::map_fd_with_held(int handle, const std::function<void()> &op)
{
	file *f = held_files_.at((size_t)handle);
	const bool put = !map_fd_file();  /* closed: the op's fdget finds the held file */
	if (put) {
		Enter e(this);
		fd_install(kMapFd, get_file(f));
	}
	op();
	Enter e(this);
	if (put)
		close_fd(kMapFd);
	held_files_[(size_t)handle] = nullptr;
	fput(f);
	fd_syscalls_--;
	forget_map_if_freed();
}

// The candidates' stand-in for an update whose permission check came before
// a freeze's WRITE_ONCE(map->frozen, true) (Machine::map_checked_before_freeze).
void MachineImpl::map_checked_before_freeze(const std::function<void()> &op)
{
	bool *frozen = array_ ? &array_->map.frozen : nullptr;
	const bool was = frozen && *frozen;
	if (frozen)
		*frozen = false;
	op();
	if (frozen)
		*frozen = was;
}

int64_t MachineImpl::mmap(int pid, uint64_t addr, uint64_t len, int prot, int flags, bool map_fd,
			  uint64_t pgoff)
{
	Enter e(this, pid);
	MmUser user(this, pid);
	ulong vm_pgoff;

	if (!user)
		return -ESRCH;
	if (map_fd)
		flags &= ~MAP_ANONYMOUS;
	else
		flags |= MAP_ANONYMOUS;

	switch (cfg_.door) {
	case Door::direct:
		/* f_op->mmap sees any vm_pgoff the width can hold */
		vm_pgoff = (ulong)pgoff;
		break;
	default:
		if (BITS_PER_LONG == 64) {
			/* sys_mmap(..., off): a byte offset in a 64-bit register */
			u64 off = pgoff << PAGE_SHIFT;
			if (off & ~(u64)PAGE_MASK)
				return -EINVAL;
			vm_pgoff = (ulong)(off >> PAGE_SHIFT);
		} else {
			/* sys_mmap_pgoff (mmap2): 4096-byte units in a 32-bit register */
			unsigned shift = PAGE_SHIFT - 12;
			ulong pgoff4k = (ulong)(pgoff << shift);
			if (pgoff4k & (((ulong)1 << shift) - 1))
				return -EINVAL;
			vm_pgoff = pgoff4k >> shift;
		}
		break;
	}
	std::optional<FdSyscall> held;
	if (map_fd)
		held.emplace(this);
	int64_t ret = sysret(ksys_mmap_pgoff((ulong)addr, (ulong)len, (ulong)prot, (ulong)flags,
					     map_fd ? (ulong)kMapFd : (ulong)-1, vm_pgoff));
	held.reset();
	forget_map_if_freed();  /* MAP_FIXED may have unmapped the map's last VMA */
	return ret;
}

int64_t MachineImpl::munmap(int pid, uint64_t addr, uint64_t len)
{
	Enter e(this, pid);
	MmUser user(this, pid);
	if (!user)
		return -ESRCH;
	int ret = __vm_munmap((ulong)addr, (ulong)len);
	forget_map_if_freed();
	return ret;
}

int64_t MachineImpl::mprotect(int pid, uint64_t addr, uint64_t len, int prot)
{
	Enter e(this, pid);
	MmUser user(this, pid);
	if (!user)
		return -ESRCH;
	return do_mprotect_pkey((ulong)addr, (ulong)len, (ulong)(unsigned)prot);
}

int64_t MachineImpl::mremap(int pid, uint64_t addr, uint64_t old_len, uint64_t new_len, int flags,
			    uint64_t new_addr)
{
	Enter e(this, pid);
	MmUser user(this, pid);
	if (!user)
		return -ESRCH;
	int64_t ret = sysret(sys_mremap((ulong)addr, (ulong)old_len, (ulong)new_len,
					(ulong)(unsigned)flags, (ulong)new_addr));
	forget_map_if_freed();
	return ret;
}

int64_t MachineImpl::madvise(int pid, uint64_t addr, uint64_t len, int advice)
{
	Enter e(this, pid);
	MmUser user(this, pid);
	if (!user)
		return -ESRCH;
	return do_madvise(current->mm, (ulong)addr, (ulong)len, advice);
}

int64_t MachineImpl::fork(int pid)
{
	Enter e(this, pid);
	MmUser user(this, pid);
	if (!user)
		return -ESRCH;
	auto child = std::make_unique<Process>();
	child->task.mm = &child->mm;
	int err = dup_mmap(&child->mm, current->mm);
	procs_.push_back(std::move(child));
	if (err) {
		exit((int)procs_.size() - 1);
		return err;
	}
	return (int64_t)procs_.size() - 1;
}

// do_group_exit: no task of the process enters the kernel again; do_exit ->
// exit_mm -> mmput drops the process's reference, and the last user (this
// op, or a sibling still inside one: MmUser) tears the mm down.
int64_t MachineImpl::exit(int pid)
{
	Enter e(this, pid);
	MmUser user(this, pid);
	Process *p = proc(pid);
	if (!p)
		return -ESRCH;
	p->alive = false;
	mmput(&p->mm);
	return 0;
}

uint64_t MachineImpl::arena_alloc_pages(uint64_t addr, uint32_t cnt)
{
	Enter e(this);
	if (!arena_)
		return 0;
	return bpf_arena_alloc_pages(static_cast<bpf_map *>(map_vm_file_->private_data), addr, cnt, NUMA_NO_NODE, 0);
}

void MachineImpl::arena_free_pages(uint64_t addr, uint32_t cnt)
{
	Enter e(this);
	if (arena_)
		bpf_arena_free_pages(static_cast<bpf_map *>(map_vm_file_->private_data), addr, cnt);
}

int64_t MachineImpl::arena_reserve_pages(uint64_t addr, uint32_t cnt)
{
	Enter e(this);
	if (!arena_)
		return -EINVAL;
	return bpf_arena_reserve_pages(static_cast<bpf_map *>(map_vm_file_->private_data), addr, cnt);
}

namespace {
// memcpy, with the allocator's word-sized loads and stores as plain ones:
// a call through ASan's memcpy interceptor for each was 2 % of a
// buddy-series input's time.
FL_NO_COVERAGE inline void copy_bytes(u8 *dst, const u8 *src, uint32_t n)
{
	switch (n) {
	case 1: std::memcpy(dst, src, 1); return;
	case 4: std::memcpy(dst, src, 4); return;
	case 8: std::memcpy(dst, src, 8); return;
	default: std::memcpy(dst, src, n); return;
	}
}
}  // namespace

// The slot of the arena page at addr (arena_index_slot), or null when no
// page could be there (no arena, or no chunk of its index holds it),
// remembered as entry k under key (arena_run).
FL_NO_COVERAGE const std::unique_ptr<page> *MachineImpl::arena_slot(uint64_t addr, uint32_t key, uint32_t k)
{
	ArenaSlots &s = arena_slots_;
	if (!arena_)
		return nullptr;
	Enter e(this);
	const std::unique_ptr<page> *slot = arena_index_slot(addr);
	if (!slot)
		return nullptr;
	const page_index_map &index = arena_kern_vm(arena_)->pages;
	if (s.index != &index || s.epoch != index.epoch()) {
		s.clear();
		s.index = &index;
		s.epoch = index.epoch();
	}
	s.key[k] = key;
	s.slot[k] = slot;
	return slot;
}

// The arena page at addr (null: none there), the offset of addr in it and
// how many of the `left` bytes from addr lie in it. Inlined into
// arena_kernel_read and _write, which have no coverage: out of line it was
// a call at every access for a few loads and compares.
FL_NO_COVERAGE_INLINE page *MachineImpl::arena_run(ArenaSlots &s, uint64_t addr, uint32_t left, uint32_t *off, uint32_t *run)
{
	const uint32_t size = 1u << s.page_shift;
	*off = (uint32_t)addr & (size - 1);
	*run = left < size - *off ? left : size - *off;
	const uint32_t key = ((uint32_t)addr >> s.page_shift) + 1;
	/* neighbouring pages in other entries, and each chunk's metadata pages
	 * apart from the next chunk's */
	const uint32_t k = (key ^ key >> 6) % kArenaSlots;
	const std::unique_ptr<page> *slot =
		s.key[k] == key && s.index->epoch() == s.epoch ? s.slot[k] : s.m->arena_slot(addr, key, k);
	return slot ? slot->get() : nullptr;
}

// A BPF program's arena load/store: kern_vm_start + (u32)addr, byte by byte
// through the kernel's page table (no fault: a missing page fails here).
// The buddy allocator's every load and store: no coverage (base/coverage.h),
// their trace-cmp callbacks were 5 % of a buddy-series input's time. Each
// page comes from arena_slot, and needs no Enter unless it has no bytes yet.
FL_NO_COVERAGE bool MachineImpl::arena_kernel_read(uint64_t addr, void *dst, uint32_t n)
{
	ArenaSlots &s = arena_slots_;
	u8 *out = static_cast<u8 *>(dst);
	for (uint32_t i = 0, off, run; i < n; i += run) {  /* a page at a time */
		const page *pg = arena_run(s, addr + i, n - i, &off, &run);
		if (!pg)
			return false;
		if (pg->data)
			copy_bytes(out + i, pg->data.get() + off, run);
		else
			std::memset(out + i, pg->fill, run);
	}
	return true;
}

FL_NO_COVERAGE bool MachineImpl::arena_kernel_write(uint64_t addr, const void *src, uint32_t n)
{
	ArenaSlots &s = arena_slots_;
	const u8 *in = static_cast<const u8 *>(src);
	for (uint32_t i = 0, off, run; i < n; i += run) {
		page *pg = arena_run(s, addr + i, n - i, &off, &run);
		if (!pg)
			return false;
		if (!pg->data) {
			Enter e(this);  /* page_address_rw gives the page its bytes */
			page_address_rw(pg);
		}
		copy_bytes(pg->data.get() + off, in + i, run);
	}
	return true;
}

void MachineImpl::kernel_poke(uint64_t map_offset, const std::vector<uint8_t> &bytes)
{
	Enter e(this);
	if (!array_ || map_offset + bytes.size() > visible_pages_ << PAGE_SHIFT)
		return;
	kernel_memcpy_to(array_value(array_) + (ulong)map_offset, bytes.data(), bytes.size());
}

}  // namespace fl::FL_ARCH_NS
