// SPDX-License-Identifier: GPL-2.0-only
// FNV-1a over bytes: the project's content hashes (a long value's digest in
// a trace, a Program's name in recorded traces and findings, a batch's
// digest of traces).
#pragma once

#include <cstdint>

namespace fl {

// The project's starting value. It is FNV's 64-bit offset basis without its
// last digit (14695981039346656037): a slip in the first copy, kept because
// recorded traces and finding file names carry hashes made from it.
inline constexpr uint64_t kFnvBasis = 1469598103934665603ull;

// bytes: any range of char or uint8_t; h: kFnvBasis or an earlier digest
template <class Bytes>
uint64_t fnv1a(const Bytes &bytes, uint64_t h = kFnvBasis)
{
	for (auto c : bytes)
		h = (h ^ (unsigned char)c) * 1099511628211ull;
	return h;
}

}  // namespace fl
