// SPDX-License-Identifier: GPL-2.0-only
// Byte string -> allocator Program (buddy_program.h), total and
// deterministic. Sizes lean to small objects (the caches' orders) with now
// and then a large or invalid one; targets lean to live objects.
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

u64 size(Bytes &in)
{
	const u8 b = in.u8();
	return b < 224 ? kSizes[b % std::size(kSizes)] : 1 + in.u16() % 3000;
}

}  // namespace

BuddyProgram decode_buddy_program(const u8 *data, size_t n, buddy_level level)
{
	Bytes in(data, n);
	BuddyProgram p;
	p.level = level;
	while (!in.empty() && p.ops.size() < kMaxBuddyOps) {
		BuddyOp op;
		switch (in.u8() % 16) {
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
			break;
		case 12:
			op.kind = BuddyOp::nmi_alloc;
			op.size = size(in);
			break;
		case 13: case 14:
			op.kind = BuddyOp::store;
			op.target = Target{Target::live, in.u8()};
			op.value = in.u64();
			break;
		default:
			op.kind = in.u8() % 4 ? BuddyOp::alloc : BuddyOp::reinit;
			op.size = 64;
			break;
		}
		if (op.kind == BuddyOp::reinit)
			op.size = 0;  // only what the text form carries
		p.ops.push_back(op);
	}
	return p;
}

}  // namespace fl::libarena
