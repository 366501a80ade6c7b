// SPDX-License-Identifier: GPL-2.0-only
// The arena map in the port (src/kernel/kernel/bpf/arena.cpp), through the
// Machine API, and the arena Programs' binary form. Semantics from
// docs/arena.md and kernel/bpf/arena.c.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "check/arena_program_binary.h"
#include "check/execution.h"
#include "check/program_text.h"
#include "sim/machine.h"

namespace fl {

namespace {

constexpr int RW = uapi::PROT_READ | uapi::PROT_WRITE;

MapSpec arena_spec(uint32_t pages, uint32_t flags = uapi::BPF_F_MMAPABLE)
{
	MapSpec m;
	m.map_type = uapi::BPF_MAP_TYPE_ARENA;
	m.key_size = m.value_size = 0;
	m.max_entries = pages;
	m.map_flags = flags;
	return m;
}

std::unique_ptr<Machine> arena_machine(ArenaFix fix, uint32_t pages, int64_t *base)
{
	Config c;
	c.arena = fix;
	auto m = make_machine(c);
	EXPECT_EQ(m->map_create(arena_spec(pages)), 3);
	*base = m->mmap(0, 0, pages * 4096ull, RW, uapi::MAP_SHARED, true, 0);
	EXPECT_GT(*base, 0);
	return m;
}

}  // namespace

TEST(PortArena, CreateChecks)
{
	auto m = make_machine(Config{});
	EXPECT_EQ(m->map_create(arena_spec(0)), -EINVAL);
	EXPECT_EQ(m->map_create(arena_spec(4, 0)), -EINVAL);  // BPF_F_MMAPABLE required
	EXPECT_EQ(m->map_create(arena_spec((1u << 20) + 1)), -E2BIG);  // more than 4 GiB
	MapSpec crossing = arena_spec(2);
	crossing.map_extra = 0xfffff000;
	EXPECT_EQ(m->map_create(crossing), -ERANGE);
	Config c32;
	c32.arch = Arch::A32;  // arena.o is built only for 64-bit kernels
	EXPECT_EQ(make_machine(c32)->map_create(arena_spec(4)), -EINVAL);
}

TEST(PortArena, UserTouchAllocatesAndFreeZapsEveryMapping)
{
	int64_t a = 0;
	auto m = arena_machine(ArenaFix::fixed, 4, &a);
	EXPECT_EQ(uint64_t(a) >> 32, (uint64_t(a) + 4 * 4096 - 1) >> 32);  // never crosses 4 GiB
	EXPECT_EQ(m->store(0, a + 8, 8, 0x1234).sig, 0);  // allocates page 0
	EXPECT_EQ(m->arena_alloc_pages(a, 1), 0u);       // taken by the fault
	uint64_t v = 0;
	ASSERT_TRUE(m->arena_kernel_read(a + 8, &v, 8));  // the kernel view is the same page
	EXPECT_EQ(v, 0x1234u);
	EXPECT_FALSE(m->arena_kernel_read(a + 4096, &v, 8));  // page 1: nothing there yet
	m->arena_free_pages(a, 1);
	EXPECT_EQ(m->user_page_id(0, a), -1);  // zapped
	EXPECT_EQ(m->load(0, a + 8, 8).bytes, std::vector<uint8_t>(8, 0));  // a fresh zero page
	EXPECT_EQ(m->check_invariants().what, Invariant::none);
	EXPECT_EQ(m->take_op_violation().what, Invariant::none);
}

TEST(PortArena, FixedLevelRefusesSplitsMovesAndCopies)
{
	int64_t a = 0;
	auto m = arena_machine(ArenaFix::fixed, 4, &a);
	EXPECT_EQ(m->munmap(0, a + 4096, 4096), -EINVAL);  // ->may_split
	EXPECT_EQ(m->mremap(0, a, 4 * 4096, 4 * 4096, uapi::MREMAP_MAYMOVE | uapi::MREMAP_FIXED, a + (1 << 24)),
		  -EINVAL);
	EXPECT_EQ(m->fork(0), 1);
	EXPECT_EQ(m->load(1, a, 1).sig, uapi::sigsegv);  // VM_DONTCOPY
	EXPECT_EQ(m->check_invariants().what, Invariant::none);
}

TEST(PortArena, ForkUafLevelZapsThroughAFreedVma)
{
	int64_t a = 0;
	auto m = arena_machine(ArenaFix::fork_uaf, 4, &a);
	EXPECT_EQ(m->store(0, a, 1, 1).sig, 0);
	EXPECT_EQ(m->fork(0), 1);
	EXPECT_EQ(m->load(1, a, 1).sig, 0);  // the child has the VMA
	EXPECT_EQ(m->munmap(0, a, 4 * 4096), 0);
	EXPECT_EQ(m->take_op_violation().what, Invariant::none);
	m->arena_free_pages(a, 1);
	EXPECT_EQ(m->take_op_violation().what, Invariant::use_after_free);
	// and the child's PTE was never zapped: it maps the freed page
	EXPECT_EQ(m->check_invariants().what, Invariant::foreign_page);
}

TEST(PortArena, MremapUafLevelFreesTheSharedEntryTwice)
{
	int64_t a = 0;
	auto m = arena_machine(ArenaFix::mremap_uaf, 4, &a);
	EXPECT_EQ(m->mremap(0, a, 4 * 4096, 2 * 4096, 0, 0), a);  // the split-off tail's close frees it
	EXPECT_EQ(m->take_op_violation().what, Invariant::none);
	EXPECT_EQ(m->munmap(0, a, 2 * 4096), 0);
	EXPECT_EQ(m->take_op_violation().what, Invariant::use_after_free);
}

TEST(ArenaProgramBinary, RandomInputsRoundTripAndCoverEveryOp)
{
	const uint32_t seed = 0xa4e7a;
	std::printf("ArenaProgramBinary seed=0x%x\n", unsigned(seed));
	std::mt19937 rng(seed);
	int seen[kOpKinds] = {};
	for (int i = 0; i < 3000; i++) {
		std::vector<uint8_t> bytes(rng() % 96);
		for (uint8_t &b : bytes)
			b = uint8_t(rng());
		const bool kfuncs = i % 2;
		const Program p = decode_arena_program(bytes.data(), bytes.size(), kfuncs);
		ASSERT_EQ(p.map.map_type, uapi::BPF_MAP_TYPE_ARENA);
		ASSERT_LE(p.ops.size(), size_t(kMaxArenaOps));
		for (const Op &op : p.ops) {
			seen[int(op.kind)]++;
			if (!kfuncs) {
				ASSERT_LT(int(op.kind), int(OpKind::arena_alloc)) << "the host cannot run kfuncs";
			}
		}
		const std::string text = format_program(p);
		ParseResult r = parse_program(text);
		ASSERT_TRUE(r.program) << r.error.str() << "\n" << text;
		ASSERT_EQ(format_program(*r.program), text);
		ASSERT_EQ(r.program->ops.size(), p.ops.size());
		for (size_t k = 0; k < p.ops.size(); k++) {
			const Op &x = r.program->ops[k], &y = p.ops[k];
			ASSERT_EQ(x, y) << "op " << k << ": " << format_op(p, y) << " | label " << x.label << " vs " << y.label
					<< " addr " << x.addr.label << " vs " << y.addr.label << " at " << x.at.label << " vs "
					<< y.at.label << " size " << x.size << " vs " << y.size << " flags " << x.flags << " vs "
					<< y.flags << " prot " << x.prot << " vs " << y.prot;
		}
		ASSERT_EQ(r.program->map, p.map);
		if (i % 50 == 0) {  // and they run (no crash, invariants hold at the fixed level)
			Execution e(p, Config{});
			while (!e.done())
				e.step();
			EXPECT_EQ(e.violation().what, Invariant::none) << e.violation().detail << "\n" << text;
		}
	}
	for (OpKind k : {OpKind::mmap, OpKind::munmap, OpKind::mprotect, OpKind::mremap, OpKind::madvise,
			 OpKind::fork, OpKind::exit, OpKind::load, OpKind::store, OpKind::smaps, OpKind::close,
			 OpKind::arena_alloc, OpKind::arena_free, OpKind::arena_reserve})
		EXPECT_GT(seen[int(k)], 0) << to_string(k);
}

}  // namespace fl
