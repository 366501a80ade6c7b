// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/options.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <unistd.h>

namespace fl::bench {

namespace {

constexpr int kMaxProducers = 1024;

bool parse_u64(const std::string &s, uint64_t *out, size_t *used)
{
	if (s.empty() || !(isdigit((unsigned char)s[0])))
		return false;  // strtoull would accept "-1" and " 1"
	errno = 0;
	char *end;
	*out = strtoull(s.c_str(), &end, 0);
	*used = size_t(end - s.c_str());
	return errno == 0 && *used > 0;
}

std::optional<int> parse_int(const std::string &s)
{
	uint64_t v;
	size_t used;
	if (!parse_u64(s, &v, &used) || used != s.size() || v > uint64_t(kMaxProducers) * 1000)
		return std::nullopt;
	return int(v);
}

std::optional<double> parse_seconds(const std::string &s)
{
	if (s.empty() || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return std::nullopt;
	errno = 0;
	char *end;
	double v = strtod(s.c_str(), &end);
	if (errno || *end || !std::isfinite(v) || v > 86400)
		return std::nullopt;
	return v;
}

template <typename T, typename F>
std::optional<std::vector<T>> parse_list(const std::string &s, F parse_one)
{
	std::vector<T> out;
	size_t pos = 0;
	while (pos <= s.size()) {
		size_t comma = s.find(',', pos);
		if (comma == std::string::npos)
			comma = s.size();
		auto v = parse_one(s.substr(pos, comma - pos));
		if (!v)
			return std::nullopt;
		out.push_back(*v);
		pos = comma + 1;
	}
	return out;
}

uint64_t physical_memory()
{
	return uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
}

// The checks every size (--map-size, --sizes) goes through.
bool check_size(uint64_t bytes, const std::string &text, std::string *err)
{
	if (bytes > physical_memory()) {
		*err = "map size " + text + " is beyond this machine's memory (" + std::to_string(physical_memory()) +
		       " bytes)";
		return false;
	}
	if ((bytes + 7) / 8 > UINT32_MAX) {  // the seed silently truncated max_entries
		*err = "map size " + text + " needs more than 2^32-1 8-byte entries";
		return false;
	}
	return true;
}

}  // namespace

std::optional<uint64_t> parse_size(const std::string &s)
{
	uint64_t v;
	size_t used;
	if (!parse_u64(s, &v, &used))
		return std::nullopt;
	std::string suffix = s.substr(used);
	unsigned shift = 0;
	if (suffix == "K" || suffix == "k" || suffix == "KiB")
		shift = 10;
	else if (suffix == "M" || suffix == "m" || suffix == "MiB")
		shift = 20;
	else if (suffix == "G" || suffix == "g" || suffix == "GiB")
		shift = 30;
	else if (!suffix.empty())
		return std::nullopt;
	if (v == 0 || v > (UINT64_MAX >> shift))
		return std::nullopt;
	return v << shift;
}

Pattern Options::pattern() const
{
	Pattern p;
	p.populate = populate;
	p.touch_pages = touch == Touch::all ? geometry.pages() : touch == Touch::count ? touch_count : 0;
	return p;
}

std::optional<Options> parse_options(int argc, char **argv, std::string *err)
{
	Options o;
	o.geometry.page_size = uint64_t(sysconf(_SC_PAGESIZE));
	std::string touch_text = "none";
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i], v;
		// --opt=value and --opt value
		if (size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
			v = a.substr(eq + 1);
			a = a.substr(0, eq);
		}
		auto value = [&]() -> std::optional<std::string> {
			if (!v.empty())
				return v;
			if (i + 1 >= argc) {
				*err = a + " needs a value";
				return std::nullopt;
			}
			return std::string(argv[++i]);
		};
		auto bad = [&](const std::string &val, const std::string &why = "") {
			*err = "bad value '" + val + "' for " + a + (why.empty() ? "" : ": " + why);
			return std::nullopt;
		};
		if (a == "-h" || a == "--help") {
			o.help = true;
		} else if (a == "--populate") {
			o.populate = true;
		} else if (a == "--matrix") {
			o.matrix = true;
		} else if (a == "arraymap-mmap") {
			// the seed's bench name, accepted so its command lines paste here
		} else if (a == "-p" || a == "--producers") {
			auto s = value();
			if (!s)
				return std::nullopt;
			auto n = parse_int(*s);
			if (!n || *n < 1 || *n > kMaxProducers) {
				*err = "bad value '" + *s + "' for " + a + ": need a thread count from 1 to " +
				       std::to_string(kMaxProducers);
				return std::nullopt;
			}
			o.timing.producers = *n;
		} else if (a == "--map-size") {
			auto s = value();
			if (!s)
				return std::nullopt;
			auto n = parse_size(*s);
			if (!n)
				return bad(*s, "need a byte count > 0 (decimal, 0x hex, or a K/M/G suffix)");
			if (!check_size(*n, *s, err))
				return std::nullopt;
			o.geometry.map_bytes = *n;
		} else if (a == "-d" || a == "--duration" || a == "-w" || a == "--warmup") {
			auto s = value();
			if (!s)
				return std::nullopt;
			auto secs = parse_seconds(*s);
			bool dur = a == "-d" || a == "--duration";
			if (!secs || (dur && *secs <= 0))
				return bad(*s);
			(dur ? o.timing.duration_s : o.timing.warmup_s) = *secs;
		} else if (a == "--backend") {
			auto s = value();
			if (!s)
				return std::nullopt;
			if (!is_backend_name(*s)) {
				*err = "unknown backend '" + *s + "' (bpf-array, bpf-arena, memfd, uffd, anon, model)";
				return std::nullopt;
			}
			o.backend = *s;
		} else if (a == "--backends") {
			auto s = value();
			if (!s)
				return std::nullopt;
			auto l = parse_list<std::string>(*s, [](const std::string &x) {
				return is_backend_name(x) ? std::optional<std::string>(x) : std::nullopt;
			});
			if (!l) {
				*err = "unknown backend in '" + *s + "' (bpf-array, bpf-arena, memfd, uffd, anon, model)";
				return std::nullopt;
			}
			o.backends = *l;
		} else if (a == "--touch") {
			auto s = value();
			if (!s)
				return std::nullopt;
			touch_text = *s;
			uint64_t n;
			size_t used;
			if (*s == "all")
				o.touch = Touch::all;
			else if (*s == "none")
				o.touch = Touch::none;
			else if (parse_u64(*s, &n, &used) && used == s->size()) {
				o.touch = n ? Touch::count : Touch::none;
				o.touch_count = n;
			} else
				return bad(*s, "need all, none or a page count");
		} else if (a == "--patch") {
			auto s = value();
			if (!s)
				return std::nullopt;
			auto p = parse_patch(*s);
			if (!p)
				return bad(*s, "need pre, v1, v2 or v3");
			o.level.patch = *p;
		} else if (a == "--arch") {
			auto s = value();
			if (!s)
				return std::nullopt;
			auto p = parse_arch(*s);
			if (!p)
				return bad(*s, "need 32 or 64");
			o.level.arch = *p;
		} else if (a == "--out") {
			auto s = value();
			if (!s)
				return std::nullopt;
			o.out_dir = *s;
		} else if (a == "--threads") {
			auto s = value();
			if (!s)
				return std::nullopt;
			auto l = parse_list<int>(*s, parse_int);
			if (!l)
				return bad(*s);
			for (int n : *l)
				if (n < 1 || n > kMaxProducers)
					return bad(*s, "thread counts go from 1 to " + std::to_string(kMaxProducers));
			o.threads_list = *l;
		} else if (a == "--sizes") {
			auto s = value();
			if (!s)
				return std::nullopt;
			auto l = parse_list<uint64_t>(*s, parse_size);
			if (!l)
				return bad(*s, "need byte counts > 0");
			for (uint64_t n : *l)
				if (!check_size(n, std::to_string(n), err))
					return std::nullopt;
			o.sizes = *l;
		} else {
			*err = a.rfind("-", 0) == 0 ? "unknown option " + a : "unexpected argument '" + a + "'";
			return std::nullopt;
		}
	}
	if (o.touch == Touch::count && o.touch_count > o.geometry.pages() && !o.matrix) {
		*err = "--touch " + touch_text + " is more than the mapping's " + std::to_string(o.geometry.pages()) +
		       " pages";
		return std::nullopt;
	}
	return o;
}

std::string usage()
{
	return R"(usage: faultline bench [options] [arraymap-mmap]
       faultline bench --matrix [matrix options]
The seed's arraymap-mmap benchmark (mmap+munmap of an mmap-able array map per op)
on real backends and the port:
  -p, --producers N     producer threads (default 1)
  --map-size BYTES      map size: decimal, 0x hex, or a K/M/G suffix (default 8M)
  -d, --duration SEC    measured time (default 5), -w, --warmup SEC (default 1)
  --backend B           bpf-array (default), bpf-arena, memfd, uffd, anon, model
  --populate            MAP_POPULATE
  --touch all|none|N    per op, read one byte of every page / none / the first N pages
  --patch pre|v1|v2|v3  port level for uffd and model (default v2)
  --arch 32|64          port width for uffd and model (default 64)
Matrix (threads x sizes x {mmap, mmap+touch, populate, populate+touch} x backends):
  --matrix  --out DIR (default bench-results)  --threads 1,4,8,16
  --sizes 1M,8M,64M  --backends bpf-array,bpf-arena,memfd,uffd,anon,model
Writes DIR/matrix.csv, DIR/matrix.json, DIR/latency-<pattern>.svg.
)";
}

}  // namespace fl::bench
