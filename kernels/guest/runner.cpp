// SPDX-License-Identifier: GPL-2.0-only
// The QEMU guest's /init: runs every Program under /p with the host-kernel
// executor (src/real/host_executor.h) against the guest's own kernel and
// prints each trace on the console (src/check/trace_text.h), framed as
//
//	@@ begin NAME
//	trace ... end            (or one "skipped: ..." / "unsupported: ..." /
//	@@ end NAME               "error: ..." / "parse: ..." line)
//	@@ done N
//
// A file NAME.repro is a static reproducer (`faultline repro`, kernels
// repro.sh): it runs as a child with its stdout framed the same way, followed
// by "@@ exit N" (its status) inside the frame; its stderr is dropped.
//
// Files named b-* run as root (bpf_bypass_spec_v1() is perfmon_capable(),
// so root bypasses the Spectre-v1 masking); then the runner drops
// CAP_SYS_ADMIN and CAP_PERFMON but keeps CAP_BPF and runs the m-* files, so
// maps are created in the masked (power-of-two rounded) layout.
// As PID 1 it mounts /proc (smaps) and ends with reboot(RB_AUTOBOOT), which
// qemu -no-reboot turns into a clean exit. It refuses to run as anything but
// PID 1 unless given a directory, so it never reboots a host by accident.
// No iostreams: their locale setup runs pthread_once, whose futex wake is
// ENOSYS on a tinyconfig kernel (CONFIG_FUTEX off), and glibc aborts.
#include <dirent.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "check/program_text.h"
#include "check/trace_text.h"
#include "real/host_executor.h"

namespace {

std::vector<std::string> list_programs(const std::string &dir, char mode)
{
	std::vector<std::string> names;
	if (DIR *d = opendir(dir.c_str())) {
		while (dirent *e = readdir(d)) {
			std::string n = e->d_name;
			if (n.size() > 2 && n[0] == mode && n[1] == '-')
				names.push_back(n);
		}
		closedir(d);
	}
	std::sort(names.begin(), names.end());
	return names;
}

// Drops CAP_SYS_ADMIN and CAP_PERFMON from the effective and permitted sets
// (and so from every child): bpf(2) stays allowed through CAP_BPF.
bool drop_perfmon()
{
	__user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
	__user_cap_data_struct data[2]{};
	if (syscall(SYS_capget, &hdr, data) != 0)
		return false;
	for (int cap : {CAP_SYS_ADMIN, CAP_PERFMON}) {
		data[cap / 32].effective &= ~(1u << (cap % 32));
		data[cap / 32].permitted &= ~(1u << (cap % 32));
	}
	return syscall(SYS_capset, &hdr, data) == 0;
}

// A reproducer's stdout (its trace text) and exit status, inside its frame.
// Its stderr (the verdict in words) is read and dropped: the console is one
// stream, and the exit status says the same.
void run_repro(const std::string &path)
{
	int out[2], err[2];
	if (pipe(out) != 0 || pipe(err) != 0) {
		std::printf("error: pipe failed\n");
		return;
	}
	std::fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(out[1], 1), dup2(err[1], 2);
		close(out[0]), close(out[1]), close(err[0]), close(err[1]);
		execl(path.c_str(), path.c_str(), (char *)nullptr);
		_exit(127);
	}
	close(out[1]), close(err[1]);
	char buf[4096];
	for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;)
		std::fwrite(buf, 1, size_t(n), stdout);
	while (read(err[0], buf, sizeof buf) > 0) {
	}
	close(out[0]), close(err[0]);
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		std::printf("error: could not run the reproducer\n");
	else
		std::printf("@@ exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

void run_one(const std::string &dir, const std::string &name)
{
	if (name.size() > 6 && name.compare(name.size() - 6, 6, ".repro") == 0) {
		std::printf("@@ begin %s\n", name.c_str());
		run_repro(dir + "/" + name);
		std::printf("@@ end %s\n", name.c_str());
		std::fflush(stdout);
		return;
	}
	std::string text;
	if (FILE *f = std::fopen((dir + "/" + name).c_str(), "rb")) {
		char buf[4096];
		for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
			text.append(buf, n);
		std::fclose(f);
	}
	std::printf("@@ begin %s\n", name.c_str());
	fl::ParseResult parsed = fl::parse_program(text);
	if (!parsed.program) {
		std::printf("parse: %s\n", parsed.error.str().c_str());
	} else {
		std::string reason;
		auto trace = fl::run_on_host(*parsed.program, &reason);
		if (trace)
			std::fputs(fl::write_trace(*trace).c_str(), stdout);
		else
			std::printf("%s\n", reason.c_str());
	}
	std::printf("@@ end %s\n", name.c_str());
	std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv)
{
	const bool init = getpid() == 1;
	if (!init && argc != 2) {
		std::fprintf(stderr, "usage: %s DIR (as PID 1 in a guest: /p)\n", argv[0]);
		return 2;
	}
	// As PID 1 the arguments are the kernel's: it hands init every boot
	// parameter it does not know (i386 tinyconfig has no IO-APIC, so
	// "no_timer_check" arrives as argv[1]).
	const std::string dir = init ? "/p" : argv[1];
	if (init)
		mount("proc", "/proc", "proc", 0, nullptr);
	std::printf("@@ start\n");
	size_t n = 0;
	for (const auto &name : list_programs(dir, 'b'))
		run_one(dir, name), n++;
	auto masked = list_programs(dir, 'm');
	if (!masked.empty() && !drop_perfmon())
		std::printf("@@ warning: could not drop CAP_PERFMON\n");
	for (const auto &name : masked)
		run_one(dir, name), n++;
	std::printf("@@ done %zu\n", n);
	std::fflush(stdout);
	if (init) {
		sync();
		reboot(RB_AUTOBOOT);
	}
	return 0;
}
