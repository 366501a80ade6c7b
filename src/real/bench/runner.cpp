// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "real/bench/touch.h"

namespace fl::bench {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t)
{
	return std::chrono::duration<double>(Clock::now() - t).count();
}

// The shared state of one run.
struct Shared {
	explicit Shared(int producers) : ready(producers + 1) {}
	std::latch ready;                     // every thread exists before any op runs
	std::atomic<uint64_t> ops{0};         // all completed ops (the sampled counter)
	std::atomic<bool> measuring{false};   // set at the end of the warm-up
	std::atomic<int> measured_threads{0}; // threads with at least one measured op
	std::atomic<bool> stop{false};
	std::mutex mu;
	std::string error;
	void fail(std::string e)
	{
		std::lock_guard lk(mu);
		if (error.empty())
			error = std::move(e);
		stop = true;
	}
};

// What one producer measured: ops that started after the warm-up, and the
// time they took (an op in flight when the warm-up ends does not count).
struct PerThread {
	uint64_t ops = 0;
	double busy_s = 0;
};

void producer(Worker &w, const Geometry &g, const Pattern &pat, Shared &s, PerThread &me)
{
	std::string err;
	s.ready.arrive_and_wait();
	while (!s.stop.load(std::memory_order_relaxed)) {
		const bool measured = s.measuring.load(std::memory_order_relaxed);
		const auto t0 = Clock::now();
		void *p = w.map(pat.populate, &err);
		if (!p)
			return s.fail(err);
		Fault f = touch_pages(p, pat.touch_pages, g.page_size);
		if (f.sigbus)
			return s.fail("SIGBUS touching " + std::to_string((f.addr - uintptr_t(p)) / g.page_size) +
				      " pages into the mapping");
		if (!w.unmap(p, &err))
			return s.fail(err);
		s.ops.fetch_add(1, std::memory_order_relaxed);
		if (measured) {
			me.busy_s += since(t0);
			if (me.ops++ == 0)
				s.measured_threads.fetch_add(1);
		}
	}
}

}  // namespace

RunResult run_bench(Backend &b, const Geometry &g, const Pattern &pat, const Timing &t)
{
	RunResult r;
	std::vector<std::unique_ptr<Worker>> workers;
	for (int i = 0; i < t.producers; i++) {
		auto w = b.make_worker(&r.error);
		if (!w)
			return r;
		workers.push_back(std::move(w));
	}
	Shared s(t.producers);
	std::vector<PerThread> per(workers.size());
	std::vector<std::thread> threads;
	for (size_t i = 0; i < workers.size(); i++)
		threads.emplace_back([&, i] { producer(*workers[i], g, pat, s, per[i]); });
	s.ready.arrive_and_wait();

	const double period = t.duration_s >= 5.0 ? 1.0 : t.duration_s / 5.0;
	std::this_thread::sleep_for(std::chrono::duration<double>(t.warmup_s));
	s.measuring = true;
	const auto start = Clock::now();
	std::vector<double> samples;  // M ops/s per sample period
	uint64_t last_ops = s.ops.load();
	auto last = start;
	const double give_up_s = std::max(300.0, 10 * t.duration_s);  // a wedged producer
	while (!s.stop && (since(start) < t.duration_s || s.measured_threads.load() < t.producers) &&
	       since(start) < give_up_s) {
		std::this_thread::sleep_for(std::chrono::duration<double>(period));
		uint64_t now_ops = s.ops.load();
		samples.push_back(double(now_ops - last_ops) / since(last) / 1e6);
		last_ops = now_ops;
		last = Clock::now();
	}
	s.stop = true;
	for (auto &th : threads)
		th.join();
	r.seconds = since(start);
	if (!s.error.empty()) {
		r.error = s.error;
		return r;
	}
	// Throughput: the sum of every producer's ops per busy second, so that
	// an op longer than the whole run is still timed from its start.
	for (const PerThread &p : per) {
		if (!p.ops) {
			r.error = "a producer completed no op in " + std::to_string(int(r.seconds)) + " s";
			return r;
		}
		r.ops += p.ops;
		r.mops_mean += double(p.ops) / p.busy_s / 1e6;
	}
	double var = 0;
	for (double x : samples)
		var += (x - r.mops_mean) * (x - r.mops_mean);
	r.mops_stddev = samples.size() > 1 ? std::sqrt(var / double(samples.size() - 1)) : 0.0;
	r.latency_ns = 1000.0 / r.mops_mean * t.producers;
	r.ok = true;
	return r;
}

std::string seed_line(const RunResult &r)
{
	char buf[160];
	snprintf(buf, sizeof(buf), "arraymap-mmap: throughput: %.3f +/- %.3f M ops/s, latency: %.3f ns/op",
		 r.mops_mean, r.mops_stddev, r.latency_ns);
	return buf;
}

}  // namespace fl::bench
