// SPDX-License-Identifier: GPL-2.0-only
// The deterministic machine: one ported kernel (at one Config) plus the user
// processes that call into it. Arch-neutral interface; the implementation is
// compiled once per unsigned-long width (src/sim/machine_impl.cpp).
//
// Every syscall returns what user space would see: a value >= 0, or -errno.
// Arguments are 64-bit here and are narrowed to the kernel's unsigned long the
// way the syscall ABI does it (a 32-bit kernel only ever sees 32-bit registers).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/invariants.h"
#include "base/stats.h"

namespace fl {

// Linux UAPI values, used by Programs and by the real backends alike.
namespace uapi {
inline constexpr int PROT_NONE = 0, PROT_READ = 1, PROT_WRITE = 2, PROT_EXEC = 4;
inline constexpr int MAP_SHARED = 0x01, MAP_PRIVATE = 0x02, MAP_FIXED = 0x10,
		     MAP_ANONYMOUS = 0x20, MAP_POPULATE = 0x8000,
		     MAP_FIXED_NOREPLACE = 0x100000;
inline constexpr int MREMAP_MAYMOVE = 1, MREMAP_FIXED = 2, MREMAP_DONTUNMAP = 4;
inline constexpr int MADV_DONTNEED = 4, MADV_DONTFORK = 10, MADV_DOFORK = 11;
inline constexpr uint32_t BPF_F_RDONLY = 1u << 3, BPF_F_WRONLY = 1u << 4,
			  BPF_F_RDONLY_PROG = 1u << 7, BPF_F_WRONLY_PROG = 1u << 8,
			  BPF_F_MMAPABLE = 1u << 10, BPF_F_SEGV_ON_FAULT = 1u << 17,
			  BPF_F_NO_USER_CONV = 1u << 18;
inline constexpr uint32_t BPF_MAP_TYPE_ARRAY = 2, BPF_MAP_TYPE_ARENA = 33;
inline constexpr uint64_t BPF_ANY = 0, BPF_NOEXIST = 1, BPF_EXIST = 2;
inline constexpr int sigbus = 7, sigsegv = 11;  // SIGBUS, SIGSEGV (macros in <csignal>)
}  // namespace uapi

// The machine's RAM per width (what vmalloc may hand out in total). 64-bit
// is large so that maps above 4 GiB of data are reachable (sparse pages
// make them free); real kernels with less RAM fail such maps with ENOMEM.
inline constexpr uint64_t kMachineRam32 = uint64_t(1) << 30, kMachineRam64 = uint64_t(64) << 30;

struct MapSpec {
	uint32_t key_size = 4;
	uint32_t value_size = 8;
	uint32_t max_entries = 1024;
	uint32_t map_flags = uapi::BPF_F_MMAPABLE;
	uint32_t map_type = uapi::BPF_MAP_TYPE_ARRAY;  // or BPF_MAP_TYPE_ARENA
	uint64_t map_extra = 0;                        // arena: the user VMA start it must have (0: any)
	bool operator==(const MapSpec &) const = default;
};

// A user load or store: either the bytes (loads), or the signal it raised.
struct Access {
	int sig = 0;                 // 0, SIGBUS or SIGSEGV
	std::vector<uint8_t> bytes;  // loaded bytes (little endian), empty for stores
};

// The VMA containing an address, as /proc/PID/maps tells it: what the
// contents shadow asks on every load and store, without smaps' page count
// and flag mnemonics. shared: VM_SHARED (smaps' "sh").
struct VmaEntry {
	bool found = false;
	uint64_t start = 0, end = 0, pgoff = 0;
	bool shared = false;
};

// What /proc/PID/smaps says about the VMA containing an address: its maps
// line and more.
struct SmapsEntry : VmaEntry {
	uint64_t rss_pages = 0;
	std::string vm_flags;  // smaps "VmFlags:" mnemonics, e.g. "rd wr sh mr mw me ms mm dd"
};

// The ops inside the kernel at a scheduling point, as the interleaving
// runner counts them (check/interleave/point_invariants.h): what may leave
// the counts the point invariants compare unbalanced for a moment.
struct InFlight {
	int ops = 0;           // tasks inside an op
	int writers = 0;       // map_update_elem, and mmap without MAP_FIXED: one write-active count each, not yet a VMA
	bool closing = false;  // munmap, mremap, mprotect, madvise, exit, MAP_FIXED mmap: VMAs detached before ->close,
	                       // split VMAs ->open'ed before they are linked
	bool forking = false;  // fork: the child's VMAs linked before ->open, counted once the child process is
	bool moving = false;   // mremap: PTEs off the old range before they are set in the new one
};

class Machine {
public:
	virtual ~Machine() = default;
	virtual const Config &config() const = 0;
	uint64_t page_size() const { return uint64_t(1) << config().page_shift; }

	// bpf(2) on the program's single map. map_create returns the fd.
	virtual int64_t map_create(const MapSpec &) = 0;
	virtual int64_t map_update(uint32_t index, const std::vector<uint8_t> &value, uint64_t flags) = 0;
	virtual int64_t map_lookup(uint32_t index, std::vector<uint8_t> *value) = 0;
	virtual int64_t map_freeze() = 0;
	virtual int64_t map_close() = 0;
	// For the linearizability candidates (src/check/interleave/linearize.cpp,
	// its_file_beside_a_close): a syscall on the map fd holds the file from
	// the fdget at its start to its end, so one that began before another
	// thread's close of the fd runs as if the fd were open. map_fd_hold
	// takes that reference now, for an op that runs later (fget, counted
	// as a syscall in flight, so the map outlives the close): a handle, or
	// -EBADF when the fd is closed. map_fd_with_held runs `op` with the held
	// file back in the fd table (where the op's own fdget finds it), then
	// takes it out again and drops the hold.
	virtual int map_fd_hold() = 0;
	virtual void map_fd_with_held(int handle, const std::function<void()> &op) = 0;
	// For the same candidates (its_check_beside_a_freeze): map_update_elem
	// checks the fd's write permission (map_get_sys_perms, which reads
	// frozen) at its start and writes at its end, so one whose check came
	// before another thread's freeze stored frozen runs, after that freeze,
	// as it did: `op` runs with the array map not frozen, which is then
	// restored.
	virtual void map_checked_before_freeze(const std::function<void()> &op) = 0;

	// Memory-management syscalls, in process `pid` (0 is the first process).
	// mmap: fd < 0 means MAP_ANONYMOUS. pgoff is in PAGE_SIZE units; the
	// front door turns it into the width's syscall (mmap with a byte offset on
	// 64-bit, mmap2 with 4K units on 32-bit) or hands it to f_op->mmap as is.
	virtual int64_t mmap(int pid, uint64_t addr, uint64_t len, int prot, int flags, bool map_fd,
			     uint64_t pgoff) = 0;
	virtual int64_t munmap(int pid, uint64_t addr, uint64_t len) = 0;
	virtual int64_t mprotect(int pid, uint64_t addr, uint64_t len, int prot) = 0;
	virtual int64_t mremap(int pid, uint64_t addr, uint64_t old_len, uint64_t new_len, int flags,
			       uint64_t new_addr) = 0;
	virtual int64_t madvise(int pid, uint64_t addr, uint64_t len, int advice) = 0;
	virtual int64_t fork(int pid) = 0;  // returns the child's pid
	virtual int64_t exit(int pid) = 0;
	virtual bool process_alive(int pid) const = 0;

	// User loads/stores of 1..8 bytes, faulting through the page tables.
	virtual Access load(int pid, uint64_t addr, unsigned size) = 0;
	virtual Access store(int pid, uint64_t addr, unsigned size, uint64_t value) = 0;

	// The arena kfuncs, as a BPF program calls them (only on an arena map;
	// otherwise -EINVAL). addr is a user address (0: anywhere), cnt pages.
	// alloc returns the user address, or 0 for NULL.
	virtual uint64_t arena_alloc_pages(uint64_t addr, uint32_t cnt) = 0;
	virtual void arena_free_pages(uint64_t addr, uint32_t cnt) = 0;
	virtual int64_t arena_reserve_pages(uint64_t addr, uint32_t cnt) = 0;
	// Kernel-side access to arena memory through kern_vm_start + (u32)addr,
	// as a BPF program's arena load/store: false where no page is present.
	virtual bool arena_kernel_read(uint64_t addr, void *dst, uint32_t n) = 0;
	virtual bool arena_kernel_write(uint64_t addr, const void *src, uint32_t n) = 0;

	virtual VmaEntry vma_at(int pid, uint64_t addr) const = 0;
	virtual SmapsEntry smaps(int pid, uint64_t addr) const = 0;
	// The user's read of /proc/PID/smaps (a Program's smaps op): smaps()
	// under the mm's mmap_lock for read, as the seq_file's m_start takes it,
	// so it never sees a VMA mid-edit. smaps() is the harness's own look.
	virtual SmapsEntry read_smaps(int pid, uint64_t addr) = 0;
	virtual const Stats &stats() const = 0;

	// The invariants (see invariants.h), checked over the whole machine.
	// Returns the first one that does not hold, or Invariant::none.
	virtual Violation check_invariants() = 0;
	// Violations noticed while an operation ran (e.g. a load that returned
	// bytes differing from the kernel's view). Cleared by the call.
	virtual Violation take_op_violation() = 0;

	// A hash of the map's visible data bytes (0 without a map): the
	// interleaving explorer's "frozen bytes never change" ghost invariant.
	virtual uint64_t map_data_hash() const = 0;
	// An array map VMA that may become writable (VM_MAYWRITE) is in some
	// address space: with map_frozen(), the ghost invariant "frozen => no
	// writer" (a successful freeze excludes every such VMA, and none can be
	// made after it).
	virtual bool map_maywrite_mapped() const = 0;

	// The invariants that hold at every scheduling point, not only when no
	// task is in the kernel (point_invariants.h has the windows where each
	// legitimately does not hold and what the caller reports in flight).
	virtual Violation check_point_invariants(const InFlight &) = 0;

	// Test hooks.
	// Write through the kernel's view (as a BPF program would), bypassing
	// bpf(2): used by the differential runner to resynchronise data after a
	// documented difference.
	virtual void kernel_poke(uint64_t map_offset, const std::vector<uint8_t> &bytes) = 0;
	// Which page backs a user address (for tests): -1 none, else an id that
	// is equal for equal pages within one machine.
	virtual int64_t user_page_id(int pid, uint64_t addr) const = 0;
	virtual int64_t map_data_page_id(uint64_t data_page_index) const = 0;
	virtual uint64_t map_writecnt() const = 0;
	virtual bool map_frozen() const = 0;
	virtual int page_refcount_of_map_page(uint64_t data_page_index) const = 0;
};

std::unique_ptr<Machine> make_machine(const Config &);

}  // namespace fl
