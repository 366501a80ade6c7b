// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/libarena/model_counts.h"

#include "libarena/buddy.h"
#include "libarena/buddy_invariants.h"

namespace fl::arena_bench {

using namespace fl::libarena;

namespace {

static_assert(kModelCpus == BUDDY_NR_CPUS);

// What one op did.
struct OpTally {
	uint64_t locks = 0, xfer_locks = 0, refills = 0, spills = 0;
};

class Model {
public:
	Model(bool series, uint64_t size) : order_(size_to_order(size)), size_(size)
	{
		const u64 buddy = arena_.base() + (u64(ARENA_PAGES) - 1) * __PAGE_SIZE;  // among the arena globals
		arena_.machine().store(0, buddy, 8, 0);  // libbpf writes the globals: the page exists
		faults_.at_point = &Model::at_point;
		faults_.point_arg = this;
		for (int c = 0; c < BUDDY_NR_CPUS; c++)
			cpu_[c] = buddy_ctx{&arena_, buddy, &faults_, series ? buddy_level::series : buddy_level::before, false, c};
	}
	int init() { return arena_.ok() ? buddy_init(&cpu_[0]) : -ENOMEM; }
	buddy_ctx *cpu(int c) { return &cpu_[c]; }
	u32 xfer_count() { return has_caches(cpu_[0].level) ? arena_.load32(buddy_xfer_of(&cpu_[0], order_) + XFER_COUNT) : 0; }
	uint64_t size() const { return size_; }
	OpTally tally;

	std::string drain_and_check()
	{
		if (int ret = buddy_cache_drain_all(&cpu_[0]))
			return "buddy_cache_drain_all: " + std::to_string(ret);
		Shadow shadow;
		const bool busy[BUDDY_NR_CPUS] = {};
		if (std::string v = check_caches(&cpu_[0], &shadow, busy); !v.empty())
			return v;
		return check_buddy(&cpu_[0], &shadow, true);
	}

private:
	static void at_point(void *arg, buddy_ctx *, const sched::Label &l)
	{
		static const uint32_t held = sched::label_named("buddy_lock:held").id;
		static const uint32_t refill = sched::label_named("buddy_cache_refill:count_checked").id;
		static const uint32_t spill = sched::label_named("buddy_cache_spill:count_checked").id;
		static const uint32_t xfer_release = sched::label_named("buddy_xfer_unlock:release").id;
		OpTally &t = static_cast<Model *>(arg)->tally;
		t.locks += l.id == held;
		t.refills += l.id == refill;
		t.spills += l.id == spill;
		t.xfer_locks += l.id == xfer_release;
	}

	Arena arena_;
	buddy_faults faults_;
	buddy_ctx cpu_[BUDDY_NR_CPUS];
	u64 order_;
	uint64_t size_;
};

// One producer's view, counting what each call did.
struct CountingOps {
	Model *m;
	buddy_ctx *b;
	ModelCounts *c;
	bool collect = false;

	uint64_t alloc()
	{
		m->tally = {};
		const u32 before = m->xfer_count();
		const uint64_t a = buddy_alloc(b, m->size());
		if (collect) {
			c->allocs++;
			c->alloc_locks += m->tally.locks;
			c->xfer_locks += m->tally.xfer_locks;
			if (!m->tally.refills)
				c->alloc_hits += has_caches(b->level);
			else if (m->xfer_count() < before)
				c->refill_xfer++;
			else
				c->refill_bulk++;
		}
		return a;
	}
	int free(uint64_t a)
	{
		m->tally = {};
		const u32 before = m->xfer_count();
		const int ret = buddy_free(b, a);
		if (collect) {
			c->frees++;
			c->free_locks += m->tally.locks;
			c->xfer_locks += m->tally.xfer_locks;
			if (!m->tally.spills)
				c->free_hits += has_caches(b->level);
			else if (m->xfer_count() > before)
				c->spill_xfer++;
			else
				c->spill_bulk++;
		}
		return ret;
	}
	void set_link(uint64_t obj, uint64_t next) { b->arena->store64(obj, next); }
	uint64_t link(uint64_t obj) { return b->arena->load64(obj); }
};

}  // namespace

ModelCounts model_counts(bool series, Variant v, int nallocs, int producers, int rounds, uint64_t size)
{
	ModelCounts c;
	if (producers < 1 || producers > kModelCpus) {
		c.error = "the simulated build has " + std::to_string(kModelCpus) + " CPUs";
		return c;
	}
	Model m(series, size);
	if (int ret = m.init()) {
		c.error = "buddy_init: " + std::to_string(ret);
		return c;
	}
	std::atomic<uint64_t> handoff{0};
	std::vector<CountingOps> ops;
	for (int p = 0; p < producers; p++)
		ops.push_back(CountingOps{&m, m.cpu(p), &c});
	for (int r = 0; r < 2 + rounds; r++)
		for (CountingOps &o : ops) {
			o.collect = r >= 2;
			if (int err = invocation(o, v, nallocs, handoff)) {
				c.error = "an invocation failed: " + std::to_string(err);
				return c;
			}
		}
	for (uint64_t obj = handoff.exchange(0), next; obj; obj = next) {
		next = m.cpu(0)->arena->load64(obj);
		buddy_free(m.cpu(0), obj);
	}
	if (std::string err = m.drain_and_check(); !err.empty()) {
		c.error = "after the run: " + err;
		return c;
	}
	c.ok = true;
	return c;
}

}  // namespace fl::arena_bench
