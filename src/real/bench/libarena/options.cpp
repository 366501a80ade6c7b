// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/libarena/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "libarena/native/native_bench.h"

namespace fl::arena_bench {

namespace {

// A whole decimal number in [lo, hi].
std::optional<int> parse_int(const std::string &s, int lo, int hi)
{
	if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
		return std::nullopt;
	const int v = std::atoi(s.c_str());
	if (v < lo || v > hi)
		return std::nullopt;
	return v;
}

std::optional<double> parse_seconds(const std::string &s)
{
	if (s.empty() || s.find_first_not_of("0123456789.") != std::string::npos)
		return std::nullopt;
	errno = 0;
	char *end;
	const double v = std::strtod(s.c_str(), &end);
	if (errno || *end || !std::isfinite(v) || v > 3600)
		return std::nullopt;
	return v;
}

std::optional<std::vector<int>> parse_ints(const std::string &s, int lo, int hi)
{
	std::vector<int> out;
	for (size_t pos = 0; pos <= s.size();) {
		size_t comma = s.find(',', pos);
		if (comma == std::string::npos)
			comma = s.size();
		auto v = parse_int(s.substr(pos, comma - pos), lo, hi);
		if (!v)
			return std::nullopt;
		out.push_back(*v);
		pos = comma + 1;
	}
	return out;
}

std::optional<std::vector<Variant>> parse_variants(const std::string &s)
{
	std::vector<Variant> out;
	for (size_t pos = 0; pos <= s.size();) {
		size_t comma = s.find(',', pos);
		if (comma == std::string::npos)
			comma = s.size();
		const std::string name = s.substr(pos, comma - pos);
		if (name == "malloc-free")
			out.push_back(Variant::malloc_free);
		else if (name == "malloc-xfree")
			out.push_back(Variant::malloc_xfree);
		else
			return std::nullopt;
		pos = comma + 1;
	}
	return out;
}

}  // namespace

std::string usage()
{
	return "usage: faultline bench --libarena [--variants malloc-free,malloc-xfree] [--allocs 1,4,16,64,256]\n"
	       "                                  [-p|--producers 1,2,4,8] [--runs 3] [-d|--duration 0.5] [-w|--warmup 0.1]\n"
	       "                                  [--no-model]\n"
	       "Seed 002's latency tables on the libarena port's native build (real threads, one per producer,\n"
	       "pinned): alloc and free ns per op at `before` and `series`, the speedup, the mean of --runs runs of\n"
	       "--duration seconds per cell, beside the seed's numbers; then the simulated build's counts per op.\n";
}

std::optional<Options> parse_options(int argc, char **argv, std::string *err)
{
	Options o;
	for (int i = 1; i < argc; i++) {
		const std::string a = argv[i];
		if (a == "--help" || a == "-h") {
			o.help = true;
			continue;
		}
		if (a == "--libarena")  // `faultline bench --libarena` passes it on
			continue;
		if (a == "--no-model") {
			o.model = false;
			continue;
		}
		const bool takes = a == "--variants" || a == "--allocs" || a == "-p" || a == "--producers" ||
				   a == "--runs" || a == "-d" || a == "--duration" || a == "-w" || a == "--warmup";
		if (!takes) {
			*err = "unknown option " + a + " (see --help)";
			return std::nullopt;
		}
		if (i + 1 >= argc) {
			*err = a + " needs a value";
			return std::nullopt;
		}
		const std::string v = argv[++i];
		const std::string bad = "bad value '" + v + "' for " + a;
		if (a == "--variants") {
			auto l = parse_variants(v);
			if (!l) {
				*err = bad + ": malloc-free and/or malloc-xfree, comma-separated";
				return std::nullopt;
			}
			o.variants = *l;
		} else if (a == "--allocs") {
			auto l = parse_ints(v, 1, 4096);
			if (!l) {
				*err = bad + ": allocations per invocation, 1..4096, comma-separated";
				return std::nullopt;
			}
			o.allocs = *l;
		} else if (a == "-p" || a == "--producers") {
			auto l = parse_ints(v, 1, kMaxProducers);
			if (!l) {
				*err = bad + ": producers, 1.." + std::to_string(kMaxProducers) + ", comma-separated";
				return std::nullopt;
			}
			o.producers = *l;
		} else if (a == "--runs") {
			auto n = parse_int(v, 1, 100);
			if (!n) {
				*err = bad + ": 1..100";
				return std::nullopt;
			}
			o.runs = *n;
		} else {
			auto s = parse_seconds(v);
			const bool duration = a == "-d" || a == "--duration";
			if (!s || (duration && *s <= 0)) {
				*err = bad + ": seconds" + (duration ? ", > 0" : "");
				return std::nullopt;
			}
			(duration ? o.duration_s : o.warmup_s) = *s;
		}
	}
	return o;
}

}  // namespace fl::arena_bench
