// SPDX-License-Identifier: GPL-2.0-only
// Program: a map geometry plus a sequence of user-space operations. The one
// vocabulary shared by replay, fuzzers, property tests, proofs and the real
// backends. Text form: program_text.cpp; binary (fuzzer) form: program_binary.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/invariants.h"
#include "base/sched/record.h"
#include "sim/machine.h"

namespace fl {

// A number that may be in pages ("4p"): resolved against the page size of the
// configuration that runs the program. Pages scale modulo 2^64.
struct Num {
	uint64_t value = 0;
	bool pages = false;
	uint64_t resolve(unsigned page_shift) const { return pages ? value << page_shift : value; }
	bool operator==(const Num &) const = default;
};

// An address: a mapping label plus a signed byte/page offset.
struct Addr {
	int label = -1;  // index into Program::labels
	Num offset;      // added to the label's address
	bool negative = false;
	bool operator==(const Addr &) const = default;
};

enum class OpKind : uint8_t {
	mmap,      // mmap LABEL len= pgoff= prot= flags= [at=ADDR]   (the map's fd)
	reserve,   // reserve LABEL len=     (anonymous PROT_NONE region for MAP_FIXED targets)
	munmap,    // munmap ADDR len=
	mprotect,  // mprotect ADDR len= prot=
	mremap,    // mremap ADDR len= new_len= [flags=maymove,fixed,dontunmap] [to=ADDR] [as=LABEL]
	madvise,   // madvise ADDR len= advice=dontneed|dontfork|dofork
	fork,      // fork            (child gets the next pid)
	exit,      // exit            (the process given by proc=)
	load,      // load ADDR size=1|2|4|8
	store,     // store ADDR size= val=
	update,    // update idx= val= [flags=any|noexist|exist]
	lookup,    // lookup idx=
	freeze,    // freeze
	close,     // close           (the map fd)
	smaps,     // smaps ADDR      (VmFlags and Rss of the VMA)
	// The arena kfuncs, as a BPF program calls them (the host cannot run
	// these from user space; the oracle's arena Programs leave them out):
	arena_alloc,    // arena_alloc len= [at=ADDR] [as=LABEL]  bpf_arena_alloc_pages; NULL shows as -ENOMEM
	arena_free,     // arena_free ADDR len=                   bpf_arena_free_pages
	arena_reserve,  // arena_reserve ADDR len=                bpf_arena_reserve_pages
};
inline constexpr int kOpKinds = int(OpKind::arena_reserve) + 1;

struct Op {
	OpKind kind = OpKind::load;
	int proc = 0;
	int label = -1;  // mmap/reserve: label defined; mremap: "as=" label (or -1)
	Addr addr;       // target address (munmap, mprotect, mremap, madvise, load, store, smaps)
	Num len, new_len;
	uint64_t pgoff = 0;  // mmap: file offset in pages (vm_pgoff units)
	int prot = 0;
	int flags = 0;       // mmap: MAP_*; mremap: MREMAP_*; update: BPF_ANY/NOEXIST/EXIST
	int advice = 0;
	bool has_at = false;
	Addr at;             // mmap: MAP_FIXED target; mremap: "to=" target
	unsigned size = 8;   // load/store width
	uint64_t value = 0;  // store/update value
	uint32_t index = 0;  // update/lookup element
	int thread = -1;     // "thread=N": runs as task TN of a concurrent group (-1: sequential)
	bool operator==(const Op &) const = default;
};

// Which configurations a program (or part of it) pins; empty = all.
struct Header {
	std::optional<Arch> arch;
	std::optional<Patch> patch;
	std::optional<unsigned> page_shift;
	std::optional<Door> door;
	std::optional<bool> bypass_spec_v1;
	std::optional<Historic> historic;  // "historic NAME": a historical bug level (interleave tests)
	std::optional<ArenaFix> arena;  // "arena fork_uaf": a historical arena level
	bool operator==(const Header &) const = default;
};

// "expect violation foreign_page if patch=v1 arch=32 door=regular,direct"
// "expect ok"
// The first expectation whose condition matches a configuration applies;
// with none, "ok" is expected.
struct Expectation {
	Invariant violation = Invariant::none;  // none = ok
	bool difference = false;                // "expect difference": an unexplained eager/lazy difference
	ConfigFilter when;
	bool operator==(const Expectation &o) const {
		return violation == o.violation && difference == o.difference;
	}
};

// A schedule record of a concurrent group ("at T0 finish_fault:pte_offset_map_lock#1
// switch T1", "... fail", "... nmi N0"): src/base/sched/record.h.
using ScheduleRecord = sched::Record;

struct Program {
	Header header;
	MapSpec map;
	std::vector<std::string> labels;
	std::vector<Op> ops;
	std::vector<Expectation> expects;
	// The ops with thread >= 0 form concurrent groups: a group ends at an op
	// without thread= or at a "join" line (a barrier: every thread finished
	// the group before anything after it runs). The ops between and after
	// groups run sequentially while no group thread runs. A thread is one
	// task over the whole Program, so a record's "LABEL#K" counts over all
	// of its groups. The schedule steers the groups (empty: the default
	// schedule, no preemption).
	std::vector<ScheduleRecord> schedule;
	// "join" lines: the op indices a barrier precedes (ascending; each
	// between two thread= ops).
	std::vector<uint32_t> joins;
	// "points access": a scheduling point at every declared shared access
	// too (Scheduler::access_points), not only at locks and atomics, so a
	// schedule found with them replays from the text alone.
	bool access_points = false;

	ConfigFilter configs() const;  // every configuration the header allows
	int label_index(const std::string &name) const;  // -1 if unknown
	int add_label(const std::string &name);          // existing index or a new one
};

// A skipped op's event info when its process is gone (Labels::prepare) or
// was killed under its fault (Execution::run); the linearizability
// candidates write it back in the run's pid names.
inline std::string skipped_no_process(int pid) { return "skipped: no process " + std::to_string(pid); }

// The addresses a running Program's labels are bound to, shared by every
// backend (the machine's Execution, the host executor).
class Labels {
public:
	// `bits`: the width of unsigned long; resolved addresses wrap there.
	Labels(size_t count, unsigned bits) : bound_(count), addr_(count), bits_(bits) {}
	// The address an Addr names now, if its label is bound.
	bool resolve(const Addr &, unsigned page_shift, uint64_t *out) const;
	// A successful mmap/mremap (ret >= 0) binds `label` (if any) to ret.
	void bind(int label, int64_t ret);
	// Why `op` cannot run: its address or target label is not bound, or
	// its process is gone (bpf(2) ops run regardless). Empty: it runs, and
	// *addr / *at hold its address and target (0 where it has none).
	std::string prepare(const Program &, const Op &, bool proc_alive, unsigned page_shift, uint64_t *addr,
			    uint64_t *at) const;

private:
	std::vector<bool> bound_;
	std::vector<uint64_t> addr_;
	unsigned bits_;
};

const char *to_string(OpKind);
std::optional<OpKind> parse_op_kind(const std::string &);

}  // namespace fl
