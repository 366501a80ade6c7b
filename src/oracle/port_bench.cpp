// SPDX-License-Identifier: GPL-2.0-only
// fl_port_bench [COUNT [SEED]]: the port side of the oracle's random batch,
// timed. `faultline oracle --count N --seed S` decodes these Programs
// (random_program_bytes, decode_program) and runs each on the host kernel
// and through oracle::run_port; `kernels compare` runs its decoded Programs
// through run_port too, at the guest kernels' levels and widths. The host
// side (a forked supervisor and workers per Program) is left out: this
// measures what the port costs, at the host's configuration and at two of
// the guests'.
//
// Prints, per configuration, Programs/s and a digest of every trace and
// scope run_port returned: two builds, or a run under FL_MACHINE_REUSE=0,
// with the same digests gave the same verdicts (ctest
// oracle.port_machine_reuse compares the digests, never the times).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>

#include "base/fnv.h"
#include "check/program_binary.h"
#include "check/trace_text.h"
#include "oracle/oracle.h"

namespace {

fl::Config config(fl::Patch patch, fl::Arch arch)
{
	fl::Config c;
	c.patch = patch;
	c.arch = arch;
	return c;  // 4k, anon door, Spectre-v1 masking: the oracle's host without the probe
}

}  // namespace

int main(int argc, char **argv)
{
	using namespace fl;
	const uint64_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 2000;
	const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 1;
	std::mt19937_64 rng(seed);
	std::vector<Program> batch;
	for (uint64_t i = 0; i < count; i++) {
		std::vector<uint8_t> bytes = random_program_bytes(rng);
		batch.push_back(decode_program(bytes.data(), bytes.size()));
	}
	for (const Config &c : {config(Patch::pre, Arch::A64), config(Patch::v1, Arch::A32), config(Patch::v2, Arch::A64)}) {
		std::vector<Trace> traces(batch.size());
		std::vector<oracle::Scope> scopes(batch.size());
		const auto t0 = std::chrono::steady_clock::now();
		for (size_t i = 0; i < batch.size(); i++)
			traces[i] = oracle::run_port(batch[i], c, &scopes[i]);
		const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		uint64_t digest = kFnvBasis;  // of the traces' text and the scopes
		for (size_t i = 0; i < batch.size(); i++) {
			digest = fnv1a(write_trace(traces[i]), digest);
			for (const auto &d : scopes[i])
				digest = fnv1a(std::string_view(d ? oracle::to_string(*d) : "-"), digest);
		}
		std::printf("port side %-22s %llu Programs (seed %llu) in %.3f s: %8.0f Programs/s  digest %016llx\n",
			    c.name().c_str(), (unsigned long long)count, (unsigned long long)seed, s, double(count) / s,
			    (unsigned long long)digest);
	}
	return 0;
}
