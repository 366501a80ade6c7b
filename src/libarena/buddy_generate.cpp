// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_generate.h"

#include <algorithm>
#include <iterator>

namespace fl::libarena {

namespace {

// A size of order 0-15 (16 << o bytes, the smallest size of that order when
// the choice is 0) or, one time in 17 of the wide draws, an invalid one.
// Most draws stay in the cached orders 0-7.
u64 gen_size(BuddyChoices &c)
{
	const u32 o = c.below(3) == 2 ? c.below(17) : c.below(8);
	if (o == 16)
		return c.below(2) ? 0 : (512u << 10) + 1;
	if (o == 0)
		return 1 + c.below(16);
	const u64 half = u64(8) << o;  // (16 << o) / 2: sizes in (half, 2 * half] have order o
	return half + 1 + c.below(u32(half));
}

Target gen_live(BuddyChoices &c) { return Target{Target::live, c.below(6)}; }

// free_bulk's targets: 1 to `most` live objects, now and then NULL.
std::vector<Target> gen_targets(BuddyChoices &c, u32 most)
{
	std::vector<Target> ts;
	for (u32 k = 1 + c.below(most); k--;)
		ts.push_back(c.below(6) == 5 ? Target{} : gen_live(c));
	return ts;
}

// A user store into a live object.
void gen_store(BuddyChoices &c, BuddyOp &op)
{
	op.target = gen_live(c);
	op.value = c.below(~0u);
}

// An NMI's point: between ops, or one of the named points.
std::string gen_point(BuddyChoices &c)
{
	return c.below(2) ? kBuddyNmiPoints[c.below(u32(kBuddyNmiPointCount))] : "";
}

// Swarm testing (Groce et al., ISSTA 2012): each Program draws its own
// features, so that some Programs pile many ops onto few orders and one
// CPU (what fills a LIFO past its capacity and reaches the transfer
// caches) while others spread them out. 0 is the plain choice: every kind
// on, no palette, no home CPU.
// A LIFO spills on its 9th push and refills when empty, and a transfer
// cache takes two batches: reaching a spill or refill on two CPUs of one
// order at once takes a dozen allocs and frees of that order per CPU, more
// than ops drawn one at a time bring together: the swarm found a planted
// lost re-check in the spill path (spill_no_recheck) once in 47,500
// Programs, and with bursts at each of seeds 1-10, after 48-1,205
// Programs. So a third of the Programs come in bursts: an alloc, free or
// NMI call repeated as a workload repeats it.
struct Features {
	bool off[10] = {};         // op kinds left out (by table index; alloc and free never)
	std::vector<u64> palette;  // sizes most allocs reuse
	bool home = false;         // most ops on CPU 0
	u32 burst = 0;             // an op is repeated up to this many times (0: never)
};

Features gen_features(BuddyChoices &c)
{
	Features f;
	for (bool &off : f.off)
		off = c.below(4) == 3;
	for (u32 n = c.below(4); n--;)
		f.palette.push_back(gen_size(c));
	f.home = c.below(2);
	f.burst = c.below(3) == 2 ? 16 : 0;
	return f;
}

// How many times an op is written: a burst repeats the calls a workload
// repeats (alloc, free, and the NMIs that do the same).
u32 gen_repeats(BuddyChoices &c, const Features &f, const BuddyOp &op)
{
	return f.burst && comes_in_bursts(op) ? 1 + c.below(f.burst) : 1;
}

u64 gen_alloc_size(BuddyChoices &c, const Features &f)
{
	if (!f.palette.empty() && c.below(4) != 3)
		return f.palette[c.below(u32(f.palette.size()))];
	return gen_size(c);
}

// One of a handler's calls on `cpu`: what an NMI program may call (alloc,
// free, bulk, free_bulk, a store through the mapping), or at depth 0 a
// nested handler block (an NMI inside the NMI's call).
BuddyOp gen_block(BuddyChoices &c, u8 cpu, const Features &f, int depth);

BuddyOp gen_call(BuddyChoices &c, u8 cpu, const Features &f, int depth)
{
	BuddyOp call;
	call.cpu = cpu;
	switch (c.below(depth ? 8 : 9)) {
	case 0: case 1: case 2:
		call.kind = BuddyOp::alloc;
		call.size = gen_alloc_size(c, f);
		break;
	case 3: case 4:
		call.kind = BuddyOp::free;
		call.target = gen_live(c);
		break;
	case 5:
		call.kind = BuddyOp::bulk;
		call.size = gen_alloc_size(c, f);
		call.norder = c.below(3);
		break;
	case 6:
		call.kind = BuddyOp::free_bulk;
		call.targets = gen_targets(c, 3);
		break;
	case 7:
		call.kind = BuddyOp::store;
		gen_store(c, call);
		break;
	default:
		return gen_block(c, cpu, f, depth + 1);
	}
	return call;
}

// A handler block: armed at a named point of its CPU's next op (or between
// ops), 1-3 calls, nested one level deep.
BuddyOp gen_block(BuddyChoices &c, u8 cpu, const Features &f, int depth)
{
	BuddyOp block;
	block.kind = BuddyOp::nmi;
	block.cpu = cpu;
	block.at = gen_point(c);
	for (u32 n = 1 + c.below(3); n--;)
		block.body.push_back(gen_call(c, cpu, f, depth));
	return block;
}

BuddyOp gen_op(BuddyChoices &c, buddy_level level, u32 ncpus, const Features &f)
{
	// weights; 0 (alloc) first: the simplest op
	struct W {
		BuddyOp::Kind kind;
		u32 weight;
	};
	const W table[] = {{BuddyOp::alloc, 5},	    {BuddyOp::free, 4},	     {BuddyOp::bulk, 1},
			   {BuddyOp::free_bulk, 1}, {BuddyOp::nmi_free, 2},  {BuddyOp::nmi_alloc, 2},
			   {BuddyOp::store, 1},	    {BuddyOp::drain, has_caches(level) ? 1u : 0u},
			   {BuddyOp::reinit, 1},    {BuddyOp::nmi, 2}};
	auto weight = [&](size_t k) { return k >= 2 && f.off[k] ? 0u : table[k].weight; };
	u32 total = 0;
	for (size_t k = 0; k < std::size(table); k++)
		total += weight(k);
	u32 r = c.below(total);
	BuddyOp op;
	for (size_t k = 0; k < std::size(table); k++) {
		if (r < weight(k)) {
			op.kind = table[k].kind;
			break;
		}
		r -= weight(k);
	}
	op.cpu = u8(f.home && c.below(4) != 3 ? 0 : c.below(ncpus));
	switch (op.kind) {
	case BuddyOp::alloc:
		op.size = gen_alloc_size(c, f);
		break;
	case BuddyOp::bulk:
		op.size = gen_alloc_size(c, f);
		op.norder = c.below(6);
		break;
	case BuddyOp::free:
		op.target = gen_live(c);
		op.has_nmi = c.below(4) == 3;
		if (op.has_nmi)
			op.nmi_target = gen_live(c);
		break;
	case BuddyOp::free_bulk:
		op.targets = gen_targets(c, 4);
		break;
	case BuddyOp::nmi_free:
		op.target = gen_live(c);
		op.at = gen_point(c);
		break;
	case BuddyOp::nmi_alloc:
		op.size = gen_size(c);
		op.at = gen_point(c);
		break;
	case BuddyOp::store:
		gen_store(c, op);
		break;
	case BuddyOp::nmi:
		return gen_block(c, op.cpu, f, 0);
	case BuddyOp::drain:
	case BuddyOp::reinit:
		break;
	}
	return op;
}

}  // namespace

// (not libarena) the generator of concurrent allocator Programs.
BuddyCase generate_buddy_case(BuddyChoices &c, buddy_level level)
{
	BuddyCase k;
	k.program.level = level;
	k.program.concurrent = true;
	const u32 ncpus = 2 + c.below(BUDDY_NR_CPUS - 1);
	const Features f = gen_features(c);
	const size_t nops = 2 + c.below(u32((f.burst ? kMaxGeneratedBuddyOps : kMaxGeneratedBuddyOps / 2) - 1));
	while (k.program.ops.size() < nops && !c.exhausted()) {
		const BuddyOp op = gen_op(c, level, ncpus, f);
		for (u32 n = gen_repeats(c, f, op); n-- && k.program.ops.size() < nops;)
			k.program.ops.push_back(op);
	}
	if (k.program.ops.empty())  // an empty list: the smallest case, one alloc
		k.program.ops.push_back(BuddyOp{});
	// joins: a quarter of the Programs run in two or three phases
	for (u32 n = c.below(4) == 3 ? 1 + c.below(2) : 0; n-- && k.program.ops.size() > 1;) {
		const size_t at = 1 + c.below(u32(k.program.ops.size() - 1));
		auto &j = k.program.joins;
		if (std::find(j.begin(), j.end(), at) == j.end())
			j.insert(std::upper_bound(j.begin(), j.end(), at), at);
	}
	for (u32 n = c.below(9); n-- && !c.exhausted();) {
		const uint32_t delta = c.below(32);
		k.picks.emplace_back(delta, uint8_t(c.below(BUDDY_NR_CPUS)));
	}
	// schedule events: a fallible acquisition that fails, or where a pending
	// NMI handler runs (ByteSchedule: question number -> answer)
	for (u32 n = c.below(3); n-- && !c.exhausted();)
		k.events[c.below(32)] = int(1 + c.below(4));
	// a quarter of the Programs with a scheduling point at every arena
	// access: a read and a write with no named point between get a window
	// (drawn last: the draws above, and so the Programs, are as before)
	k.program.access_points = !c.exhausted() && c.below(4) == 3 && takes_access_points(level);
	// a quarter of them with a burst of events: 2-5 questions in a row from
	// a drawn one say yes (an acquisition fails, or the first pending NMI
	// runs there), so that an error path behind two failures in one call (a
	// busy transfer cache, then a failed buddy lock in the spill's bulk
	// free) is in reach: two events at drawn numbers hit it in none of
	// 10,000 cases (drawn last, so the Programs are as before)
	if (!c.exhausted() && c.below(4) == 3)
		for (u32 q = c.below(64), n = 2 + c.below(4); n--; q++)
			k.events.emplace(q, 1);  // (an event drawn above keeps its answer)
	return k;
}

}  // namespace fl::libarena
