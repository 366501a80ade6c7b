// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_invariants.h"

#include <algorithm>
#include <cstring>

#include "base/arena.h"

namespace fl::libarena {

namespace {

// A chunk's metadata, read once: orders, allocated bits and free-list heads.
// One at a time, in a buffer kept for the thread: 41 KiB allocated and
// zeroed per check was a fifth of a fuzz input's time.
struct ChunkMeta {
	std::vector<u8> &bytes = scratch();
	static std::vector<u8> &scratch()
	{
		thread_local std::vector<u8> buffer = [] {
			arena::Pause heap;  // thread state: never in a run's arena (buddy_workspace.h)
			return std::vector<u8>(SIZEOF_BUDDY_CHUNK);
		}();
		return buffer;
	}
	ChunkMeta(Arena &a, u64 c)
	{
		if (!a.machine().arena_kernel_read(c, bytes.data(), u32(SIZEOF_BUDDY_CHUNK)))
			std::fill(bytes.begin(), bytes.end(), 0);  // as an absent page reads
	}
	u64 order(u64 idx) const
	{
		u8 v = bytes[CHUNK_ORDERS + idx / 2];
		return (idx & 1) ? (v & 0xf) : (v >> 4);
	}
	bool allocated(u64 idx) const { return bytes[CHUNK_ALLOCATED + idx / 8] & (1u << (idx % 8)); }
	u64 head(u64 o) const
	{
		u64 v;
		std::memcpy(&v, &bytes[CHUNK_FREELISTS + 8 * o], 8);
		return v;
	}
	u64 next() const
	{
		u64 v;
		std::memcpy(&v, &bytes[CHUNK_NEXT], 8);
		return v;
	}
};

std::string hex(u64 v)
{
	char buf[24];
	std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
	return buf;
}

// The metadata blocks of buddy_chunk_get (idx -> order): the carve-out's allocated part.
std::map<u64, u64> carve_out(std::map<u64, u64> *free_blocks)
{
	std::map<u64, u64> meta;
	u64 left = SIZEOF_BUDDY_CHUNK, idx = 0, max_order = BUDDY_CHUNK_NUM_ORDERS;
	while (left) {
		u64 p = 63 - u64(__builtin_clzll(left));
		u64 o = p >= BUDDY_MIN_ALLOC_SHIFT ? p - BUDDY_MIN_ALLOC_SHIFT : 0;
		left = p >= BUDDY_MIN_ALLOC_SHIFT ? left - (1ull << p) : 0;
		meta[idx] = o;
		for (u64 k = left ? o + 1 : o; k < max_order; k++)
			(*free_blocks)[idx + (1ull << k)] = k;
		idx += 1ull << o;
		max_order = o;
	}
	return meta;
}

// The blocks a fresh chunk's metadata takes and leaves free, computed once,
// on the heap (process state, never in a run's arena: buddy_workspace.h).
// The metadata blocks also as a sorted list, and where they end: check_chunk
// merges them with the held objects and asks of each allocated block whether
// it is one (a map's lookups were a twentieth of check_chunk).
struct Carved {
	std::map<u64, u64> meta, free_blocks;
	std::vector<std::pair<u64, u64>> meta_list;
	u64 meta_end = 0;
};
const Carved &carved()
{
	static const Carved c = [] {
		arena::Pause heap;
		Carved k;
		k.meta = carve_out(&k.free_blocks);
		k.meta_list.assign(k.meta.begin(), k.meta.end());
		for (const auto &[idx, order] : k.meta)
			k.meta_end = std::max<u64>(k.meta_end, idx + (u64(1) << order));
		return k;
	}();
	return c;
}

const std::map<u64, u64> &metadata_blocks() { return carved().meta; }

// idx starts a metadata block (metadata_blocks().count(idx)).
bool is_metadata(u64 idx)
{
	const Carved &k = carved();
	if (idx >= k.meta_end)
		return false;
	for (const auto &[m, order] : k.meta_list)
		if (m == idx)
			return true;
	return false;
}

}  // namespace

const std::map<u64, u64> &pristine_free_blocks() { return carved().free_blocks; }

std::string check_caches(buddy_ctx *b, Shadow *shadow, const bool busy[BUDDY_NR_CPUS])
{
	return check_caches(b, shadow->live, &shadow->cached, busy);
}

bool CachedObjects::count(u64 addr) const
{
	const auto it = first_at(objects, addr);
	return it != objects.end() && it->first == addr;
}

std::string check_caches(buddy_ctx *b, const std::map<u64, u64> &live, CachedObjects *cached,
			 const bool busy[BUDDY_NR_CPUS])
{
	if (!has_caches(b->level)) {
		cached->objects.clear();
		return "";
	}
	return check_caches(b, read_caches(b), live, cached, busy);
}

std::string check_caches(buddy_ctx *b, const CachesBytes &caches, const std::map<u64, u64> &live,
			 CachedObjects *cached, const bool busy[BUDDY_NR_CPUS], const KnownHeaders *known,
			 bool known_not_live)
{
	Arena &a = *b->arena;
	cached->objects.clear();
	// This runs at every scheduling point: the caches are read in one
	// go (a missing page reads as zeros, as load32's), and a message is
	// written only for a violation.
	// Where an object is held: CPU * 8 + order (a LIFO), 32 + order (a
	// transfer cache), 40 (the deferred list).
	constexpr u64 kXfer = BUDDY_NR_CPUS * BUDDY_CACHE_ORDERS, kDeferred = kXfer + BUDDY_CACHE_ORDERS;
	auto where = [](u64 site) {
		if (site < kXfer)
			return "CPU " + std::to_string(site / BUDDY_CACHE_ORDERS) + "'s order-" +
			       std::to_string(site % BUDDY_CACHE_ORDERS) + " LIFO";
		if (site < kDeferred)
			return "the order-" + std::to_string(site - kXfer) + " transfer cache";
		return std::string("the deferred list");
	};
	struct Held {  // 16 bytes: sorted at every point
		u64 obj;
		u32 seq;
		u8 site, order;
	};
	thread_local std::vector<Held> held;  // grown on the heap (a run's arena is dropped after it)
	held.clear();
	// An object's nibble, false if its allocated bit is clear: from `known`
	// if a passed check read them and nobody wrote them since (allocated
	// then, so allocated now), else read now. *was_known says which.
	auto allocated = [&](u64 obj, u64 *nibble, bool *was_known) {
		*was_known = false;
		if (known) {
			const auto it = first_at(*known, obj);
			if (it != known->end() && it->first == obj) {
				*nibble = it->second;
				*was_known = true;
				return true;
			}
		}
		const u64 c = obj & ~BUDDY_CHUNK_OFFSET_MASK, idx = (obj & BUDDY_CHUNK_OFFSET_MASK) / 16;
		if (!(a.load8(c + CHUNK_ALLOCATED + idx / 8) & (1u << (idx % 8))))
			return false;
		const u8 v = a.load8(c + CHUNK_ORDERS + idx / 2);
		*nibble = (idx & 1) ? (v & 0xf) : (v >> 4);
		return true;
	};
	// False, and the violation in `bad`, when obj may not be held there (a
	// message is built only then: this runs for every held object at every point).
	std::string bad;
	auto hold = [&](u64 obj, u64 order, u64 site) {
		u64 nibble = 0;
		bool was_known = false;
		if (obj % 16 || !allocated(obj, &nibble, &was_known)) {
			bad = "I8: " + where(site) + " holds " + hex(obj) + ", which is not an allocated block";
			return false;
		}
		if (order != ~0ull && nibble != order) {
			bad = "I8: " + where(site) + " holds " + hex(obj) + " of order " + std::to_string(nibble);
			return false;
		}
		if (!(was_known && known_not_live) && live.count(obj)) {
			bad = "I1: " + where(site) + " holds " + hex(obj) + ", which a caller holds";
			return false;
		}
		arena::Pause heap;
		held.push_back({obj, u32(held.size()), u8(site), u8(nibble)});
		return true;
	};
	for (int cpu = 0; cpu < BUDDY_NR_CPUS; cpu++) {
		const u64 cache = buddy_cache_of(b, cpu);
		if (caches.peek<u32>(cache + CACHE_ACTIVE)) {
			if (!busy[cpu])
				return "I10: CPU " + std::to_string(cpu) + "'s cache guard is set between its ops";
			continue;  // mid-update: its LIFOs are the CPU's own business
		}
		for (u64 o = 0; o < BUDDY_CACHE_ORDERS; o++) {
			const u64 site = u64(cpu) * BUDDY_CACHE_ORDERS + o;
			const u32 nr = caches.peek<u32>(cache_nr_at(cache, o));
			if (nr > BUDDY_CACHE_CAP)
				return "I8: " + where(site) + " holds " + std::to_string(nr) + " > " + std::to_string(BUDDY_CACHE_CAP);
			for (u64 i = 0; i < nr; i++)
				if (!hold(caches.peek<u64>(cache_obj_at(cache, o, i)), o, site))
					return bad;
		}
	}
	for (u64 o = 0; o < BUDDY_CACHE_ORDERS; o++) {
		const u64 xfer = buddy_xfer_of(b, o);
		const u32 owner = caches.peek<u32>(xfer + XFER_LOCK), count = caches.peek<u32>(xfer + XFER_COUNT);
		if (owner) {
			if (owner > u32(BUDDY_NR_CPUS) || !busy[owner - 1])
				return "I10: the order-" + std::to_string(o) + " transfer lock is held by CPU " +
				       std::to_string(int(owner) - 1) + " between its ops";
			continue;
		}
		if (count > BUDDY_XFER_CAP)
			return "I8: " + where(kXfer + o) + " holds " + std::to_string(count) + " > " + std::to_string(BUDDY_XFER_CAP);
		for (u64 i = 0; i < count; i++)
			if (!hold(caches.peek<u64>(xfer + XFER_OBJS + 8 * i), o, kXfer + o))
				return bad;
	}
	// the deferred list: pushes and the drain's take are atomic, so it is always whole
	u64 obj = a.load64(b->buddy + BUDDY_DEFERRED_FREE);
	for (u64 n = 0; obj; n++, obj = a.load64(obj)) {
		if (n > BUDDY_CHUNK_ITEMS)
			return "I9: the deferred list does not end";
		if (!hold(obj, ~0ull, kDeferred))
			return bad;
	}
	// Each object once: the first place it is held in the order read
	// stands, the next is named.
	std::sort(held.begin(), held.end(), [](const Held &x, const Held &y) { return x.obj != y.obj ? x.obj < y.obj : x.seq < y.seq; });
	const Held *twice = nullptr;
	for (size_t i = 1; i < held.size(); i++)
		if (held[i].obj == held[i - 1].obj && (!twice || held[i].seq < twice->seq))
			twice = &held[i];
	if (twice)
		return "I8: " + hex(twice->obj) + " is cached twice (again in " + where(twice->site) + ")";
	for (const Held &h : held)
		cached->objects.emplace_back(h.obj, h.order);
	return "";
}

std::vector<u8> snapshot_buddy(buddy_ctx *b)
{
	std::vector<u8> out(SIZEOF_BUDDY_SERIES);
	b->arena->machine().arena_kernel_read(b->buddy, out.data(), SIZEOF_BUDDY_SERIES);
	u64 chunk;
	std::memcpy(&chunk, out.data() + BUDDY_FIRST_CHUNK, 8);
	for (int n = 0; chunk && n < 1024; n++) {
		ChunkMeta m(*b->arena, chunk);
		out.insert(out.end(), m.bytes.begin(), m.bytes.end());
		for (u64 o = 0; o < BUDDY_CHUNK_NUM_ORDERS; o++)  // the headers of every free block
			for (u64 i = m.head(o), k = 0; i < BUDDY_CHUNK_ITEMS && k < BUDDY_CHUNK_ITEMS; k++) {
				u8 h[8] = {};
				b->arena->machine().arena_kernel_read(chunk + 16 * i + BUDDY_HEADER_OFF, h, 8);
				out.insert(out.end(), h, h + 8);
				u32 next;
				std::memcpy(&next, h + HDR_NEXT, 4);
				i = next;
			}
		chunk = m.next();
	}
	return out;
}

HeldSpan BuddyLayout::held(u64 c) const
{
	const auto from = first_at(objects, c);
	auto to = from;
	while (to != objects.end() && to->first < c + BUDDY_CHUNK_BYTES)
		to++;
	return HeldSpan(from, to);
}

bool BuddyLayout::has_chunk(u64 c) const { return std::binary_search(sorted.begin(), sorted.end(), c); }

std::string check_buddy_shallow(buddy_ctx *b, Shadow *shadow, BuddyLayout *layout)
{
	Arena &a = *b->arena;
	const u64 region = a.base() + BUDDY_VADDR_OFFSET;
	const u64 vaddr = a.load64(b->buddy + BUDDY_VADDR);
	layout->chunks.clear();
	layout->objects.clear();
	layout->sorted.clear();

	// I11: vaddr monotone and bounded; chunks distinct, aligned, acyclic, inside the used region
	if (vaddr > BUDDY_VADDR_SIZE || vaddr % BUDDY_CHUNK_BYTES)
		return "I11: vaddr " + hex(vaddr) + " out of range or unaligned";
	if (vaddr < shadow->last_vaddr)
		return "I11: vaddr went back from " + hex(shadow->last_vaddr) + " to " + hex(vaddr);
	shadow->last_vaddr = vaddr;
	if (a.load32(b->buddy + BUDDY_LOCK))
		return "I12: the lock is held between operations";
	for (u64 c = a.load64(b->buddy + BUDDY_FIRST_CHUNK); c; c = a.load64(c + CHUNK_NEXT)) {
		if (c % BUDDY_CHUNK_BYTES || c < region || c >= region + vaddr)
			return "I11: chunk " + hex(c) + " not an aligned chunk of the used region";
		const auto at = std::lower_bound(layout->sorted.begin(), layout->sorted.end(), c);
		if (at != layout->sorted.end() && *at == c)
			return "I11: the chunk list has a cycle at " + hex(c);
		layout->sorted.insert(at, c);
		layout->chunks.push_back(c);
	}

	// I1: live (and cached) objects disjoint, each in a chunk's data area,
	// aligned to its size. Both are in address order: one merged walk.
	u64 prev_end = 0, last = 0;
	bool any = false;
	auto live = shadow->live.begin();
	auto cached = shadow->cached.begin();
	while (live != shadow->live.end() || cached != shadow->cached.end()) {
		const bool from_live = cached == shadow->cached.end() ||
				       (live != shadow->live.end() && live->first <= cached->first);
		const auto [addr, order] = from_live ? std::pair<u64, u64>(*live++) : *cached++;
		if (!from_live && any && last == addr)
			continue;  // live and cached at once: the live entry stands (I8 reports it)
		any = true;
		last = addr;
		const u64 c = addr & ~BUDDY_CHUNK_OFFSET_MASK, idx = (addr - c) / 16, size = 16ull << order;
		if (addr < prev_end)
			return "I1: object " + hex(addr) + " overlaps the one before it";
		prev_end = addr + size;
		if (!layout->has_chunk(c))
			return "I1: object " + hex(addr) + " is not in a chunk of the allocator";
		if (idx % (1ull << order) || idx < 2569 || idx + (1ull << order) > BUDDY_CHUNK_ITEMS)
			return "I1: object " + hex(addr) + " of order " + std::to_string(order) +
			       " misaligned or over the metadata";
		layout->objects.emplace_back(addr, order);
	}
	return "";
}

// Which slots of the chunk being checked head a free block, and its order:
// stamped with the check's number, so no check clears 64 Ki entries. Kept
// for the thread (on the heap: buddy_workspace.h).
struct FreeSlots {
	std::vector<u32> stamp = std::vector<u32>(BUDDY_CHUNK_ITEMS);
	std::vector<u8> order = std::vector<u8>(BUDDY_CHUNK_ITEMS);
	u32 now = 0;
	static FreeSlots &scratch()
	{
		thread_local FreeSlots slots = [] {
			arena::Pause heap;
			return FreeSlots();
		}();
		return slots;
	}
	void next()
	{
		if (++now == 0) {  // wrapped: no stamp may look current
			std::fill(stamp.begin(), stamp.end(), 0);
			now = 1;
		}
	}
	bool has(u64 idx) const { return stamp[idx] == now; }
	void add(u64 idx, u64 o)
	{
		stamp[idx] = now;
		order[idx] = u8(o);
	}
};

// The bits set in a copy of a chunk's bitmap, four words at a time (256
// steps, not 8,192 bytes), most of them zero: a chunk's allocated blocks
// are few and large. Not checked by ASan: it reads the thread's own buffer,
// within its size, and 1,024 checked loads (and a software popcount of each
// word) were two thirds of check_chunk's own time. (bytes: a multiple of 32)
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize("address")))
#endif
static size_t count_bits(const u8 *bitmap, size_t bytes)
{
	size_t bits = 0;
	for (size_t i = 0; i + 32 <= bytes; i += 32) {  // four words a step: most steps see only zeros
		u64 w[4];
		std::memcpy(w, bitmap + i, 32);
		if (w[0] | w[1] | w[2] | w[3])
			for (u64 x : w)
				bits += size_t(__builtin_popcountll(x));
	}
	return bits;
}

// Sorted (idx, order) pairs: the checks below walk blocks in index order,
// as ordered maps would, without a node per block.
using Blocks = std::vector<std::pair<u64, u64>>;

std::string check_chunk(buddy_ctx *b, u64 c, HeldSpan held)
{
	Arena &a = *b->arena;
	ChunkMeta m(a, c);
	// The block lists are the thread's, kept between checks (on the heap:
	// buddy_workspace.h); grown afresh for every chunk checked they were a
	// fifth of the check.
	arena::Pause heap;
	thread_local Blocks free_blocks, all, allocated;
	free_blocks.clear();
	all.clear();
	allocated.clear();
	// I6 and I3: walk every free list
	FreeSlots &seen = FreeSlots::scratch();
	seen.next();
	for (u64 o = 0; o < BUDDY_CHUNK_NUM_ORDERS; o++) {
		u64 prev = BUDDY_CHUNK_ITEMS;
		u64 steps = 0;
		for (u64 i = m.head(o); i != BUDDY_CHUNK_ITEMS; steps++) {
			if (i >= BUDDY_CHUNK_ITEMS || steps > BUDDY_CHUNK_ITEMS)
				return "I6: freelist " + std::to_string(o) + " of chunk " + hex(c) + " is corrupt";
			if (m.allocated(i) || m.order(i) != o || i % (1ull << o))
				return "I3: free block " + std::to_string(i) + " on freelist " + std::to_string(o) +
				       " has allocated=" + std::to_string(m.allocated(i)) + " order " +
				       std::to_string(m.order(i));
			if (seen.has(i))
				return "I3: block " + std::to_string(i) + " is on a free list twice";
			seen.add(i, o);
			free_blocks.emplace_back(i, o);
			// the header in one read (an absent page reads zeros, as load32's)
			u8 hdr[SIZEOF_BUDDY_HEADER] = {};
			(void)a.machine().arena_kernel_read(c + 16 * i + BUDDY_HEADER_OFF, hdr, u32(SIZEOF_BUDDY_HEADER));
			u32 hdr_prev, hdr_next;
			std::memcpy(&hdr_prev, hdr + HDR_PREV, 4);
			std::memcpy(&hdr_next, hdr + HDR_NEXT, 4);
			if (hdr_prev != prev)
				return "I6: block " + std::to_string(i) + " prev is not its predecessor";
			prev = i;
			i = hdr_next;
		}
	}
	std::sort(free_blocks.begin(), free_blocks.end());
	// I2 and I4: metadata + live + free tile [0, 65536); bits only at allocated starts
	// By index; of two at one index the later stands (a held object over a
	// metadata block). Both lists are sorted already (held by address, as
	// every caller passes it), so they are merged, metadata first at a tie.
	const std::vector<std::pair<u64, u64>> &meta = carved().meta_list;
	for (size_t h = 0, k = 0; k < meta.size() || h < held.size();) {
		const u64 idx = h < held.size() ? (held[h].first - c) / 16 : 0;
		if (h == held.size() || (k < meta.size() && meta[k].first <= idx))
			all.push_back(meta[k++]);
		else
			all.emplace_back(idx, held[h++].second);
	}
	for (size_t k = 0; k < all.size(); k++)
		if (k + 1 == all.size() || all[k + 1].first != all[k].first)
			allocated.push_back(all[k]);
	const size_t allocated_starts = allocated.size();
	for (auto [idx, order] : allocated) {
		if (!m.allocated(idx))
			return "I4: allocated block " + std::to_string(idx) + " has no allocated bit";
		if (!is_metadata(idx) && m.order(idx) != order)
			return "I4: allocated block " + std::to_string(idx) + " has order nibble " +
			       std::to_string(m.order(idx)) + ", not " + std::to_string(order);
	}
	for (auto [idx, order] : free_blocks)
		if (std::binary_search(allocated.begin(), allocated.end(), std::pair<u64, u64>(idx, 0),
				       [](const auto &x, const auto &y) { return x.first < y.first; }))
			return "I1: free block " + std::to_string(idx) + " is also allocated";
	u64 next = 0;
	for (size_t x = 0, f = 0; x < allocated.size() || f < free_blocks.size();) {  // both, in index order
		const bool from_allocated =
			f == free_blocks.size() || (x < allocated.size() && allocated[x].first < free_blocks[f].first);
		const auto [idx, order] = from_allocated ? allocated[x++] : free_blocks[f++];
		if (idx != next)
			return "I2: slots " + std::to_string(next) + ".." + std::to_string(idx) + " of chunk " + hex(c) +
			       (idx < next ? " are covered twice" : " are neither free nor allocated (lost)");
		next = idx + (1ull << order);
	}
	if (next != BUDDY_CHUNK_ITEMS)
		return "I2: chunk " + hex(c) + " tiles only " + std::to_string(next) + " slots";
	static_assert(BUDDY_CHUNK_ITEMS / 8 % 32 == 0);
	const size_t bits = count_bits(m.bytes.data() + CHUNK_ALLOCATED, BUDDY_CHUNK_ITEMS / 8);
	if (bits != allocated_starts)
		return std::string(has_caches(b->level) ? "I9 (lost or duplicated across caches)" : "I4") + ": chunk " + hex(c) + " has " + std::to_string(bits) + " allocated bits for " +
		       std::to_string(allocated_starts) + " allocated blocks";
	// I5: maximal coalescing
	for (auto [idx, order] : free_blocks) {
		if (order + 1 >= BUDDY_CHUNK_NUM_ORDERS)
			continue;
		const u64 buddy = idx ^ (1ull << order);
		if (seen.has(buddy) && seen.order[buddy] == order)
			return "I5: free buddies " + std::to_string(idx) + " and " + std::to_string(buddy) +
			       " of order " + std::to_string(order) + " were not merged";
	}
	// I7: a chunk with nothing allocated is back to its pristine carve-out
	if (allocated_starts == metadata_blocks().size() &&
	    !std::equal(free_blocks.begin(), free_blocks.end(), pristine_free_blocks().begin(), pristine_free_blocks().end(),
			[](const auto &x, const auto &y) { return x.first == y.first && x.second == y.second; }))
		return "I7: chunk " + hex(c) + " has nothing allocated but is not pristine";
	return "";
}

std::string check_buddy(buddy_ctx *b, Shadow *shadow, bool deep)
{
	BuddyLayout layout;
	std::string bad = check_buddy_shallow(b, shadow, &layout);
	if (!bad.empty() || !deep)
		return bad;
	for (u64 c : layout.chunks)
		if (std::string v = check_chunk(b, c, layout.held(c)); !v.empty())
			return v;
	return "";
}

}  // namespace fl::libarena
