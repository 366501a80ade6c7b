// SPDX-License-Identifier: GPL-2.0-only
#include "real/worker.h"

#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "real/sys.h"

namespace fl::real {

namespace {

sigjmp_buf g_access_jmp;
volatile sig_atomic_t g_access_sig = 0;

void on_fault(int sig)
{
	g_access_sig = sig;
	siglongjmp(g_access_jmp, 1);
}

// The access itself, one instruction of the op's width where the ISA has
// one; unaligned accesses are what the Program asked for, hence no UBSan.
__attribute__((no_sanitize("address", "undefined"), noinline)) void access(uint64_t addr, unsigned size,
									  bool store, uint64_t value, uint8_t *out)
{
	auto *p = reinterpret_cast<volatile uint8_t *>(uintptr_t(addr));
	uint64_t v = 0;
	switch (size) {
	case 1: if (store) *p = uint8_t(value); else v = *p; break;
	case 2: if (store) *(volatile uint16_t *)p = uint16_t(value); else v = *(volatile uint16_t *)p; break;
	case 4: if (store) *(volatile uint32_t *)p = uint32_t(value); else v = *(volatile uint32_t *)p; break;
	default: if (store) *(volatile uint64_t *)p = value; else v = *(volatile uint64_t *)p; break;
	}
	for (unsigned i = 0; i < size; i++)
		out[i] = uint8_t(v >> (8 * i));
}

// A load or store with SIGBUS/SIGSEGV caught: sigsetjmp saves the signal
// mask, so the handler's blocked signal is unblocked again on the way out.
void guarded_access(const Command &c, Reply *r)
{
	g_access_sig = 0;
	if (sigsetjmp(g_access_jmp, 1) == 0) {
		access(c.addr, c.size, c.kind == OpKind::store, c.value, r->data);
		r->size = c.kind == OpKind::load ? c.size : 0;
	} else {
		r->sig = g_access_sig;
		r->size = 0;
	}
}

int64_t clone_files()
{
	// fork(), but sharing the descriptor table: raw clone, so no atfork
	// handlers run (the supervisor is single-threaded).
	long r = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	return r < 0 ? -int64_t(errno) : r;
}

[[noreturn]] void worker_loop(int cmd_fd, int reply_fd);

Reply execute(const Command &c, int reply_fd)
{
	Reply r;
	switch (c.kind) {
	case OpKind::mmap:
		r.ret = sys::mmap(c.at, c.len, c.prot, c.flags, c.map_fd, c.pgoff, c.page_shift);
		break;
	case OpKind::reserve:
		r.ret = sys::mmap(c.at, c.len, c.prot, c.flags, -1, 0, c.page_shift);
		break;
	case OpKind::munmap: r.ret = sys::munmap(c.addr, c.len); break;
	case OpKind::mprotect: r.ret = sys::mprotect(c.addr, c.len, c.prot); break;
	case OpKind::mremap: r.ret = sys::mremap(c.addr, c.len, c.new_len, c.flags, c.at); break;
	case OpKind::madvise: r.ret = sys::madvise(c.addr, c.len, c.advice); break;
	case OpKind::load:
	case OpKind::store: guarded_access(c, &r); break;
	case OpKind::fork: {
		int p[2];
		if (pipe(p)) {
			r.ret = -errno;
			break;
		}
		r.ret = clone_files();
		if (r.ret == 0)
			worker_loop(p[0], reply_fd);
		r.child_cmd_fd = p[1];
		break;
	}
	default: r.ret = -ENOSYS; break;  // exit is handled by the loop; bpf ops by the supervisor
	}
	return r;
}

bool read_full(int fd, void *buf, size_t n)
{
	auto *p = static_cast<char *>(buf);
	while (n) {
		ssize_t k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= size_t(k);
	}
	return true;
}

void worker_loop(int cmd_fd, int reply_fd)
{
	for (;;) {
		Command c;
		if (!read_full(cmd_fd, &c, sizeof c))
			_exit(0);
		Reply r;
		if (c.kind != OpKind::exit)
			r = execute(c, reply_fd);
		if (write(reply_fd, &r, sizeof r) != sizeof r || c.kind == OpKind::exit)
			_exit(0);
	}
}

}  // namespace

int64_t spawn_worker(int cmd_fd, int reply_fd)
{
	int64_t pid = clone_files();
	if (pid != 0)
		return pid;
	// Forked workers inherit these handlers.
	struct sigaction sa;
	std::memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fault;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, nullptr);
	sigaction(SIGBUS, &sa, nullptr);
	worker_loop(cmd_fd, reply_fd);
}

}  // namespace fl::real
