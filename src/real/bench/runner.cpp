// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/runner.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
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

// The shared state of one run: the op counter and the first error.
struct Shared {
	std::atomic<uint64_t> ops{0};
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

void producer(Worker &w, const Geometry &g, const Pattern &pat, Shared &s)
{
	std::string err;
	while (!s.stop.load(std::memory_order_relaxed)) {
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
	Shared s;
	std::vector<std::thread> threads;
	for (auto &w : workers)
		threads.emplace_back([&, wp = w.get()] { producer(*wp, g, pat, s); });

	const double period = t.duration_s >= 5.0 ? 1.0 : t.duration_s / 5.0;
	std::this_thread::sleep_for(std::chrono::duration<double>(t.warmup_s));
	const uint64_t start_ops = s.ops.load();
	const auto start = Clock::now();
	std::vector<double> samples;  // M ops/s per sample period
	uint64_t last_ops = start_ops;
	auto last = start;
	while (!s.stop && (since(start) < t.duration_s || s.ops.load() - start_ops < uint64_t(t.producers))) {
		std::this_thread::sleep_for(std::chrono::duration<double>(period));
		uint64_t now_ops = s.ops.load();
		samples.push_back(double(now_ops - last_ops) / since(last) / 1e6);
		last_ops = now_ops;
		last = Clock::now();
	}
	r.seconds = since(start);
	r.ops = s.ops.load() - start_ops;
	s.stop = true;
	for (auto &th : threads)
		th.join();
	if (!s.error.empty()) {
		r.error = s.error;
		return r;
	}
	r.mops_mean = double(r.ops) / r.seconds / 1e6;
	double var = 0;
	for (double x : samples)
		var += (x - r.mops_mean) * (x - r.mops_mean);
	r.mops_stddev = samples.size() > 1 ? std::sqrt(var / double(samples.size() - 1)) : 0.0;
	r.latency_ns = r.mops_mean > 0 ? 1000.0 / r.mops_mean * t.producers : 0.0;
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
