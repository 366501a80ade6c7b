// SPDX-License-Identifier: GPL-2.0-only
// The decoder's promise to the fuzzers: no decoded mmap makes `pre`, the
// lockstep reference, insert more than 1100 PTEs (program_binary.cpp
// kMaxEagerPages), also where the 64-bit mmap door narrows a page offset
// such as 2^52 + k back into the data (k at 4K pages). Inputs start with a
// big geometry (data past 4 GiB, a million pages and more), where one
// uncut mapping cost a million insertions (55 s under ASan).
#include "check/execution.h"
#include "check/program_binary.h"
#include "check/program_text.h"

#include <gtest/gtest.h>

#include "port_helpers.h"

#include <random>
#include <vector>

namespace fl {

namespace {

constexpr uint64_t kCap = 1100;  // program_binary.cpp kMaxEagerPages

TEST(EagerCap, DecodedMmapsInsertAtMostTheCap)
{
	std::mt19937 rng(20261201);
	uint64_t most = 0, big_mmaps = 0;
	for (const Config &cfg : {port::config(Arch::A64, Patch::pre, 12, Door::anon),
				  port::config(Arch::A64, Patch::pre, 12, Door::direct),
				  port::config(Arch::A64, Patch::pre, 16, Door::regular)}) {
		for (int i = 0; i < 400; i++) {
			std::vector<uint8_t> bytes(40 + rng() % 160);
			for (uint8_t &b : bytes)
				b = uint8_t(rng());
			bytes[0] = 0;    // value_size 1 (replaced by the geometry)
			bytes[1] = 0;    // max_entries 1 (likewise)
			bytes[2] = 243;  // a big geometry
			const Program p = decode_program(bytes.data(), bytes.size());
			Execution e(p, cfg);
			while (!e.done()) {
				const OpKind kind = p.ops[e.next_op()].kind;
				const uint64_t before = e.machine().stats().ptes_installed;
				e.step();
				const uint64_t n = e.machine().stats().ptes_installed - before;
				if (kind == OpKind::mmap) {
					most = std::max(most, n);
					big_mmaps += n > 32;
					ASSERT_LE(n, kCap) << cfg.name() << ", input " << i << ":\n" << format_program(p);
				}
			}
		}
	}
	// The sample reaches the geometries that matter: some mapping of
	// more than a 32-page window was inserted whole.
	EXPECT_GT(big_mmaps, 0u) << "largest eager mapping: " << most << " PTEs";
}

}  // namespace

}  // namespace fl
