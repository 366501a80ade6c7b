// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/native/native_bench.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

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

// The per-op timer: the TSC where there is one (a pair costs ~12 ns here,
// a clock_gettime pair ~32 ns: less of the figure is the timer), converted
// with the rate measured against CLOCK_MONOTONIC over each run. A thread is
// pinned, so both reads of a pair are on one CPU.
uint64_t now_ticks()
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	return now_ns();
#endif
}

struct alignas(64) Counters {
	uint64_t allocs = 0, frees = 0;
	uint64_t alloc_ticks = 0, free_ticks = 0;  // converted to ns once the run is over
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
		const uint64_t t0 = now_ticks();
		const uint64_t a = libarena::buddy_alloc(b, size);
		const uint64_t t1 = now_ticks();
		if (collect) {
			c->alloc_ticks += t1 - t0;
			c->allocs++;
		}
		return a;
	}
	int free(uint64_t a)
	{
		const uint64_t t0 = now_ticks();
		const int ret = libarena::buddy_free(b, a);
		const uint64_t t1 = now_ticks();
		if (collect) {
			c->free_ticks += t1 - t0;
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
	const uint64_t ns0 = now_ns(), ticks0 = now_ticks();
	for (int i = 0; i < n; i++) {
		const uint64_t t0 = now_ticks();
		sum += now_ticks() - t0;
	}
	const double ticks_per_ns = double(now_ticks() - ticks0) / double(now_ns() - ns0);
	return double(sum) / n / ticks_per_ns;
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
	const uint64_t ns0 = now_ns(), ticks0 = now_ticks();
	go.store(true, std::memory_order_release);
	if (!spec.invocations) {
		std::this_thread::sleep_for(std::chrono::duration<double>(spec.warmup_s));
		collect.store(true);
		std::this_thread::sleep_for(std::chrono::duration<double>(spec.duration_s));
		stop.store(true);
	}
	for (auto &t : threads)
		t.join();
	const double ticks_per_ns = double(now_ticks() - ticks0) / double(std::max<uint64_t>(now_ns() - ns0, 1));

	// what the last invocation handed off, untimed
	for (uint64_t obj = handoff.exchange(0), next; obj; obj = next) {
		next = nb.cpu(0)->arena->load64(obj);
		if (int err = libarena::buddy_free(nb.cpu(0), obj); err && r.error.empty())
			r.error = "freeing the hand-off: " + std::to_string(err);
	}
	uint64_t alloc_ticks = 0, free_ticks = 0;
	for (const Counters &c : counters) {
		if (c.err && r.error.empty())
			r.error = "an invocation failed: " + std::to_string(c.err);
		r.allocs += c.allocs;
		r.frees += c.frees;
		alloc_ticks += c.alloc_ticks;
		free_ticks += c.free_ticks;
	}
	if (std::string v = nb.drain_and_check(); !v.empty() && r.error.empty())
		r.error = "after the run: " + v;
	r.alloc_ns = r.allocs ? double(alloc_ticks) / ticks_per_ns / double(r.allocs) : 0;
	r.free_ns = r.frees ? double(free_ticks) / ticks_per_ns / double(r.frees) : 0;
	r.ok = r.error.empty() && r.allocs && r.frees;
	if (r.error.empty() && !r.ok)
		r.error = "nothing was collected (duration too short?)";
	return r;
}

}  // namespace fl::arena_bench
