// SPDX-License-Identifier: GPL-2.0-only
// The machine for one unsigned-long width: kernel globals, the map's fd,
// processes, and the user-side "hardware" (TLB-miss check before faulting
// into the port). Compiled once per FL_BITS.
#pragma once

#include "../../kernel/include/bpf.h"
#include "sim/machine.h"

namespace fl::FL_ARCH_NS {

class MachineImpl final : public Machine {
public:
	explicit MachineImpl(const Config &cfg);
	~MachineImpl() override;

	const Config &config() const override { return cfg_; }

	int64_t map_create(const MapSpec &) override;
	int64_t map_update(uint32_t index, const std::vector<uint8_t> &value, uint64_t flags) override;
	int64_t map_lookup(uint32_t index, std::vector<uint8_t> *value) override;
	int64_t map_freeze() override;
	int64_t map_close() override;
	int map_fd_hold() override;
	void map_fd_with_held(int handle, const std::function<void()> &op) override;
	void map_checked_before_freeze(const std::function<void()> &op) override;

	int64_t mmap(int pid, uint64_t addr, uint64_t len, int prot, int flags, bool map_fd,
		     uint64_t pgoff) override;
	int64_t munmap(int pid, uint64_t addr, uint64_t len) override;
	int64_t mprotect(int pid, uint64_t addr, uint64_t len, int prot) override;
	int64_t mremap(int pid, uint64_t addr, uint64_t old_len, uint64_t new_len, int flags,
		       uint64_t new_addr) override;
	int64_t madvise(int pid, uint64_t addr, uint64_t len, int advice) override;
	int64_t fork(int pid) override;
	int64_t exit(int pid) override;
	bool process_alive(int pid) const override;

	Access load(int pid, uint64_t addr, unsigned size) override;
	Access store(int pid, uint64_t addr, unsigned size, uint64_t value) override;

	uint64_t arena_alloc_pages(uint64_t addr, uint32_t cnt) override;
	void arena_free_pages(uint64_t addr, uint32_t cnt) override;
	int64_t arena_reserve_pages(uint64_t addr, uint32_t cnt) override;
	bool arena_kernel_read(uint64_t addr, void *dst, uint32_t n) override;
	bool arena_kernel_write(uint64_t addr, const void *src, uint32_t n) override;

	VmaEntry vma_at(int pid, uint64_t addr) const override;
	SmapsEntry smaps(int pid, uint64_t addr) const override;
	SmapsEntry read_smaps(int pid, uint64_t addr) override;
	const Stats &stats() const override { return stats_; }

	Violation check_invariants() override;
	Violation take_op_violation() override;
	Violation check_point_invariants(const InFlight &) override;

	uint64_t map_data_hash() const override;
	bool map_maywrite_mapped() const override;
	void kernel_poke(uint64_t map_offset, const std::vector<uint8_t> &bytes) override;
	int64_t user_page_id(int pid, uint64_t addr) const override;
	int64_t map_data_page_id(uint64_t data_page_index) const override;
	uint64_t map_writecnt() const override;
	bool map_frozen() const override;
	int page_refcount_of_map_page(uint64_t data_page_index) const override;

private:
	struct Process {
		task_struct task;
		mm_struct mm;
		bool alive = true;
	};
	// Points the port's globals (kg, kcfg, current) at this machine for the
	// duration of one entry.
	class Enter {
	public:
		Enter(const MachineImpl *m, int pid = -1);
		~Enter();
	private:
		kernel_globals *kg_;
		const kernel_config *kcfg_;
		task_struct *current_;
	};

	// A syscall on the map's fd in flight: from its fget/fdget to its
	// fput/fdput the port holds the file, so a concurrent close frees
	// neither the file nor the map; the last holder to return may (then
	// forget_map_if_freed notices). No scheduling point lies between this
	// count and the port's fdget, so it counts exactly the holders.
	class FdSyscall {
	public:
		explicit FdSyscall(MachineImpl *m) : m_(m) { m_->fd_syscalls_++; }
		~FdSyscall() { m_->fd_syscalls_--; m_->forget_map_if_freed(); }
		FdSyscall(const FdSyscall &) = delete;
		FdSyscall &operator=(const FdSyscall &) = delete;
	private:
		MachineImpl *m_;
	};
	// A task of process `pid` inside the kernel (a syscall, or the fault a
	// load/store takes) holds its mm: mmget on entry, mmput on return. In the
	// kernel every thread holds mm_users from clone(CLONE_VM) to its do_exit;
	// when one thread exits the group (do_group_exit -> zap_other_threads,
	// then do_exit -> exit_mm -> mmput), a sibling in user space dies at
	// once, a sibling in the kernel only on its way back to user mode. So the
	// machine counts the process's own reference (mm_init's 1, dropped by
	// exit) plus one per task in an op, and exit_mmap runs when the last of
	// them returns, never under a sibling's fault. False when the process has
	// exited: the op finds no process (-ESRCH).
	class MmUser {
	public:
		MmUser(MachineImpl *m, int pid);
		// mmput may run exit_mmap, whose scheduling points throw when the
		// scheduler cancels the run: hence noexcept(false). While a
		// cancelled run unwinds it only drops the count (~MachineImpl
		// tears down what is left).
		~MmUser() noexcept(false);
		explicit operator bool() const { return mm_ != nullptr; }
		MmUser(const MmUser &) = delete;
		MmUser &operator=(const MmUser &) = delete;
	private:
		MachineImpl *m_;
		mm_struct *mm_;
	};
	static constexpr unsigned int kMapFd = 3;  /* the fd number user space would most likely get */

	Process *proc(int pid);
	const Process *proc(int pid) const;
	vm_area_struct *user_vma(int pid, uint64_t addr, VmaEntry *entry) const;  // entered: kg, kcfg and current set
	bool is_map_vma(const vm_area_struct *vma) const { return map_vm_file_ && vma->vm_file == map_vm_file_; }
	file *map_fd_file() const { return kg_.files.fd_array[kMapFd]; }  /* a peek: no reference */
	bool map_file_held() const;
	void forget_map_if_freed();
	Access user_access(int pid, uint64_t addr, unsigned size, bool write, uint64_t value);
	void check_coherent(const vm_area_struct *vma, ulong addr, const u8 *bytes, unsigned n);
	std::string describe_foreign(const page *pg) const;
	Violation check_pages(bool whole) const;
	// pg is where the whole check looks: in its live area or the direct map
	// (not one vfree()d with its area, nor one in flight).
	bool in_its_place(const page *pg) const;
	void note(Invariant what, std::string detail);
	void add_neighbour_area();
	static void register_sched_tls();
	bool map_live() const;
	void check_arena_pte(size_t pid, const vm_area_struct *vma, ulong addr, const page *pg, Violation *bad) const;
	const std::unique_ptr<page> *arena_index_slot(uint64_t addr) const;
	page *arena_page_at(uint64_t addr) const;

	Config cfg_;
	mutable kernel_globals kg_;
	Stats stats_;
	std::vector<std::unique_ptr<Process>> procs_;
	file *map_vm_file_ = nullptr;  // the map's file while anything holds it
	int fd_syscalls_ = 0;          // FdSyscall: syscalls holding it through the fd (and map_fd_hold's)
	std::vector<file *> held_files_;  // map_fd_hold's references, by handle (nullptr once dropped)
	bpf_array *array_ = nullptr;   // the map while it lives (an array map)
	bpf_arena *arena_ = nullptr;   // the map while it lives (an arena map)
	int map_area_id_ = -1;
	u64 visible_pages_ = 0;        // PAGE_ALIGN(max_entries * elem_size) / PAGE_SIZE
	u64 hdr_pages_ = 0;
	Violation op_violation_;

	// check_invariants() after every op is incremental: a PTE that passed
	// the last check passes again unless its page table slot, the VMA over
	// it or the map changed. What the last passing check saw: the map (any
	// change makes the next check whole) and each mm's VMAs.
	struct VmaSeen {
		const vm_area_struct *vma;
		ulong start, end, pgoff;
		const file *vm_file;
		static VmaSeen of(const vm_area_struct *v) { return {v, v->vm_start, v->vm_end, v->vm_pgoff, v->vm_file}; }
		bool operator==(const VmaSeen &) const = default;
	};
	// The map as a check sees it. The per-PTE checks ask this plain copy,
	// not the machine: under UBSan every use of the polymorphic machine's
	// members hashes its dynamic type (-fsanitize=vptr).
	struct MapSeen {
		const void *array = nullptr, *arena = nullptr;
		const file *map_file = nullptr;
		int area_id = -1;
		u64 visible = 0, hdr = 0;
		bool operator==(const MapSeen &) const = default;
		bool is_map_vma(const vm_area_struct *vma) const { return map_file && vma->vm_file == map_file; }
		bool is_visible_data_page(const page *pg) const;
		bool is_expected_page(const vm_area_struct *vma, ulong addr, const page *pg) const;
	};
	MapSeen map_seen() const;
	void changed_ranges(mm_struct &mm, const std::vector<VmaSeen> *seen);
	bool checked_valid_ = false;
	MapSeen checked_map_;
	std::vector<std::vector<VmaSeen>> checked_vmas_;  // per pid, sorted by start
	std::vector<std::pair<ulong, ulong>> changed_;    // scratch: address ranges to recheck

	// Not kernel: the page index slots of the arena pages the allocator's
	// loads and stores found last, by arena page (hashed, one way). A slot
	// holds whatever page is there now (allocated or freed since), and
	// stays the page's slot until its index's epoch changes; the map's
	// creation and end clear them (a new arena may reuse an address).
	// Finding the page through the port's helpers (an Enter, the kernel
	// view's start, a search of the index) was half of each access. A
	// plain struct, used through a reference: under UBSan each use of a
	// member of the polymorphic machine checks its dynamic type.
	static constexpr unsigned kArenaSlots = 64;
	struct ArenaSlots {
		MachineImpl *m;       // for a miss (arena_slot)
		uint32_t page_shift;  // the machine's
		const page_index_map *index = nullptr;  // arena's kern_vm->pages
		uint64_t epoch = 0;                     // index->epoch() when filled
		uint32_t key[kArenaSlots] = {};         // 1 + (u32)addr >> PAGE_SHIFT; 0: empty
		const std::unique_ptr<page> *slot[kArenaSlots] = {};
		FL_NO_COVERAGE void clear() { *this = ArenaSlots{m, page_shift}; }  // (set-up: not the port's edges)
	};
	ArenaSlots arena_slots_{this, cfg_.page_shift};
	const std::unique_ptr<page> *arena_slot(uint64_t addr, uint32_t key, uint32_t k);
	static page *arena_run(ArenaSlots &s, uint64_t addr, uint32_t left, uint32_t *off, uint32_t *run);
};

}  // namespace fl::FL_ARCH_NS
