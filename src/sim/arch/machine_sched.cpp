// SPDX-License-Identifier: GPL-2.0-only
// What the interleaving scheduler needs from the machine of one width: the
// port's thread-local globals carried across fiber switches, and a hash of
// the map's bytes for the ghost invariants.
#include "machine_impl.h"

#include <mutex>

namespace fl::FL_ARCH_NS {

void MachineImpl::register_sched_tls()
{
	static std::once_flag once;
	std::call_once(once, [] {
		sched::register_tls_slot({[]() -> void * { return kg; },
					  [](void *p) { kg = static_cast<kernel_globals *>(p); }});
		sched::register_tls_slot({[]() -> void * { return const_cast<kernel_config *>(kcfg); },
					  [](void *p) { kcfg = static_cast<const kernel_config *>(p); }});
		sched::register_tls_slot({[]() -> void * { return current; },
					  [](void *p) { current = static_cast<task_struct *>(p); }});
	});
}

uint64_t MachineImpl::map_data_hash() const
{
	if (!map_live())
		return 0;
	uint64_t h = 0xcbf29ce484222325ull;
	for (auto &a : kg_.vmap_areas) {
		if (a->id != map_area_id_)
			continue;
		for (u64 i = 0; i < visible_pages_; i++) {
			auto it = a->pages.find((ulong)(hdr_pages_ + i));
			/* a page not created yet holds the area's fill */
			const page *pg = it == a->pages.end() ? nullptr : it->second.get();
			ulong n = (ulong)1 << kg_.cfg.page_shift;
			for (ulong off = 0; off < n; off++)
				h = (h ^ (pg ? page_byte(pg, off) : a->fill)) * 0x100000001b3ull;
			h = (h ^ i) * 0x100000001b3ull;
		}
	}
	return h;
}

}  // namespace fl::FL_ARCH_NS
