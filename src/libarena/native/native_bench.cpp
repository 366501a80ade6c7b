// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/native/native_bench.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <chrono>
#include <thread>

#include "libarena/native/native_buddy.h"

namespace fl::arena_bench {

using libarena::buddy_ctx;
using libarena::NativeBuddy;

namespace {

uint64_t now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

struct alignas(64) Counters {
	uint64_t allocs = 0, frees = 0, alloc_ns = 0, free_ns = 0;
	int err = 0;
};

// One producer's view of the allocator, timing each call.
struct TimedOps {
	buddy_ctx *b;
	uint64_t size;
	Counters *c;
	bool collect = false;

	uint64_t alloc()
	{
		const uint64_t t0 = now_ns();
		const uint64_t a = libarena::buddy_alloc(b, size);
		const uint64_t t1 = now_ns();
		if (collect) {
			c->alloc_ns += t1 - t0;
			c->allocs++;
		}
		return a;
	}
	int free(uint64_t a)
	{
		const uint64_t t0 = now_ns();
		const int ret = libarena::buddy_free(b, a);
		const uint64_t t1 = now_ns();
		if (collect) {
			c->free_ns += t1 - t0;
			c->frees++;
		}
		return ret;
	}
	void set_link(uint64_t obj, uint64_t next) { b->arena->store64(obj, next); }
	uint64_t link(uint64_t obj) { return b->arena->load64(obj); }
};

void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

}  // namespace

std::vector<int> allowed_cpus()
{
	cpu_set_t set;
	std::vector<int> out;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				out.push_back(c);
	return out;
}

double timer_pair_ns()
{
	constexpr int n = 100000;
	uint64_t sum = 0;
	for (int i = 0; i < n; i++) {
		const uint64_t t0 = now_ns();
		sum += now_ns() - t0;
	}
	return double(sum) / n;
}

RunResult run_native(const RunSpec &spec)
{
	RunResult r;
	if (spec.producers < 1 || spec.producers > kMaxProducers || spec.nallocs < 1) {
		r.error = "producers must be 1.." + std::to_string(kMaxProducers) + " and nallocs >= 1";
		return r;
	}
	NativeBuddy nb(spec.series ? libarena::buddy_level::series : libarena::buddy_level::before);
	if (int ret = nb.init()) {
		r.error = "buddy_init: " + std::to_string(ret);
		return r;
	}
	std::atomic<uint64_t> handoff{0};
	std::atomic<int> ready{0};
	std::atomic<bool> go{false}, collect{false}, stop{false};
	std::vector<Counters> counters(size_t(spec.producers));
	std::vector<std::thread> threads;
	for (int p = 0; p < spec.producers; p++) {
		threads.emplace_back([&, p] {
			if (!spec.cpus.empty())
				pin(spec.cpus[size_t(p) % spec.cpus.size()]);
			TimedOps ops{nb.cpu(p), spec.size, &counters[size_t(p)]};
			ready++;
			while (!go.load(std::memory_order_acquire))
				std::this_thread::yield();
			for (uint64_t i = 0; spec.invocations ? i < spec.invocations : !stop.load(std::memory_order_relaxed);
			     i++) {
				ops.collect = spec.invocations || collect.load(std::memory_order_relaxed);
				if (int err = invocation(ops, spec.variant, spec.nallocs, handoff)) {
					ops.c->err = err;
					break;
				}
			}
		});
	}
	while (ready.load() < spec.producers)
		std::this_thread::yield();
	go.store(true, std::memory_order_release);
	if (!spec.invocations) {
		std::this_thread::sleep_for(std::chrono::duration<double>(spec.warmup_s));
		collect.store(true);
		std::this_thread::sleep_for(std::chrono::duration<double>(spec.duration_s));
		stop.store(true);
	}
	for (auto &t : threads)
		t.join();

	// what the last invocation handed off, untimed
	for (uint64_t obj = handoff.exchange(0), next; obj; obj = next) {
		next = nb.cpu(0)->arena->load64(obj);
		if (int err = libarena::buddy_free(nb.cpu(0), obj); err && r.error.empty())
			r.error = "freeing the hand-off: " + std::to_string(err);
	}
	uint64_t alloc_ns = 0, free_ns = 0;
	for (const Counters &c : counters) {
		if (c.err && r.error.empty())
			r.error = "an invocation failed: " + std::to_string(c.err);
		r.allocs += c.allocs;
		r.frees += c.frees;
		alloc_ns += c.alloc_ns;
		free_ns += c.free_ns;
	}
	if (std::string v = nb.drain_and_check(); !v.empty() && r.error.empty())
		r.error = "after the run: " + v;
	r.alloc_ns = r.allocs ? double(alloc_ns) / double(r.allocs) : 0;
	r.free_ns = r.frees ? double(free_ns) / double(r.frees) : 0;
	r.ok = r.error.empty() && r.allocs && r.frees;
	if (r.error.empty() && !r.ok)
		r.error = "nothing was collected (duration too short?)";
	return r;
}

}  // namespace fl::arena_bench
