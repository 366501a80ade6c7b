// SPDX-License-Identifier: GPL-2.0-only
#include "base/sched/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/arena.h"

#if defined(FL_FIBER_BOOST)
#include <boost/context/detail/fcontext.hpp>
#else
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define FL_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FL_FIBER_ASAN 1
#endif
#endif
#ifdef FL_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace fl::sched {

#if defined(FL_FIBER_BOOST)
namespace bctx = boost::context::detail;
#endif

struct Context {
#if defined(FL_FIBER_BOOST)
	bctx::fcontext_t fctx = nullptr;
#else
	ucontext_t uc;
#endif
	Fiber::Entry entry = nullptr;
	void *arg = nullptr;
	void *map = nullptr;  // the mmap'ed stack, guard page included (nullptr: the thread's own)
	size_t map_bytes = 0;
	// What ASan needs to know about this context's stack.
	const void *stack_bottom = nullptr;
	size_t stack_size = 0;
	void *fake_stack = nullptr;
};

const char *fiber_backend()
{
#if defined(FL_FIBER_BOOST)
	return "boost.context";
#else
	return "ucontext";
#endif
}

namespace {

thread_local Context tl_main;
thread_local Context *tl_from = nullptr;    // who is switching (ASan learns its stack on arrival)
thread_local Context *tl_target = nullptr;  // who is being started

// Stacks are reused: an explorer starts thousands of fibers a second.
struct StackPool {
	std::vector<std::pair<void *, size_t>> free;
	~StackPool()
	{
		for (auto &[p, n] : free)
			munmap(p, n);
	}
};
thread_local StackPool tl_pool;

size_t page_bytes()
{
	static const size_t n = (size_t)sysconf(_SC_PAGESIZE);
	return n;
}

void *stack_alloc(size_t bytes)
{
	for (size_t i = 0; i < tl_pool.free.size(); i++)
		if (tl_pool.free[i].second == bytes) {
			void *p = tl_pool.free[i].first;
			tl_pool.free[i] = tl_pool.free.back();
			tl_pool.free.pop_back();
			return p;
		}
	void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		std::fprintf(stderr, "fiber: cannot map a %zu-byte stack\n", bytes);
		std::abort();
	}
	mprotect(p, page_bytes(), PROT_NONE);  // guard page: an overflow faults
	return p;
}

void stack_free(void *p, size_t bytes)
{
	arena::Pause heap;  // the pool outlives a run's arena (base/arena.h)
	if (tl_pool.free.size() < 64)
		tl_pool.free.emplace_back(p, bytes);
	else
		munmap(p, bytes);
}

// ASan: announce a switch before it, and learn where we came from after it.
inline void before_switch(Context *from, Context *to, bool from_exits)
{
	tl_from = from;
#ifdef FL_FIBER_ASAN
	__sanitizer_start_switch_fiber(from_exits ? nullptr : &from->fake_stack, to->stack_bottom, to->stack_size);
#else
	(void)to;
	(void)from_exits;
#endif
}

inline void after_switch(Context *self)
{
#ifdef FL_FIBER_ASAN
	const void *bottom = nullptr;
	size_t size = 0;
	__sanitizer_finish_switch_fiber(self->fake_stack, &bottom, &size);
	// The thread's own stack is known only from a switch away from it.
	if (tl_from && !tl_from->map) {
		tl_from->stack_bottom = bottom;
		tl_from->stack_size = size;
	}
#else
	(void)self;
#endif
}

[[noreturn]] void run_entry(Context *self)
{
	after_switch(self);
	self->entry(self->arg);
	std::fprintf(stderr, "fiber: entry returned\n");
	std::abort();
}

#if defined(FL_FIBER_BOOST)
void trampoline(bctx::transfer_t t)
{
	static_cast<Context *>(t.data)->fctx = t.fctx;
	run_entry(tl_target);
}
#else
void trampoline()
{
	run_entry(tl_target);
}
#endif

void do_switch(Context *from, Context *to, bool from_exits)
{
	before_switch(from, to, from_exits);
	tl_target = to;
#if defined(FL_FIBER_BOOST)
	bctx::transfer_t t = bctx::jump_fcontext(to->fctx, from);
	static_cast<Context *>(t.data)->fctx = t.fctx;
#else
	swapcontext(&from->uc, &to->uc);
#endif
	after_switch(from);
}

}  // namespace

Fiber::Fiber(Entry entry, void *arg, size_t stack_bytes) : ctx_(new Context)
{
	size_t bytes = (stack_bytes + page_bytes() - 1) / page_bytes() * page_bytes() + page_bytes();
	ctx_->entry = entry;
	ctx_->arg = arg;
	ctx_->map = stack_alloc(bytes);
	ctx_->map_bytes = bytes;
	char *base = static_cast<char *>(ctx_->map) + page_bytes();
	size_t usable = bytes - page_bytes();
	ctx_->stack_bottom = base;
	ctx_->stack_size = usable;
#ifdef FL_FIBER_ASAN
	// A pooled stack still carries the poison of frames that never returned.
	__asan_unpoison_memory_region(base, usable);
#endif
#if defined(FL_FIBER_BOOST)
	ctx_->fctx = bctx::make_fcontext(base + usable, usable, trampoline);
#else
	getcontext(&ctx_->uc);
	ctx_->uc.uc_stack.ss_sp = base;
	ctx_->uc.uc_stack.ss_size = usable;
	ctx_->uc.uc_link = nullptr;
	makecontext(&ctx_->uc, trampoline, 0);
#endif
}

Fiber::~Fiber()
{
	stack_free(ctx_->map, ctx_->map_bytes);
	delete ctx_;
}

Context *Fiber::main()
{
	return &tl_main;
}

void Fiber::switch_to(Context *from, Context *to)
{
	do_switch(from, to, false);
}

void Fiber::exit_to(Context *from, Context *to)
{
	do_switch(from, to, true);
	std::fprintf(stderr, "fiber: resumed after exit\n");
	std::abort();
}

}  // namespace fl::sched
