// SPDX-License-Identifier: GPL-2.0-only
// Byte string -> allocator Program (buddy_program.h), total and
// deterministic. Sizes lean to small objects (the caches' orders) with now
// and then a large or invalid one; targets lean to live objects. CPUs 0-3,
// NMI handler blocks (up to 3 calls, nested 2 deep), joins and bursts; lock
// failures and where a schedule runs a handler are the fuzz target's
// schedule (fuzz/buddy_fuzzer.cpp), not the Program's.
#include <algorithm>
#include <iterator>

#include "check/byte_reader.h"
#include "libarena/buddy_program.h"

namespace fl::libarena {

namespace {

constexpr u64 kSizes[] = {1, 8, 16, 17, 64, 100, 256, 1000, 4096, 16350, 70000, 0, (512u << 10) + 1, 512u << 10};

Target target(Bytes &in)
{
	const u8 b = in.u8();
	Target t;
	switch (b % 16) {
	case 0: t.kind = Target::stale; break;
	case 1: t.kind = Target::interior; break;
	case 2: t.kind = Target::unaligned; break;
	case 3: t.kind = Target::null; return t;
	default: t.kind = Target::live; break;
	}
	t.n = b >> 4;
	return t;
}

// An NMI's point: between ops (half the time) or one of the named points.
std::string nmi_point(Bytes &in)
{
	const u8 b = in.u8();
	return b % 2 ? "" : kBuddyNmiPoints[(b / 2) % kBuddyNmiPointCount];
}

u64 size(Bytes &in)
{
	const u8 b = in.u8();
	return b < 224 ? kSizes[b % std::size(kSizes)] : 1 + in.u16() % 3000;
}

// A handler block on `cpu`: 1-3 calls, a nested block while depth allows.
BuddyOp nmi_block(Bytes &in, u8 cpu, int depth)
{
	BuddyOp block;
	block.kind = BuddyOp::nmi;
	block.cpu = cpu;
	block.at = nmi_point(in);
	const unsigned calls = 1 + in.u8() % 3;
	for (unsigned k = 0; k < calls; k++) {
		BuddyOp call;
		call.cpu = cpu;
		const u8 c = in.u8();
		switch (c % 8) {
		case 0: case 1: case 2:
			call.kind = BuddyOp::alloc;
			call.size = size(in);
			break;
		case 3: case 4:
			call.kind = BuddyOp::free;
			call.target = target(in);
			break;
		case 5:
			call.kind = BuddyOp::bulk;
			call.size = size(in);
			call.norder = in.u8() % 3;
			break;
		case 6:
			call.kind = BuddyOp::free_bulk;
			for (unsigned n = 1 + in.u8() % 3; n; n--)
				call.targets.push_back(target(in));
			break;
		default:
			if (depth + 1 < 2) {
				call = nmi_block(in, cpu, depth + 1);
			} else {
				call.kind = BuddyOp::store;
				call.target = Target{Target::live, in.u8()};
				call.value = in.u64();
			}
			break;
		}
		block.body.push_back(call);
	}
	return block;
}

}  // namespace

const char *const kBuddyNmiPoints[] = {
	"buddy_lock:held",	   "buddy_cache_alloc:claimed",	     "buddy_cache_alloc:pop",
	"buddy_cache_free:claimed", "buddy_cache_free:push",	     "buddy_cache_refill:count_checked",
	"buddy_cache_spill:count_checked", "buddy_xfer_trylock:try", "buddy_xfer_unlock:release",
};
const size_t kBuddyNmiPointCount = std::size(kBuddyNmiPoints);

BuddyProgram decode_buddy_program(const u8 *data, size_t n, buddy_level level)
{
	Bytes in(data, n);
	BuddyProgram p;
	p.level = level;
	p.ops.reserve(std::min(n, kMaxBuddyOps));  // (an op is about 150 bytes: reserved, not regrown)
	while (!in.empty() && p.ops.size() < kMaxBuddyOps) {
		BuddyOp op;
		const u8 k = in.u8();
		// the op byte's high bits pick the CPU
		op.cpu = u8((k >> 4) % BUDDY_NR_CPUS);
		switch (k % 16) {
		case 0: case 1: case 2: case 3: case 4:
			op.kind = BuddyOp::alloc;
			op.size = size(in);
			break;
		case 5:
			op.kind = BuddyOp::bulk;
			op.size = size(in);
			op.norder = in.u8() % 6;
			break;
		case 6: case 7: case 8:
			op.kind = BuddyOp::free;
			op.target = target(in);
			break;
		case 9:
			op.kind = BuddyOp::free;
			op.target = target(in);
			op.has_nmi = true;
			op.nmi_target = target(in);
			break;
		case 10: {
			op.kind = BuddyOp::free_bulk;
			const unsigned k = in.u8() % 5;
			for (unsigned i = 0; i < k; i++)
				op.targets.push_back(target(in));
			break;
		}
		case 11:
			op.kind = BuddyOp::nmi_free;
			op.target = target(in);
			op.at = nmi_point(in);
			break;
		case 12:
			op.kind = BuddyOp::nmi_alloc;
			op.size = size(in);
			op.at = nmi_point(in);
			break;
		case 13: case 14:
			op.kind = BuddyOp::store;
			op.target = Target{Target::live, in.u8()};
			op.value = in.u64();
			break;
		default: {
			const u8 r = in.u8();
			op.kind = r % 4 ? BuddyOp::alloc : BuddyOp::reinit;
			if (has_caches(level) && r % 8 == 1)
				op.kind = BuddyOp::drain;
			op.size = 64;
			if (r % 8 == 2 || r % 8 == 6) {
				op = nmi_block(in, op.cpu, 0);
			} else if (r % 8 == 3 && !p.ops.empty() && (p.joins.empty() || p.joins.back() != p.ops.size())) {
				p.joins.push_back(p.ops.size());  // a join before the next op
				continue;
			}
			break;
		}
		}
		if (op.kind == BuddyOp::reinit || op.kind == BuddyOp::drain)
			op.size = 0;  // only what the text form carries
		// A burst, as the generator writes them (buddy_generate.cpp's
		// gen_repeats): an op byte's top bits (the CPU takes bits 4-5) at 3
		// repeat an alloc, free or NMI call 2-16 times, which fills a LIFO to
		// its spill and empties it to a refill in a few bytes.
		for (unsigned n = comes_in_bursts(op) && k >> 6 == 3 ? 2 + in.u8() % 15 : 1; n-- && p.ops.size() < kMaxBuddyOps;)
			p.ops.push_back(op);
	}
	if (!p.joins.empty() && p.joins.back() == p.ops.size())
		p.joins.pop_back();  // a join stands between two ops
	return p;
}

}  // namespace fl::libarena
