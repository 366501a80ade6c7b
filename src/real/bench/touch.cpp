// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/touch.h"

#include <csetjmp>
#include <csignal>
#include <mutex>

namespace fl::bench {

namespace {

thread_local sigjmp_buf *armed = nullptr;
thread_local Fault last;

void on_sigbus(int sig, siginfo_t *info, void *)
{
	if (!armed) {  // not ours: die of it as if we had no handler
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	last = Fault{true, reinterpret_cast<uintptr_t>(info->si_addr), info->si_code};
	siglongjmp(*armed, 1);
}

void install_once()
{
	static std::once_flag once;
	std::call_once(once, [] {
		struct sigaction sa = {};
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, nullptr);
	});
}

// Runs f with SIGBUS turned into a returned Fault. savesigs=0: no
// sigprocmask syscall per call (SA_NODEFER keeps SIGBUS unblocked).
template <typename F>
Fault guarded(F &&f)
{
	install_once();
	sigjmp_buf jb;
	last = Fault{};
	if (sigsetjmp(jb, 0) == 0) {
		armed = &jb;
		f();
	}
	armed = nullptr;
	return last;
}

}  // namespace

Fault touch_pages(const void *base, uint64_t n, uint64_t page_size)
{
	return guarded([&] {
		const volatile uint8_t *p = static_cast<const volatile uint8_t *>(base);
		for (uint64_t i = 0; i < n; i++)
			(void)p[i * page_size];
	});
}

Fault read_bytes(const void *src, void *dst, size_t n)
{
	return guarded([&] {
		const volatile uint8_t *s = static_cast<const volatile uint8_t *>(src);
		for (size_t i = 0; i < n; i++)
			static_cast<uint8_t *>(dst)[i] = s[i];
	});
}

Fault write_bytes(void *dst, const void *src, size_t n)
{
	return guarded([&] {
		volatile uint8_t *d = static_cast<volatile uint8_t *>(dst);
		for (size_t i = 0; i < n; i++)
			d[i] = static_cast<const uint8_t *>(src)[i];
	});
}

}  // namespace fl::bench
