// SPDX-License-Identifier: GPL-2.0-only
// What the interleaving scheduler needs from the machine of one width: the
// port's thread-local globals carried across fiber switches, and a hash of
// the map's bytes for the ghost invariants.
#include "machine_impl.h"

#include <cstring>
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

bool MachineImpl::map_maywrite_mapped() const
{
	if (!map_live())
		return false;
	for (auto &p : procs_)
		for (vm_area_struct *vma : p->mm.mmap)
			if (is_map_vma(vma) && (vma->vm_flags & VM_MAYWRITE))
				return true;
	return false;
}

uint64_t MachineImpl::map_data_hash() const
{
	if (!map_live())
		return 0;
	// A function of the visible bytes alone, at the cost of the pages the
	// area holds (not of the map's size: the ghost check runs at every
	// scheduling point): pages holding nothing but the area's fill, created
	// or not, add nothing; every other page adds a hash of its index and its
	// bytes, a word at a time, summed (the area's page table is unordered).
	uint64_t total = 0xcbf29ce484222325ull;
	const ulong n = (ulong)1 << kg_.cfg.page_shift;
	for (auto &a : kg_.vmap_areas) {
		if (a->id != map_area_id_)
			continue;
		const uint64_t area_fill = 0x0101010101010101ull * a->fill;
		for (auto &[index, pg] : a->pages) {
			if (index < (ulong)hdr_pages_ || index - (ulong)hdr_pages_ >= visible_pages_)
				continue;
			const u8 *data = pg->data.get();
			if (!data && pg->fill == a->fill)
				continue;
			const uint64_t fill = 0x0101010101010101ull * pg->fill;
			uint64_t h = 0x100000001b3ull * (index + 1);
			bool plain = true;
			for (ulong off = 0; off < n; off += 8) {
				uint64_t w = fill;
				if (data)
					std::memcpy(&w, data + off, 8);
				plain &= w == area_fill;
				h = (h ^ w) * 0x100000001b3ull;
				h ^= h >> 29;
			}
			if (!plain)
				total += h;
		}
	}
	return total;
}

}  // namespace fl::FL_ARCH_NS
