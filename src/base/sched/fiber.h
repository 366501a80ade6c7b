// SPDX-License-Identifier: GPL-2.0-only
// Stackful fibers for the deterministic scheduler: one OS thread, many
// simulated kernel tasks, exactly one running at a time. Two backends behind
// one interface, chosen at build time: Boost.Context's fcontext (jump_fcontext,
// ~10 ns a switch) when libboost-context is installed, glibc ucontext
// otherwise (swapcontext saves the signal mask with a syscall each switch).
// Both tell ASan about every stack switch, so ASan builds see no false stack
// errors; stacks are mmap'ed with a guard page and pooled per thread.
#pragma once

#include <cstddef>

namespace fl::sched {

// Which backend this build uses ("boost.context" or "ucontext").
const char *fiber_backend();

// A saved execution context. The thread's own stack has one (Fiber::main());
// every Fiber has one.
struct Context;

class Fiber {
public:
	using Entry = void (*)(void *arg);
	// The fiber starts running entry(arg) at its first switch_to. entry must
	// not return: it ends with exit_to(), which never comes back.
	Fiber(Entry entry, void *arg, size_t stack_bytes = kDefaultStack);
	~Fiber();
	Fiber(const Fiber &) = delete;
	Fiber &operator=(const Fiber &) = delete;

	static constexpr size_t kDefaultStack = 256 * 1024;

	// The calling OS thread's context (valid while the thread lives).
	static Context *main();
	Context *context() { return ctx_; }

	// Saves the running context in `from` and resumes `to`.
	static void switch_to(Context *from, Context *to);
	// Like switch_to, for a fiber leaving for the last time (`from` is
	// never resumed; its stack may be freed afterwards).
	static void exit_to(Context *from, Context *to);

private:
	Context *ctx_;
};

}  // namespace fl::sched
