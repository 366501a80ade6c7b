// SPDX-License-Identifier: GPL-2.0-only
// run_on_host: the caller forks a supervisor; the supervisor creates the
// map, starts worker 0 (real/worker.h) and walks the Program op by op the
// way Execution::run does for the machine (same skips, same label binding),
// sending each memory op to the worker that plays op.proc and running the
// bpf(2) ops itself. It sends the Trace back as text (check/trace_text.h),
// kills and reaps its process tree, and exits.
#include "real/host_executor.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check/trace_text.h"
#include "real/arena.h"
#include "real/host_probe.h"
#include "real/sys.h"
#include "real/worker.h"

namespace fl {

namespace {

using real::Arena;
using real::Command;
using real::Reply;

constexpr int kReplyTimeoutMs = 10000;
constexpr int kRunTimeoutMs = 60000;
constexpr int kMapFdFloor = 512;
// TASK_SIZE: 47-bit x86_64 user space; 4 GiB for i386 on a 64-bit kernel.
constexpr uint64_t kUserSpace = sizeof(void *) == 8 ? uint64_t(1) << 47 : uint64_t(1) << 32;  // above the pipes the workers make, so a closed map fd stays closed

struct Proc {
	int64_t host_pid = -1;
	int cmd_fd = -1;
	bool alive = false;
};

// Thrown inside the supervisor when a Program cannot be run faithfully
// ("unsupported: ...") or the process tree misbehaves ("error: ...").
struct Stop {
	std::string reason;
};

class Supervisor {
public:
	Supervisor(const Program &p, const Arena &a, unsigned shift) : p_(p), arena_(a), shift_(shift) {}
	Trace run();
	void kill_all();

private:
	Event run(const Op &op);
	bool resolve(const Addr &a, uint64_t *out) const { return labels_.resolve(a, shift_, out); }
	Reply call(int proc, Command c);
	int64_t place_or_zero(int proc, uint64_t hint, uint64_t len);
	void need_inside(uint64_t addr, uint64_t len, const char *what);
	void wait_dead(int64_t host_pid);
	std::string smaps(int proc, uint64_t addr);
	uint64_t page_align(uint64_t len) const { return (len + page() - 1) & ~(page() - 1); }
	uint64_t page() const { return uint64_t(1) << shift_; }
	// The kernel refuses these ranges before it looks at a VMA (unaligned
	// start, empty, or wrapping): safe to pass on wherever they point.
	bool rejected_early(uint64_t addr, uint64_t len) const
	{
		return (addr & (page() - 1)) || len == 0 || page_align(len) < len || page_align(len) == 0 ||
		       addr + page_align(len) < addr;
	}

	const Program &p_;
	Arena arena_;
	uint64_t arena_map_start_ = 0;  // an arena map's user_vm_start, once its first mmap set it
	unsigned shift_;
	int map_fd_ = -1;
	int reply_fd_ = -1;
	std::vector<Proc> procs_;
	Labels labels_{p_.labels.size(), sizeof(void *) == 4 ? 32u : 64u};
};

void Supervisor::need_inside(uint64_t addr, uint64_t len, const char *what)
{
	if (!arena_.contains(addr, len))
		throw Stop{std::string("unsupported: ") + what + " reaches outside the executor's address window"};
}

Reply Supervisor::call(int proc, Command c)
{
	c.map_fd = map_fd_;
	c.page_shift = shift_;
	if (write(procs_[proc].cmd_fd, &c, sizeof c) != sizeof c)
		throw Stop{"error: cannot reach process " + std::to_string(proc)};
	pollfd pfd = {reply_fd_, POLLIN, 0};
	Reply r;
	if (poll(&pfd, 1, kReplyTimeoutMs) != 1 || read(reply_fd_, &r, sizeof r) != sizeof r)
		throw Stop{"error: process " + std::to_string(proc) + " did not answer"};
	return r;
}

// A mapping without MAP_FIXED: where the machine would put it, or 0 (let
// the kernel choose, which lands outside the window) when it has no room.
int64_t Supervisor::place_or_zero(int proc, uint64_t hint, uint64_t len)
{
	if (hint && len && !arena_.contains(hint, page_align(len)))
		throw Stop{"unsupported: an mmap hint outside the executor's address window"};
	auto at = real::place(int(procs_[proc].host_pid), arena_, hint, len, shift_);
	// The machine's address space is empty up to its task size; the
	// host's is not. A length the window cannot hold goes to the kernel
	// unplaced: up to 1/8 of the address space a gap surely exists (the
	// ~70 TiB between ASan's shadow, or the heap, and the libraries), so
	// the host fails (or not) where the machine does; past the address
	// space both fail early. In between the host may say ENOMEM where the
	// machine finds room: not comparable.
	if (!at && len && page_align(len) >= len && page_align(len) > kUserSpace / 8 && page_align(len) < kUserSpace)
		throw Stop{"unsupported: a mapping of " + std::to_string(len) + " bytes does not fit the executor's window"};
	return at ? int64_t(*at) : 0;
}

void Supervisor::wait_dead(int64_t host_pid)
{
	// exit_mm() runs before the task turns zombie: once it is 'Z' its
	// mappings are gone, as the machine's are when exit() returns.
	char path[64];
	std::snprintf(path, sizeof path, "/proc/%lld/stat", (long long)host_pid);
	for (int i = 0; i < 100000; i++) {
		FILE *f = std::fopen(path, "r");
		if (!f)
			return;
		char buf[256] = {};
		size_t n = std::fread(buf, 1, sizeof buf - 1, f);
		std::fclose(f);
		const char *paren = n ? std::strrchr(buf, ')') : nullptr;
		if (!paren || paren[1] == '\0' || paren[2] == 'Z' || paren[2] == 'X')
			return;
		usleep(50);
	}
	throw Stop{"error: an exiting process did not die"};
}

std::string Supervisor::smaps(int proc, uint64_t addr)
{
	char path[64];
	std::snprintf(path, sizeof path, "/proc/%lld/smaps", (long long)procs_[proc].host_pid);
	FILE *f = std::fopen(path, "r");
	if (!f)
		throw Stop{"error: cannot read " + std::string(path)};
	bool in = false;
	std::string flags;
	unsigned long long rss_kb = 0;
	char line[512];
	while (std::fgets(line, sizeof line, f)) {
		unsigned long long s, e;
		char c;
		if (std::sscanf(line, "%llx-%llx %c", &s, &e, &c) == 3) {
			if (in)
				break;
			in = s <= addr && addr < e;
		} else if (in) {
			std::sscanf(line, "Rss: %llu kB", &rss_kb);
			if (!std::strncmp(line, "VmFlags:", 8)) {
				flags = line + 8;
				while (!flags.empty() && (flags.back() == '\n' || flags.back() == ' '))
					flags.pop_back();
				while (!flags.empty() && flags.front() == ' ')
					flags.erase(0, 1);
			}
		}
	}
	std::fclose(f);
	if (!in)
		return "no vma";
	return "VmFlags: " + flags + " | Rss: " + std::to_string(rss_kb * 1024 / page()) + "p";
}

Event Supervisor::run(const Op &op)
{
	Event ev;
	uint64_t addr = 0, at = 0;
	bool alive = op.proc >= 0 && op.proc < (int)procs_.size() && procs_[op.proc].alive;
	ev.info = labels_.prepare(p_, op, alive, shift_, &addr, &at);
	if (!ev.info.empty())
		return ev;
	auto bind = [&](int label, int64_t ret) {
		labels_.bind(label, ret);
		ev.ret = ret < 0 ? ret : 0;
	};

	Command c;
	c.kind = op.kind;
	c.addr = addr;
	c.len = op.len.resolve(shift_);
	c.new_len = op.new_len.resolve(shift_);
	c.prot = op.prot;
	c.flags = op.flags;
	c.advice = op.advice;
	c.size = op.size;
	c.value = op.value;
	c.pgoff = op.pgoff;
	c.at = at;
	switch (op.kind) {
	case OpKind::mmap:
	case OpKind::reserve: {
		if (op.kind == OpKind::reserve) {
			c.prot = uapi::PROT_NONE;
			c.flags = uapi::MAP_PRIVATE | uapi::MAP_ANONYMOUS | (op.has_at ? uapi::MAP_FIXED : 0);
		}
		if (c.flags & (uapi::MAP_FIXED | uapi::MAP_FIXED_NOREPLACE)) {
			if (!rejected_early(at, c.len))
				need_inside(at, page_align(c.len), "a MAP_FIXED target");
		} else if (p_.map.map_type == uapi::BPF_MAP_TYPE_ARENA && op.kind == OpKind::mmap &&
			   (arena_map_start_ || p_.map.map_extra)) {
			// The arena's address is fixed: the kernel refuses any other
			// (arena_get_unmapped_area, arena_map_mmap), so the hint goes
			// as it is and a success lands at that address, in the window.
			c.at = op.has_at ? at : 0;
		} else if (p_.map.map_type == uapi::BPF_MAP_TYPE_ARENA && op.kind == OpKind::mmap) {
			// arena_get_unmapped_area asks for twice the length and moves
			// up to a 4 GiB boundary when the range would cross one: place
			// it as the machine's port does.
			if (int64_t placed = place_or_zero(op.proc, op.has_at ? at : 0, 2 * c.len)) {
				uint64_t a = uint64_t(placed), l = page_align(c.len);
				if ((a >> 32) != ((a + l - 1) >> 32))
					a = (a + (uint64_t(1) << 32) - 1) & ~((uint64_t(1) << 32) - 1);
				c.at = a;
				c.flags |= uapi::MAP_FIXED_NOREPLACE;
			}
		} else if (int64_t placed = place_or_zero(op.proc, op.has_at ? at : 0, c.len)) {
			c.at = uint64_t(placed);
			c.flags |= uapi::MAP_FIXED_NOREPLACE;
		}
		int64_t r = call(op.proc, c).ret;
		if (r >= 0 && op.kind == OpKind::mmap && p_.map.map_type == uapi::BPF_MAP_TYPE_ARENA)
			arena_map_start_ = uint64_t(r);
		bind(op.label, r);
		break;
	}
	case OpKind::munmap:
	case OpKind::mprotect:
	case OpKind::madvise:
		if (!rejected_early(addr, c.len))
			need_inside(addr, page_align(c.len), to_string(op.kind));
		ev.ret = call(op.proc, c).ret;
		break;
	case OpKind::mremap: {
		if (!(addr & (page() - 1)))  // else -EINVAL before any VMA is looked at
			need_inside(addr, std::max(page(), page_align(c.len)), "an mremap source");
		if (c.flags & uapi::MREMAP_FIXED) {
			if (!rejected_early(at, c.new_len))
				need_inside(at, page_align(c.new_len), "an mremap target");
			bind(op.label, call(op.proc, c).ret);
			break;
		}
		if (!(c.flags & uapi::MREMAP_MAYMOVE)) {
			if (!rejected_early(addr, c.new_len))
				need_inside(addr, page_align(c.new_len), "an mremap growth");
			bind(op.label, call(op.proc, c).ret);
			break;
		}
		// A move the kernel places itself: let it (so every check runs
		// in the kernel's own order), then carry the result from wherever
		// it landed to where the machine's get_unmapped_area would have
		// put it, chosen before the move as the machine chooses it.
		int64_t target = place_or_zero(op.proc, 0, c.new_len);
		int64_t r = call(op.proc, c).ret;
		if (r >= 0 && uint64_t(r) != addr && target && r != target) {
			Command carry = c;
			carry.addr = uint64_t(r);
			carry.len = carry.new_len = page_align(c.new_len);
			carry.flags = uapi::MREMAP_MAYMOVE | uapi::MREMAP_FIXED;
			carry.at = uint64_t(target);
			r = call(op.proc, carry).ret;
			if (r != target)
				throw Stop{"error: could not carry an mremap'd mapping into the executor's window"};
		}
		bind(op.label, r);
		break;
	}
	case OpKind::load:
	case OpKind::store: {
		need_inside(addr, op.size, to_string(op.kind));
		Reply r = call(op.proc, c);
		ev.sig = r.sig;
		ev.data.assign(r.data, r.data + std::min<unsigned>(r.size, sizeof r.data));
		break;
	}
	case OpKind::fork: {
		Reply r = call(op.proc, c);
		if (r.ret < 0) {
			ev.ret = r.ret;
			break;
		}
		procs_.push_back({r.ret, r.child_cmd_fd, true});
		ev.ret = int64_t(procs_.size()) - 1;
		break;
	}
	case OpKind::exit:
		call(op.proc, c);
		wait_dead(procs_[op.proc].host_pid);
		procs_[op.proc].alive = false;
		ev.ret = 0;
		break;
	case OpKind::update: {
		std::vector<uint8_t> v(p_.map.value_size <= (1u << 24) ? p_.map.value_size : 8, 0);
		for (size_t i = 0; i < 8 && i < v.size(); i++)
			v[i] = uint8_t(op.value >> (8 * i));
		ev.ret = sys::bpf_map_update(map_fd_, op.index, v, uint64_t(op.flags));
		break;
	}
	case OpKind::lookup:
		ev.data.assign(p_.map.value_size <= (1u << 24) ? p_.map.value_size : 8, 0);
		ev.ret = sys::bpf_map_lookup(map_fd_, op.index, &ev.data);
		if (ev.ret < 0)
			ev.data.clear();
		break;
	case OpKind::freeze:
		ev.ret = sys::bpf_map_freeze(map_fd_);
		break;
	case OpKind::close:
		ev.ret = close(map_fd_) ? -errno : 0;
		break;
	case OpKind::smaps:
		need_inside(addr, 1, "smaps");
		ev.info = smaps(op.proc, addr);
		break;
	case OpKind::arena_alloc:
	case OpKind::arena_free:
	case OpKind::arena_reserve:
		throw Stop{"unsupported: the arena kfuncs are called from a BPF program"};
	}
	return ev;
}

Trace Supervisor::run()
{
	Trace t;
	int64_t fd = sys::bpf_map_create(p_.map);
	t.map_ret = fd < 0 ? fd : 0;
	if (fd >= 0) {
		map_fd_ = fcntl(int(fd), F_DUPFD, kMapFdFloor);
		close(int(fd));
		if (map_fd_ < 0)
			throw Stop{"error: cannot move the map fd above " + std::to_string(kMapFdFloor)};
	}
	int reply[2], cmd[2];
	if (pipe(reply) || pipe(cmd))
		throw Stop{"error: pipe: " + std::string(std::strerror(errno))};
	reply_fd_ = reply[0];
	int64_t pid = real::spawn_worker(cmd[0], reply[1]);
	if (pid < 0)
		throw Stop{"error: clone: " + std::string(std::strerror(int(-pid)))};
	procs_.push_back({pid, cmd[1], true});
	for (const Op &op : p_.ops)
		t.events.push_back(run(op));
	return t;
}

void Supervisor::kill_all()
{
	for (const Proc &p : procs_)
		kill(pid_t(p.host_pid), SIGKILL);  // not reaped yet, so the pid is still ours
	// As the child subreaper, every orphaned worker is reparented here.
	while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR)
		;
}

void supervise_body(const Program &p, int out_fd)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	std::string text;
	std::string reason;
	auto arena = real::find_arena(&reason);
	unsigned shift = 12;
	while ((1l << shift) < sysconf(_SC_PAGESIZE))
		shift++;
	Supervisor s(p, arena.value_or(Arena{}), shift);
	if (!arena) {
		text = "reason error: " + reason + "\n";
	} else {
		try {
			text = write_trace(s.run());
		} catch (const Stop &stop) {
			text = "reason " + stop.reason + "\n";
		} catch (const std::exception &e) {
			// Nothing may unwind out of this process: it is a copy of the
			// caller and would go on running the caller's loop.
			text = std::string("reason error: ") + e.what() + "\n";
		} catch (...) {
			text = "reason error: an unknown exception\n";
		}
	}
	for (size_t done = 0; done < text.size();) {
		ssize_t k = write(out_fd, text.data() + done, text.size() - done);
		if (k <= 0 && errno != EINTR)
			break;
		done += k > 0 ? size_t(k) : 0;
	}
	s.kill_all();
}

// The supervisor process: never returns, whatever happens.
[[noreturn]] void supervise(const Program &p, int out_fd)
{
	try {
		supervise_body(p, out_fd);
	} catch (...) {
		_exit(1);
	}
	_exit(0);
}

}  // namespace

std::optional<Trace> run_on_host(const Program &p, std::string *skip_reason)
{
	auto fail = [&](std::string why) -> std::optional<Trace> {
		if (skip_reason)
			*skip_reason = std::move(why);
		return std::nullopt;
	};
	std::string why;
	if (!host_bpf_available(&why) ||
	    (p.map.map_type == uapi::BPF_MAP_TYPE_ARENA && !host_arena_available(&why)))
		return fail("skipped: " + why);
	if (!real::map_size_allowed(p.map, &why))
		return fail("unsupported: " + why);
	int out[2];
	if (pipe(out))
		return fail("error: pipe: " + std::string(std::strerror(errno)));
	std::fflush(nullptr);
	pid_t pid = fork();
	if (pid < 0) {
		close(out[0]);
		close(out[1]);
		return fail("error: fork: " + std::string(std::strerror(errno)));
	}
	if (pid == 0) {
		close(out[0]);
		setpgid(0, 0);
		supervise(p, out[1]);
	}
	close(out[1]);
	std::string text;
	bool timed_out = false;
	for (;;) {
		pollfd pfd = {out[0], POLLIN, 0};
		int n = poll(&pfd, 1, kRunTimeoutMs);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			timed_out = true;
			break;
		}
		char buf[4096];
		ssize_t k = read(out[0], buf, sizeof buf);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		text.append(buf, size_t(k));
	}
	close(out[0]);
	if (timed_out)
		kill(-pid, SIGKILL);  // the supervisor leads its own process group
	while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR)
		;
	if (timed_out)
		return fail("error: the host run timed out");
	if (text.rfind("reason ", 0) == 0) {
		text.erase(0, 7);
		while (!text.empty() && text.back() == '\n')
			text.pop_back();
		return fail(text);
	}
	std::string err;
	auto t = read_trace(text, &err);
	if (!t)
		return fail(text.empty() ? "error: the supervisor died" : "error: bad trace from the supervisor: " + err);
	return t;
}

}  // namespace fl
