// SPDX-License-Identifier: GPL-2.0-only
// The six obligations of issue 14 on buddy_index.h. Every variable is a u64
// (narrowed where the port's parameter is narrower, as a C call converts
// it); each property is `precondition -> claim` over the port's functions.
#include "libarena/smt/obligations.h"

#include <chrono>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "libarena/buddy_index.h"
#include "libarena/smt/sym.h"

namespace fl::libarena::smt {

namespace {

// Logic that reads the same on bool (the C types) and sbool (symbolic).
inline bool implies(bool a, bool b) { return !a || b; }
inline sbool implies(const sbool &a, const sbool &b) { return !a || b; }
// c ? a : b without a fork (properties only; the port's own ?: forks)
template <class T>
T select(bool c, const T &a, const T &b) { return c ? a : b; }
template <unsigned N>
bv<N> select(const sbool &c, const bv<N> &a, const bv<N> &b) { return {z3::ite(c.e, a.e, b.e)}; }

// 2^n (0 for n >= 64, where C's shift is undefined) and "x is a multiple of 2^n"
template <class W>
typename W::u64 pow2(const typename W::u64 &n)
{
	using u64 = typename W::u64;
	return select(n < 64, u64(1) << select(n < 64, n, u64(0)), u64(0));
}
template <class W>
auto aligned(const typename W::u64 &x, const typename W::u64 &n) { return (x & (pow2<W>(n) - 1)) == 0; }

// 1. size_to_order is minimal and sufficient: for 1 <= size <= 512 KiB the
// order is < 16, its block holds size and half of it would not; sizes up to
// 2^32 past 512 KiB get an order >= 16 (rejected); 0 and > 2^32 get 64.
template <class W>
auto size_to_order_holds(const typename W::u64 *v)
{
	using u64 = typename W::u64;
	const u64 size = v[0];
	const u64 o = buddy_size_to_order<W>(size);
	const u64 max_size = BUDDY_MIN_ALLOC_BYTES << (BUDDY_CHUNK_NUM_ORDERS - 1);
	const u64 block = BUDDY_MIN_ALLOC_BYTES * pow2<W>(o), half = BUDDY_MIN_ALLOC_BYTES * pow2<W>(o - 1);

	return implies(size >= 1 && size <= max_size,
		       o < BUDDY_CHUNK_NUM_ORDERS && block >= size && (o == 0 || half < size)) &&
	       implies(size > max_size && size <= u64(1ull << 32), o >= BUDDY_CHUNK_NUM_ORDERS) &&
	       implies(size == 0 || size > u64(1ull << 32), o == 64);
}

// 2. The nibble frame rule: setting idx's order in its byte of
// chunk->orders[] makes the byte read back that order at idx and leaves
// the other nibble (idx ^ 1, the only other index of that byte) as it was;
// the byte is inside orders[].
template <class W>
auto nibble_holds(const typename W::u64 *v)
{
	using u8 = typename W::u8;
	using u64 = typename W::u64;
	const u8 prev = u8(v[0]), order = u8(v[2]);
	const u64 idx = v[1], j = v[3];
	const u8 byte = buddy_order_byte_set<W>(prev, idx, order);

	return implies(idx < BUDDY_CHUNK_ITEMS && order < BUDDY_CHUNK_NUM_ORDERS,
		       buddy_order_byte_get<W>(byte, idx) == order &&
			       buddy_order_byte_get<W>(byte, idx ^ 1) == buddy_order_byte_get<W>(prev, idx ^ 1) &&
			       buddy_order_byte_off<W>(idx) < BUDDY_CHUNK_ITEMS / 2 &&
			       implies(buddy_order_byte_off<W>(j) == buddy_order_byte_off<W>(idx),
				       j == idx || j == (idx ^ 1)));
}

// 3. Buddy XOR alignment: the buddy of a block of order o < 16 aligned to
// 2^o is aligned, distinct, inside the chunk, its own buddy is the block,
// and the merged block (the left one) is aligned to 2^(o+1) with the two
// as its halves.
template <class W>
auto buddy_xor_holds(const typename W::u64 *v)
{
	using u8 = typename W::u8;
	using u64 = typename W::u64;
	const u64 idx = v[0], o = u64(u8(v[1]));
	const u64 b = buddy_buddy_idx<W>(idx, u8(o));
	const u64 m = buddy_merged_idx<W>(idx, b);

	return implies(idx < BUDDY_CHUNK_ITEMS && o < BUDDY_CHUNK_NUM_ORDERS && aligned<W>(idx, o),
		       b < BUDDY_CHUNK_ITEMS && aligned<W>(b, o) && b != idx &&
			       buddy_buddy_idx<W>(b, u8(o)) == idx && aligned<W>(m, o + 1) &&
			       select(idx < b, b, idx) == m + pow2<W>(o));
}

// 4. Split then merge is the identity. Splitting a free block r of order o
// down to order q pushes, for each k in [q, o), the block
// buddy_split_idx(r, k) of order k. Claim, for every such k: that block
// is r + 2^k (so the pushed blocks and [r, r + 2^q) tile [r, r + 2^o)),
// lies in the chunk, is aligned to 2^k, is the buddy free() computes for
// r at order k, and merging keeps r. By induction on k = q .. o-1, freeing
// r at order q coalesces with exactly the blocks the split pushed and ends
// with r at order o: the block split.
template <class W>
auto split_merge_holds(const typename W::u64 *v)
{
	using u8 = typename W::u8;
	using u64 = typename W::u64;
	const u64 r = v[0], k = v[1], o = v[2];
	const u64 s = buddy_split_idx<W>(r, k);

	return implies(o < BUDDY_CHUNK_NUM_ORDERS && k < o && r < BUDDY_CHUNK_ITEMS && aligned<W>(r, o),
		       s == r + pow2<W>(k) && s < BUDDY_CHUNK_ITEMS && aligned<W>(s, k) &&
			       buddy_buddy_idx<W>(r, u8(k)) == s && buddy_merged_idx<W>(r, s) == r);
}

// 5. Address <-> (chunk, idx): a 16-byte aligned address comes back from
// its (chunk, idx), the idx is inside the chunk and the chunk is 1 MiB
// aligned; (chunk, idx) of a 1 MiB aligned chunk and idx < 2^16 comes back
// from its address; a bad idx gives NULL.
template <class W>
auto addr_idx_holds(const typename W::u64 *v)
{
	using u64 = typename W::u64;
	const u64 a = v[0], c = v[1], i = v[2];
	const u64 ca = buddy_addr_chunk<W>(a), ia = buddy_addr_idx<W>(a);
	const u64 ai = buddy_idx_to_addr<W>(c, i);
	const u64 chunk_shift = BUDDY_MIN_ALLOC_SHIFT + BUDDY_CHUNK_NUM_ORDERS;

	return implies(aligned<W>(a, u64(BUDDY_MIN_ALLOC_SHIFT)),
		       buddy_idx_to_addr<W>(ca, ia) == a && ia < BUDDY_CHUNK_ITEMS && aligned<W>(ca, chunk_shift)) &&
	       implies(aligned<W>(c, chunk_shift) && i < BUDDY_CHUNK_ITEMS,
		       buddy_addr_chunk<W>(ai) == c && buddy_addr_idx<W>(ai) == i) &&
	       implies(i >= BUDDY_CHUNK_ITEMS, ai == 0);
}

// 6. The carve-out: the blocks buddy_chunk_carve produces for struct
// buddy_chunk's 41,096 bytes (metadata marked allocated, the rest pushed
// free) are each aligned and inside the chunk, every slot of the chunk is
// in exactly one of them, and every slot the metadata occupies is in a
// metadata block: no free block, and so nothing handed out, overlaps it.
struct Block {
	u64 idx, order;
	bool meta;
};
struct Carve {
	std::vector<Block> blocks;
	int ret = 0;
};
const Carve &carve_plan()
{
	static const Carve plan = [] {
		Carve c;
		c.ret = buddy_chunk_carve(
			SIZEOF_BUDDY_CHUNK,
			[&](u32 idx, u64 order) {
				c.blocks.push_back({idx, order, true});
				return 0;
			},
			[&](u32 idx, u64 order) {
				c.blocks.push_back({idx, order, false});
				return 0;
			});
		return c;
	}();
	return plan;
}

template <class W>
auto carve_out_holds(const typename W::u64 *v)
{
	using u64 = typename W::u64;
	const u64 s = v[0];
	const Carve &plan = carve_plan();
	u64 in = u64(0), in_meta = u64(0), in_free = u64(0);
	auto ok = (u64(plan.ret) == 0);
	for (const Block &blk : plan.blocks) {
		const u64 start = u64(blk.idx), order = u64(blk.order);
		const auto inside = s >= start && s < start + pow2<W>(order);
		ok = ok && aligned<W>(start, order) && start + pow2<W>(order) <= BUDDY_CHUNK_ITEMS;
		in = in + select(inside, u64(1), u64(0));
		if (blk.meta)
			in_meta = in_meta + select(inside, u64(1), u64(0));
		else
			in_free = in_free + select(inside, u64(1), u64(0));
	}
	const u64 meta_slots = (SIZEOF_BUDDY_CHUNK + BUDDY_MIN_ALLOC_BYTES - 1) / BUDDY_MIN_ALLOC_BYTES;

	return ok && implies(s < BUDDY_CHUNK_ITEMS, in == 1) &&
	       implies(s < meta_slots, in_meta == 1 && in_free == 0);
}

// ---- the driver ---------------------------------------------------------------

struct Obligation {
	ObligationInfo info;
	std::vector<const char *> vars;
	std::function<sbool(const bv<64> *)> sym;
	std::function<bool(const u64 *)> concrete;
	std::function<std::string(const u64 *)> explain;  // what the port computes at the model
};

std::string hex(u64 x)
{
	std::ostringstream o;
	o << "0x" << std::hex << x;
	return o.str();
}

const std::vector<Obligation> &table()
{
	static const std::vector<Obligation> t = {
		{{"size_to_order", "size_to_order is minimal and sufficient (1..512 KiB), rejects the rest"},
		 {"size"},
		 size_to_order_holds<sym_words>,
		 size_to_order_holds<buddy_words>,
		 [](const u64 *v) {
			 return "size_to_order(" + std::to_string(v[0]) + ") = " +
				std::to_string(buddy_size_to_order<buddy_words>(v[0]));
		 }},
		{{"nibble", "the nibble frame rule: idx_set_order keeps idx^1's order and reads back its own"},
		 {"prev", "idx", "order", "j"},
		 nibble_holds<sym_words>,
		 nibble_holds<buddy_words>,
		 [](const u64 *v) {
			 const u8 b = buddy_order_byte_set<buddy_words>(u8(v[0]), v[1], u8(v[2]));
			 return "byte " + hex(u8(v[0])) + " set idx " + std::to_string(v[1]) + " order " +
				std::to_string(u8(v[2])) + " -> " + hex(b) + " (reads " +
				std::to_string(buddy_order_byte_get<buddy_words>(b, v[1])) + ", idx^1 " +
				std::to_string(buddy_order_byte_get<buddy_words>(b, v[1] ^ 1)) + ")";
		 }},
		{{"buddy_xor", "buddy XOR: aligned, distinct, in the chunk, an involution; merged block aligned"},
		 {"idx", "order"},
		 buddy_xor_holds<sym_words>,
		 buddy_xor_holds<buddy_words>,
		 [](const u64 *v) {
			 const u64 b = buddy_buddy_idx<buddy_words>(v[0], u8(v[1]));
			 return "buddy of idx " + std::to_string(v[0]) + " at order " + std::to_string(u8(v[1])) +
				" = " + std::to_string(b) + ", its buddy " +
				std::to_string(buddy_buddy_idx<buddy_words>(b, u8(v[1])));
		 }},
		{{"split_merge", "split then merge is the identity (each split-off block is the buddy free() merges)"},
		 {"r", "k", "o"},
		 split_merge_holds<sym_words>,
		 split_merge_holds<buddy_words>,
		 [](const u64 *v) {
			 return "split of idx " + std::to_string(v[0]) + " (order " + std::to_string(v[2]) +
				") pushes " + std::to_string(buddy_split_idx<buddy_words>(v[0], v[1])) + " at order " +
				std::to_string(v[1]) + "; free's buddy there is " +
				std::to_string(buddy_buddy_idx<buddy_words>(v[0], u8(v[1])));
		 }},
		{{"addr_idx", "address <-> (chunk, idx) round trip"},
		 {"a", "c", "i"},
		 addr_idx_holds<sym_words>,
		 addr_idx_holds<buddy_words>,
		 [](const u64 *v) {
			 const u64 c = buddy_addr_chunk<buddy_words>(v[0]), i = buddy_addr_idx<buddy_words>(v[0]);
			 return "addr " + hex(v[0]) + " -> (" + hex(c) + ", " + std::to_string(i) + ") -> " +
				hex(buddy_idx_to_addr<buddy_words>(c, i)) + "; (" + hex(v[1]) + ", " +
				std::to_string(v[2]) + ") -> " + hex(buddy_idx_to_addr<buddy_words>(v[1], v[2]));
		 }},
		{{"carve_out", "the carve-out tiles the chunk and its metadata is never handed out"},
		 {"slot"},
		 carve_out_holds<sym_words>,
		 carve_out_holds<buddy_words>,
		 [](const u64 *v) {
			 int n = 0, meta = 0;
			 for (const Block &b : carve_plan().blocks)
				 if (v[0] >= b.idx && v[0] < b.idx + (1ull << b.order))
					 n++, meta += b.meta;
			 return "slot " + std::to_string(v[0]) + " is in " + std::to_string(n) + " blocks (" +
				std::to_string(meta) + " metadata) of the " +
				std::to_string(carve_plan().blocks.size()) + " the carve-out made";
		 }},
	};
	return t;
}

}  // namespace

const std::vector<ObligationInfo> &obligations()
{
	static const std::vector<ObligationInfo> out = [] {
		std::vector<ObligationInfo> o;
		for (const Obligation &ob : table())
			o.push_back(ob.info);
		return o;
	}();
	return out;
}

Verdict decide(const std::string &name, unsigned rlimit)
{
	const Obligation *ob = nullptr;
	for (const Obligation &o : table())
		if (name == o.info.name)
			ob = &o;
	if (!ob)
		throw std::invalid_argument("no obligation " + name);

	Verdict v{ob->info.name, ob->info.what};
	const auto t0 = std::chrono::steady_clock::now();
	std::vector<bv<64>> vars;
	for (const char *n : ob->vars)
		vars.push_back(var<64>(n));
	const auto paths = Paths::explore([&] { return ob->sym(vars.data()).e; });
	z3::expr_vector bad(ctx());
	for (const Paths::Path &p : paths)
		bad.push_back(p.cond && !p.result);
	z3::solver s(ctx());
	z3::params prm(ctx());
	prm.set("rlimit", rlimit);
	s.set(prm);
	s.add(z3::mk_or(bad));
	const z3::check_result r = s.check();
	v.paths = paths.size();
	v.proved = r == z3::unsat;
	v.counterexample = r == z3::sat;
	if (v.counterexample) {
		const z3::model m = s.get_model();
		std::vector<u64> vals;
		for (size_t i = 0; i < vars.size(); i++) {
			vals.push_back(m.eval(vars[i].e, true).get_numeral_uint64());
			v.model += (i ? " " : "") + std::string(ob->vars[i]) + "=" + std::to_string(vals.back());
		}
		v.replays = !ob->concrete(vals.data());  // the C types: what buddy.cpp runs
		v.detail = ob->explain(vals.data());
	}
	v.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	return v;
}

}  // namespace fl::libarena::smt
