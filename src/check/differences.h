// SPDX-License-Identifier: GPL-2.0-only
// The documented, expected differences between the eager (pre) mapping and
// the lazy ones. The differential runner names each one it sees; anything
// else that differs is an unexpected difference.
#pragma once

#include <string>

namespace fl {

enum class Difference : uint8_t {
	dontneed_refault,  // eager SIGBUSes on a zapped page; lazy refaults it
	vm_mixedmap,       // smaps "mm": eager VMAs are VM_MIXEDMAP, lazy ones not
	populate_timing,   // smaps Rss: eager is populated at mmap, lazy on demand
};
inline constexpr int kDifferences = 3;

const char *to_string(Difference);
const char *describe(Difference);  // one paragraph, with its source

}  // namespace fl
