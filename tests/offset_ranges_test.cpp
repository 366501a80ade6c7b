// SPDX-License-Identifier: GPL-2.0-only
// OffsetRanges (the contents shadow's unknown and known bytes) against a set
// of single offsets, under random adds and removes that overlap, touch and
// split ranges.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "check/offset_ranges.h"

namespace fl {
namespace {

TEST(OffsetRanges, AgreesWithASetOfOffsets)
{
	std::mt19937_64 rng(20261206);
	for (int round = 0; round < 200; round++) {
		OffsetRanges r;
		std::set<uint64_t> s;
		for (int step = 0; step < 40; step++) {
			const uint64_t lo = rng() % 96, hi = lo + rng() % 24;
			if (rng() % 2) {
				r.add(lo, hi);
				for (uint64_t x = lo; x < hi; x++)
					s.insert(x);
			} else {
				r.remove(lo, hi);
				for (uint64_t x = lo; x < hi; x++)
					s.erase(x);
			}
			ASSERT_EQ(r.empty(), s.empty());
			for (uint64_t x = 0; x < 128; x++) {
				ASSERT_EQ(r.contains(x), s.count(x) == 1) << "round " << round << " step " << step << " x " << x;
				uint64_t end = x;
				while (s.count(end))
					end++;
				ASSERT_EQ(r.end_of(x), end) << "x " << x;
				if (auto next = s.upper_bound(x); !s.count(x)) {
					ASSERT_EQ(r.next_after(x), next == s.end() ? UINT64_MAX : *next) << "x " << x;
				}
			}
		}
	}
}

}  // namespace
}  // namespace fl
