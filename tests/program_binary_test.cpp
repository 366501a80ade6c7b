// SPDX-License-Identifier: GPL-2.0-only
// The fuzzers' decoder: total, deterministic, and always producing programs
// that survive the text form unchanged.

// (historical) machine.h once named uapi::SIGBUS/SIGSEGV, which <signal.h>
// (pulled in by gtest) defines as macros.
#include "check/program_binary.h"
#include "check/program_text.h"

#include <gtest/gtest.h>

#include "program_printers.h"

#include <cstdio>
#include <ostream>
#include <random>
#include <vector>

namespace fl {

namespace {

// Field-by-field equality (Program has no operator==). Decoded programs have
// no expectations, so their filters need no comparing.
void expect_same(const Program &a, const Program &b)
{
	EXPECT_EQ(a.header, b.header);
	EXPECT_EQ(a.map, b.map);
	EXPECT_EQ(a.labels, b.labels);
	EXPECT_EQ(a.ops, b.ops);
	EXPECT_EQ(a.expects.size(), b.expects.size());
}

Program decode(const std::vector<uint8_t> &bytes)
{
	return decode_program(bytes.data(), bytes.size());
}

TEST(ProgramBinary, EmptyInput)
{
	Program p = decode_program(nullptr, 0);
	EXPECT_EQ(p.header, Header{});
	EXPECT_TRUE(p.expects.empty());
	EXPECT_LE(p.ops.size(), size_t(kMaxDecodedOps));
	ParseResult r = parse_program(format_program(p));
	ASSERT_TRUE(r.program) << r.error.str();
	expect_same(p, *r.program);
	EXPECT_EQ(p.map.key_size, 4u);
	EXPECT_NE(p.map.map_flags & uapi::BPF_F_MMAPABLE, 0u);
}

TEST(ProgramBinary, Deterministic)
{
	std::mt19937 rng(7);
	for (int i = 0; i < 200; i++) {
		std::vector<uint8_t> bytes(rng() % 300);
		for (uint8_t &b : bytes)
			b = uint8_t(rng());
		const std::string a = format_program(decode(bytes));
		const std::string b = format_program(decode(bytes));
		EXPECT_EQ(a, b);
	}
}

TEST(ProgramBinary, RandomInputsRoundTrip)
{
	const uint32_t seed = 0x5eed1234;
	std::printf("ProgramBinary.RandomInputsRoundTrip seed=0x%x\n", unsigned(seed));
	std::mt19937 rng(seed);
	int seen[kOpKinds] = {};
	int pinned = 0, pages_past_end = 0, huge_pgoff = 0, failures = 0;
	for (int i = 0; i < 5000 && failures < 5; i++) {
		// Mostly short inputs, where every byte counts, some long ones.
		std::vector<uint8_t> bytes(rng() % 4 ? rng() % 64 : rng() % 512);
		for (uint8_t &b : bytes)
			b = uint8_t(rng());
		const Program p = decode(bytes);

		EXPECT_LE(p.ops.size(), size_t(kMaxDecodedOps));
		EXPECT_TRUE(p.expects.empty());
		pinned += !(p.header == Header{});
		for (const Op &op : p.ops) {
			seen[int(op.kind)]++;
			EXPECT_GE(op.proc, 0);
			EXPECT_LT(op.proc, 64);
			pages_past_end += op.kind == OpKind::load && op.addr.offset.pages && op.addr.negative;
			huge_pgoff += op.kind == OpKind::mmap && op.pgoff >= (uint64_t(1) << 32);
		}

		const std::string text = format_program(p);
		ParseResult r = parse_program(text);
		if (!r.program) {
			ADD_FAILURE() << "input " << i << ": " << r.error.str() << "\n" << text;
			failures++;
			continue;
		}
		const Program &q = *r.program;
		expect_same(p, q);
		EXPECT_EQ(text, format_program(q));
		failures += ::testing::Test::HasFailure();
	}
	EXPECT_EQ(pinned, 0);
	// Breadth: every op kind and the interesting corners show up.
	for (int k = 0; k < kOpKinds; k++)  // the arena kfuncs: decode_arena_program (arena_test.cpp)
		if (k < int(OpKind::arena_alloc)) {
			EXPECT_GT(seen[k], 0) << to_string(OpKind(k));
		}
	EXPECT_GT(pages_past_end, 0);
	EXPECT_GT(huge_pgoff, 0);
}

TEST(ProgramBinary, MultiVmaSequences)
{
	// Over many inputs, the decoder produces the sequences that split and
	// move VMAs: a partial munmap, a move into a reserved hole, a fork
	// followed by a child's exit.
	std::mt19937 rng(11);
	int partial_munmap = 0, move_to_reserve = 0, child_exit = 0, populate = 0, private_map = 0;
	for (int i = 0; i < 5000; i++) {
		std::vector<uint8_t> bytes(64 + rng() % 64);
		for (uint8_t &b : bytes)
			b = uint8_t(rng());
		const Program p = decode(bytes);
		for (const Op &op : p.ops) {
			partial_munmap += op.kind == OpKind::munmap && op.len == Num{1, true} && op.addr.offset.value;
			move_to_reserve += op.kind == OpKind::mremap && op.has_at &&
					   (op.flags & uapi::MREMAP_FIXED);
			child_exit += op.kind == OpKind::exit && op.proc > 0;
			populate += op.kind == OpKind::mmap && (op.flags & uapi::MAP_POPULATE);
			private_map += op.kind == OpKind::mmap && (op.flags & uapi::MAP_PRIVATE);
		}
	}
	EXPECT_GT(partial_munmap, 0);
	EXPECT_GT(move_to_reserve, 0);
	EXPECT_GT(child_exit, 0);
	EXPECT_GT(populate, 0);
	EXPECT_GT(private_map, 0);
}

TEST(ProgramBinary, AddressesUseDefinedLabels)
{
	// Every address names a label some earlier op defined (the parser
	// checks this too, but say it directly).
	std::mt19937 rng(3);
	for (int i = 0; i < 2000; i++) {
		std::vector<uint8_t> bytes(rng() % 128);
		for (uint8_t &b : bytes)
			b = uint8_t(rng());
		const Program p = decode(bytes);
		std::vector<bool> defined(p.labels.size());
		for (const Op &op : p.ops) {
			if (op.addr.label >= 0) {
				EXPECT_TRUE(defined[size_t(op.addr.label)]);
			}
			if (op.has_at) {
				EXPECT_TRUE(defined[size_t(op.at.label)]);
			}
			if (op.label >= 0)
				defined[size_t(op.label)] = true;
		}
	}
}

}  // namespace
}  // namespace fl
