// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/matrix.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/utsname.h>

#include "check/json.h"
#include "real/bench/svg.h"

namespace fl::bench {

namespace {

std::string fmt(double v)
{
	char b[40];
	snprintf(b, sizeof(b), "%.3f", v);
	return b;
}

std::string size_name(uint64_t b)
{
	return b % (1ull << 20) == 0 ? std::to_string(b >> 20) + "M" : std::to_string(b);
}

bool write_file(const std::filesystem::path &p, const std::string &text)
{
	std::ofstream f(p);
	f << text;
	return bool(f);
}

Point model_point(const Geometry &g, const Pattern &pat, const PortLevel &lvl)
{
	Point p;
	p.backend = "model";
	p.is_model = true;
	p.level = std::string(to_string(lvl.patch)) + "/arch" + to_string(lvl.arch);
	p.map_bytes = g.map_bytes;
	p.pages = g.pages();
	p.pattern = pat.name();
	std::string err;
	p.model = model_iteration(g, pat, lvl, &err);
	if (!err.empty())
		p.status = "skipped: " + err;
	return p;
}

Point real_point(const std::string &backend, const Geometry &g, const Pattern &pat, int threads,
		 const Options &o)
{
	Point p;
	p.backend = backend;
	if (backend == "uffd")
		p.level = std::string(to_string(o.level.patch)) + "/arch" + to_string(o.level.arch);
	p.map_bytes = g.map_bytes;
	p.pages = g.pages();
	p.threads = threads;
	p.pattern = pat.name();
	std::string skip;
	auto b = make_backend(backend, g, o.level, &skip);
	if (!b) {
		p.status = "skipped: " + skip;
		return p;
	}
	Timing t = o.timing;
	t.producers = threads;
	p.run = run_bench(*b, g, pat, t);
	if (!p.run.ok)
		p.status = "error: " + p.run.error;
	return p;
}

}  // namespace

std::vector<Pattern> matrix_patterns(const Geometry &g)
{
	return {Pattern{false, 0}, Pattern{false, g.pages()}, Pattern{true, 0}, Pattern{true, g.pages()}};
}

std::string to_csv(const std::vector<Point> &pts)
{
	std::string o = "backend,level,map_bytes,pages,threads,pattern,status,mops_mean,mops_stddev,latency_ns,ops,"
			"seconds,ptes_at_mmap,faults,fault_handlers,map_pages,ptes_installed,ptes_zapped,ptl_locks\n";
	for (const Point &p : pts) {
		std::string status = p.status;
		std::replace(status.begin(), status.end(), ',', ';');
		o += p.backend + "," + p.level + "," + std::to_string(p.map_bytes) + "," + std::to_string(p.pages) + "," +
		     std::to_string(p.threads) + "," + p.pattern + "," + status + ",";
		if (p.is_model) {
			const Stats &s = p.model.op;
			o += ",,,,," + std::to_string(p.model.ptes_at_mmap) + "," + std::to_string(s.faults) + "," +
			     std::to_string(s.fault_handlers) + "," + std::to_string(s.map_pages_calls) + "," +
			     std::to_string(s.ptes_installed) + "," + std::to_string(s.ptes_zapped) + "," +
			     std::to_string(s.ptl_locks) + "\n";
		} else {
			o += fmt(p.run.mops_mean) + "," + fmt(p.run.mops_stddev) + "," + fmt(p.run.latency_ns) + "," +
			     std::to_string(p.run.ops) + "," + fmt(p.run.seconds) + ",,,,,,,\n";
		}
	}
	return o;
}

std::string to_json(const std::vector<Point> &pts, const Options &opt)
{
	struct utsname u = {};
	uname(&u);
	std::string o = "{\n  \"bench\": \"arraymap-mmap\",\n  \"kernel\": " + json_string(u.release) +
			",\n  \"duration_s\": " + fmt(opt.timing.duration_s) + ",\n  \"warmup_s\": " +
			fmt(opt.timing.warmup_s) + ",\n  \"points\": [\n";
	for (size_t i = 0; i < pts.size(); i++) {
		const Point &p = pts[i];
		o += "    {\"backend\": " + json_string(p.backend) + ", \"level\": " + json_string(p.level) +
		     ", \"map_bytes\": " + std::to_string(p.map_bytes) + ", \"pages\": " + std::to_string(p.pages) +
		     ", \"threads\": " + std::to_string(p.threads) + ", \"pattern\": " + json_string(p.pattern) +
		     ", \"status\": " + json_string(p.status);
		if (p.is_model) {
			const Stats &s = p.model.op;
			o += ", \"counts\": {\"ptes_at_mmap\": " + std::to_string(p.model.ptes_at_mmap) +
			     ", \"faults\": " + std::to_string(s.faults) + ", \"fault_handlers\": " +
			     std::to_string(s.fault_handlers) + ", \"map_pages\": " + std::to_string(s.map_pages_calls) +
			     ", \"ptes_installed\": " + std::to_string(s.ptes_installed) + ", \"ptes_zapped\": " +
			     std::to_string(s.ptes_zapped) + ", \"ptl_locks\": " + std::to_string(s.ptl_locks) + "}";
		} else if (p.run.ok) {
			o += ", \"mops_mean\": " + fmt(p.run.mops_mean) + ", \"mops_stddev\": " + fmt(p.run.mops_stddev) +
			     ", \"latency_ns\": " + fmt(p.run.latency_ns) + ", \"ops\": " + std::to_string(p.run.ops) +
			     ", \"seconds\": " + fmt(p.run.seconds);
		}
		o += i + 1 < pts.size() ? "},\n" : "}\n";
	}
	return o + "  ]\n}\n";
}

std::string plot_pattern(const std::vector<Point> &pts, const std::string &pattern, int threads)
{
	std::vector<Series> series;
	for (const Point &p : pts) {
		if (p.is_model || p.pattern != pattern || p.threads != threads || !p.run.ok)
			continue;
		std::string name = p.backend + (p.level.empty() ? "" : " (" + p.level + ")");
		auto it = std::find_if(series.begin(), series.end(), [&](const Series &s) { return s.name == name; });
		if (it == series.end())
			it = series.insert(series.end(), Series{name, {}});
		it->points.emplace_back(double(p.map_bytes), p.run.latency_ns);
	}
	for (Series &s : series)
		std::sort(s.points.begin(), s.points.end());
	return loglog_svg("arraymap-mmap, " + pattern + ", " + std::to_string(threads) + " producer" +
				  (threads == 1 ? "" : "s"),
			  "map size (bytes)", "latency (ns/op)", series);
}

int run_matrix(const Options &o)
{
	namespace fs = std::filesystem;
	std::error_code ec;
	fs::create_directories(o.out_dir, ec);
	if (ec) {
		fprintf(stderr, "faultline-bench: cannot create %s: %s\n", o.out_dir.c_str(), ec.message().c_str());
		return 2;
	}
	const bool with_model = std::count(o.backends.begin(), o.backends.end(), "model") > 0;
	size_t total = 0;
	for (const auto &b : o.backends)
		total += (b == "model" ? 4 : o.threads_list.size()) * o.sizes.size() * 4;
	std::vector<Point> pts;
	const auto start = std::chrono::steady_clock::now();
	auto progress = [&](const Point &p) {
		double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
		std::string what = p.status != "ok" ? p.status
				   : p.is_model	    ? std::to_string(p.model.op.faults) + " faults, " +
							      std::to_string(p.model.op.ptes_installed) + " ptes"
						    : fmt(p.run.latency_ns) + " ns/op";
		fprintf(stderr, "[%3zu/%zu %6.1fs] %-9s %-8s %4s p%-2d %-14s %s\n", pts.size(), total, el,
			p.backend.c_str(), p.level.c_str(), size_name(p.map_bytes).c_str(), p.threads,
			p.pattern.c_str(), what.c_str());
	};
	for (uint64_t size : o.sizes) {
		Geometry g = o.geometry;
		g.map_bytes = size;
		for (const Pattern &pat : matrix_patterns(g)) {
			if (with_model)
				for (Patch patch : kPatches) {
					pts.push_back(model_point(g, pat, PortLevel{patch, o.level.arch}));
					progress(pts.back());
				}
			for (int threads : o.threads_list)
				for (const auto &b : o.backends) {
					if (b == "model")
						continue;
					pts.push_back(real_point(b, g, pat, threads, o));
					progress(pts.back());
				}
		}
	}
	fs::path dir(o.out_dir);
	bool ok = write_file(dir / "matrix.csv", to_csv(pts)) && write_file(dir / "matrix.json", to_json(pts, o));
	const int plot_threads = *std::min_element(o.threads_list.begin(), o.threads_list.end());
	for (const Pattern &pat : matrix_patterns(o.geometry))
		ok = ok && write_file(dir / ("latency-" + pat.name() + ".svg"), plot_pattern(pts, pat.name(), plot_threads));
	if (!ok) {
		fprintf(stderr, "faultline-bench: cannot write into %s\n", o.out_dir.c_str());
		return 1;
	}
	fprintf(stderr, "wrote %s/matrix.csv, matrix.json, latency-*.svg\n", o.out_dir.c_str());
	bool errors = std::any_of(pts.begin(), pts.end(), [](const Point &p) { return p.status.rfind("error", 0) == 0; });
	return errors ? 1 : 0;
}

}  // namespace fl::bench
