// SPDX-License-Identifier: GPL-2.0-only
// The bench's invocations (seed 002 patch 2, "Add a parallel buddy
// allocator benchmark", as the reference note reconstructs them: its code is
// not public): an invocation allocates nallocs objects, each pushed on an
// intrusive list through its first 8 bytes, then frees a list:
//   malloc-free  - its own objects;
//   malloc-xfree - the objects of the previous invocation (of any producer),
//                  taken from a global hand-off slot by atomic exchange, so
//                  with more than one producer most frees run on another CPU.
// Header-only, so the native (timed) and the simulated (counted) builds run
// the same invocation. `Ops` provides alloc() -> address (0: failed),
// free(address) -> 0 or an error, set_link(object, next), link(object).
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace fl::arena_bench {

enum class Variant { malloc_free, malloc_xfree };
inline const char *to_string(Variant v) { return v == Variant::malloc_free ? "malloc-free" : "malloc-xfree"; }

// One invocation: 0, -ENOMEM when an allocation failed (the seed's short
// run), or the first error a free returned. Frees what it took either way.
template <class Ops>
int invocation(Ops &ops, Variant v, int nallocs, std::atomic<uint64_t> &handoff)
{
	uint64_t list = 0;
	int err = 0;

	for (int i = 0; i < nallocs; i++) {
		const uint64_t obj = ops.alloc();
		if (!obj) {
			err = -ENOMEM;
			break;
		}
		ops.set_link(obj, list);
		list = obj;
	}
	if (v == Variant::malloc_xfree && !err)
		list = handoff.exchange(list, std::memory_order_acq_rel);
	while (list) {
		const uint64_t next = ops.link(list);
		if (int e = ops.free(list); e && !err)
			err = e;
		list = next;
	}
	return err;
}

}  // namespace fl::arena_bench
