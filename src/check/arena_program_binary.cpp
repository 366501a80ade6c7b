// SPDX-License-Identifier: GPL-2.0-only
// Byte string -> an arena Program: a BPF_MAP_TYPE_ARENA map, mostly valid,
// and user-space ops on its mapping (mmap in one or more processes, fork,
// partial munmap/mprotect/madvise that the arena must refuse to split,
// mremap moves and resizes, loads and stores that fault pages in).
// Offsets are in pages relative to the arena's size, so that "one page past
// the end" means the same at every page size.
#include "check/arena_program_binary.h"

#include <iterator>

#include "check/byte_reader.h"
#include "check/program_text.h"

namespace fl {

namespace {

constexpr uint32_t kEntries[] = {1, 2, 3, 4, 8, 16, 64, 256};
constexpr int kMaxProcs = 8;

class ArenaDecoder {
public:
	ArenaDecoder(const uint8_t *data, size_t size, bool kfuncs) : in_(data, size), kfuncs_(kfuncs) {}
	Program run();

private:
	void map_spec();
	void op();
	Num len_choice();  // around the arena's size
	Addr addr_choice();
	int proc() { return int(in_.pick(unsigned(procs_))); }
	static Op make(OpKind kind) { return default_op(kind); }

	// Labels are added when an op first defines them, so that the text
	// form (which defines a label where it is first bound) parses back to
	// the same indices; ops refer only to labels defined before them.
	int label(int which)
	{
		if (label_[which] < 0)
			label_[which] = p_.add_label(which ? "B" : "A");
		return label_[which];
	}
	bool any_label() const { return label_[0] >= 0 || label_[1] >= 0; }

	Bytes in_;
	bool kfuncs_;
	Program p_;
	int label_[2] = {-1, -1};
	uint64_t pages_ = 1;
	int procs_ = 1;
};

void ArenaDecoder::map_spec()
{
	MapSpec &m = p_.map;
	m.map_type = uapi::BPF_MAP_TYPE_ARENA;
	m.key_size = m.value_size = 0;
	m.map_flags = uapi::BPF_F_MMAPABLE;
	const uint8_t b = in_.u8();
	m.max_entries = kEntries[b % std::size(kEntries)];
	switch (b >> 5) {
	case 0: m.map_flags |= uapi::BPF_F_SEGV_ON_FAULT; break;
	case 1: if (b & 16) m.max_entries = (b & 8) ? 0 : (1u << 20) + 1; break;  // EINVAL, E2BIG
	case 2: if (b & 16) m.map_flags = (b & 8) ? 0 : uapi::BPF_F_MMAPABLE | uapi::BPF_F_RDONLY_PROG; break;
	case 3: if (b & 16) m.key_size = 4; else if (b & 8) m.map_extra = (b & 4) ? 0x123 : 0xfffff000; break;
	default: break;
	}
	pages_ = m.max_entries ? m.max_entries : 1;
}

Num ArenaDecoder::len_choice()
{
	switch (in_.pick(8)) {
	case 0: return Num{1, true};
	case 1: return Num{pages_ > 1 ? pages_ - 1 : 1, true};
	case 2: return Num{pages_ + 1, true};
	case 3: return Num{2 * pages_, true};
	case 4: return Num{uint64_t(in_.pick(3)) * 4096 + 1, false};
	default: return Num{pages_, true};
	}
}

Addr ArenaDecoder::addr_choice()
{
	Addr a;
	const int which = int(in_.pick(4) == 0);  // mostly A
	a.label = label_[which] >= 0 ? label_[which] : label_[1 - which];
	const uint8_t b = in_.u8();
	if (b < 200)
		a.offset = Num{b % (pages_ + 1), true};
	else
		a.offset = Num{uint64_t(b) * 8 % 4096 + (b & 1 ? 4093 : 0), false};  // inside a page, or across two
	return a;
}

void ArenaDecoder::op()
{
	const uint8_t k = in_.u8();
	const int pid = proc();
	Op o;
	// Until something is mapped, every op is an mmap: addresses need a label.
	switch (any_label() ? k % 16 : 0) {
	case 0: case 1: {
		o = make(OpKind::mmap);
		const int a_before = label_[0];  // "at=A" names A as bound before this line
		o.label = label(int(in_.pick(3) == 0));  // mostly A
		o.len = len_choice();
		const uint8_t v = in_.u8();
		if (v % 7 == 0) o.pgoff = 1;
		if (v % 5 == 0) o.prot = uapi::PROT_READ;
		if (v % 11 == 0) o.prot = uapi::PROT_NONE;
		if (v % 13 == 0) o.prot |= uapi::PROT_EXEC;
		if (v % 9 == 0) o.flags = uapi::MAP_PRIVATE;
		if (v % 6 == 1) o.flags |= uapi::MAP_POPULATE;
		if (v % 4 == 3 && a_before >= 0) {  // at A's address (a second process, or after munmap)
			o.has_at = true;
			o.at.label = a_before;
			o.flags |= (v & 64) ? uapi::MAP_FIXED : 0;
		}
		break;
	}
	case 2:
		o = make(OpKind::munmap);
		o.addr = addr_choice();
		o.len = len_choice();
		break;
	case 3:
		o = make(OpKind::mprotect);
		o.addr = addr_choice();
		o.len = len_choice();
		o.prot = int(in_.pick(4)) & (uapi::PROT_READ | uapi::PROT_WRITE);
		break;
	case 4: {
		o = make(OpKind::mremap);
		o.addr = addr_choice();
		o.len = len_choice();
		o.new_len = len_choice();
		const uint8_t f = in_.u8();
		o.flags = (f & 1) ? uapi::MREMAP_MAYMOVE : 0;
		if ((f & 6) == 6) {
			o.flags |= uapi::MREMAP_FIXED;
			o.has_at = true;
			o.at = Addr{o.addr.label, Num{pages_ * 4 + f % 4, true}, false};
		}
		if (f & 8) o.flags |= uapi::MREMAP_DONTUNMAP;
		if (f & 16) o.label = label(1);  // the moved mapping becomes B
		break;
	}
	case 5: {
		o = make(OpKind::madvise);
		o.addr = addr_choice();
		o.len = len_choice();
		const unsigned a = in_.pick(3);
		o.advice = a == 0 ? uapi::MADV_DONTNEED : a == 1 ? uapi::MADV_DONTFORK : uapi::MADV_DOFORK;
		break;
	}
	case 6:
		if (procs_ < kMaxProcs) {
			o = make(OpKind::fork);
			procs_++;
		} else {
			o = make(OpKind::exit);
		}
		break;
	case 7:
		o = make(OpKind::exit);
		if (procs_ == 1) {  // never the first process: keep something to look at
			o.kind = OpKind::smaps;
			o.addr = addr_choice();
		}
		break;
	case 8: case 9: case 10: {
		o = make(OpKind::load);
		o.addr = addr_choice();
		o.size = 1u << in_.pick(4);
		break;
	}
	case 11: case 12: {
		o = make(OpKind::store);
		o.addr = addr_choice();
		o.size = 1u << in_.pick(4);
		o.value = in_.u64();
		break;
	}
	case 13:
		o = make(OpKind::smaps);
		o.addr = addr_choice();
		break;
	case 14:
		o = make(in_.pick(8) == 0 ? OpKind::close : OpKind::smaps);
		if (o.kind == OpKind::smaps)
			o.addr = addr_choice();
		break;
	default:
		if (!kfuncs_) {
			o = make(OpKind::load);
			o.addr = addr_choice();
			break;
		}
		switch (in_.pick(3)) {
		case 0:
			o = make(OpKind::arena_alloc);
			if (in_.pick(2)) {
				o.has_at = true;
				o.at = addr_choice();
			}
			o.len = Num{1 + in_.pick(unsigned(pages_ + 1)), true};
			break;
		case 1:
			o = make(OpKind::arena_free);
			o.addr = addr_choice();
			o.len = Num{1 + in_.pick(unsigned(pages_ + 1)), true};
			break;
		default:
			o = make(OpKind::arena_reserve);
			o.addr = addr_choice();
			o.len = Num{1 + in_.pick(unsigned(pages_ + 1)), true};
			break;
		}
		break;
	}
	o.proc = o.kind == OpKind::exit ? 1 + pid % (procs_ - 1) : pid;
	p_.ops.push_back(o);
}

Program ArenaDecoder::run()
{
	p_.header.patch = Patch::pre;  // the array map's patch level does not touch the arena
	map_spec();
	// Nearly always start with the mapping that everything else uses.
	if (in_.pick(16)) {
		Op first = make(OpKind::mmap);
		first.label = label(0);
		first.len = Num{pages_, true};
		p_.ops.push_back(first);
	}
	while (!in_.empty() && p_.ops.size() < size_t(kMaxArenaOps))
		op();
	return p_;
}

}  // namespace

Program decode_arena_program(const uint8_t *data, size_t size, bool kfuncs)
{
	return ArenaDecoder(data, size, kfuncs).run();
}

}  // namespace fl
