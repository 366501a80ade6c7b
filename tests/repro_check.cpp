// SPDX-License-Identifier: GPL-2.0-only
// repro_check DIR FILE...: for every Program FILE, runs the reproducer
// DIR/<name> (built from `faultline repro --level pre FILE`) and the host
// executor (src/real, what the oracle runs) on this kernel, and checks that
// the reproducer printed the same trace (or the same "unsupported: ..."
// reason) and exited 0 (the port at pre agrees with the host kernel).
// Exit 0 all reproduce, 1 any does not, 77 bpf(2) is not permitted here.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "check/program_text.h"
#include "check/trace_text.h"
#include "real/host_executor.h"

namespace {

std::string read_file(const std::string &path, bool *ok)
{
	std::string text;
	FILE *f = std::fopen(path.c_str(), "rb");
	*ok = f != nullptr;
	if (f) {
		char buf[4096];
		for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
			text.append(buf, n);
		std::fclose(f);
	}
	return text;
}

// The reproducer's stdout and exit status.
std::string run(const std::string &bin, int *status)
{
	std::string out;
	FILE *p = popen((bin + " 2>/dev/null").c_str(), "r");
	if (!p) {
		*status = -1;
		return out;
	}
	char buf[4096];
	for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
		out.append(buf, n);
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return out;
}

std::string stem(const std::string &path)
{
	std::string base = path.substr(path.rfind('/') + 1);
	return base.substr(0, base.rfind('.'));
}

}  // namespace

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: repro_check DIR FILE...\n");
		return 2;
	}
	std::string why;
	if (!fl::host_bpf_available(&why)) {
		std::printf("skipped: %s\n", why.c_str());
		return 77;
	}
	int reproduced = 0, failed = 0, unsupported = 0;
	for (int i = 2; i < argc; i++) {
		bool ok = false;
		std::string text = read_file(argv[i], &ok);
		fl::ParseResult parsed = fl::parse_program(text);
		if (!ok || !parsed.program) {
			std::printf("FAIL %s: cannot read or parse\n", argv[i]);
			failed++;
			continue;
		}
		std::string reason;
		auto host = fl::run_on_host(*parsed.program, &reason);
		std::string want = host ? fl::write_trace(*host) : reason + "\n";
		int status = 0;
		std::string got = run(std::string(argv[1]) + "/" + stem(argv[i]), &status);
		// A run the executor cannot make faithfully stops both with the same reason, exit 2.
		int want_status = host ? 0 : 2;
		if (got != want || status != want_status) {
			std::printf("FAIL %s: exit %d (want %d)\n-- host executor:\n%s-- reproducer:\n%s", argv[i], status,
				    want_status, want.c_str(), got.c_str());
			failed++;
		} else if (host) {
			reproduced++;
		} else {
			std::printf("%s: both say %s", argv[i], want.c_str());
			unsupported++;
		}
	}
	std::printf("repro_check: %d reproduced the host executor's trace, %d stopped alike (unsupported), %d failed\n",
		    reproduced, unsupported, failed);
	return failed ? 1 : 0;
}
