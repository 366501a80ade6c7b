// SPDX-License-Identifier: GPL-2.0-only
// The cost of one fiber switch (a benchmark: prints figures, asserts
// nothing). Built twice: interleave-fiber-bench (this build's backend) and
// interleave-fiber-bench-ucontext (glibc ucontext), so the two compare side
// by side on one machine.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "base/sched/fiber.h"

namespace {

using fl::sched::Context;
using fl::sched::Fiber;

Context *g_main;
Fiber *g_fiber;
long g_rounds;

void ping(void *)
{
	for (long i = 0; i < g_rounds; i++)
		Fiber::switch_to(g_fiber->context(), g_main);
	Fiber::exit_to(g_fiber->context(), g_main);
}

}  // namespace

int main(int argc, char **argv)
{
	g_rounds = argc > 1 ? std::atol(argv[1]) : 2000000;
	g_main = Fiber::main();
	Fiber f(ping, nullptr);
	g_fiber = &f;
	auto t0 = std::chrono::steady_clock::now();
	for (long i = 0; i <= g_rounds; i++)
		Fiber::switch_to(g_main, f.context());
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	// 2 switches per round (there and back)
	std::printf("fiber backend %s: %ld round trips in %.3f s, %.1f ns per switch\n", fl::sched::fiber_backend(),
		    g_rounds, s, s * 1e9 / (2.0 * double(g_rounds)));
	return 0;
}
