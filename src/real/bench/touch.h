// SPDX-License-Identifier: GPL-2.0-only
// User accesses that survive SIGBUS: a refused fault (the port said no)
// must reach the toucher as a real SIGBUS, and the bench and the tests must
// see it as a result, not die of it. The handler is process-wide (installed
// once, SA_NODEFER so that it can fire again after a siglongjmp); each
// thread arms its own jump buffer around its accesses.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fl::bench {

struct Fault {
	bool sigbus = false;
	uintptr_t addr = 0;  // si_addr
	int code = 0;        // si_code (BUS_MCEERR_AR for a uffd poison marker)
};

// Reads one byte of each of the first n pages at base. On SIGBUS stops and
// returns it.
Fault touch_pages(const void *base, uint64_t n, uint64_t page_size);
// Copies n bytes from/to user memory that may SIGBUS.
Fault read_bytes(const void *src, void *dst, size_t n);
Fault write_bytes(void *dst, const void *src, size_t n);

}  // namespace fl::bench
