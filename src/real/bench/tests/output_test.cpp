// SPDX-License-Identifier: GPL-2.0-only
// The bench's outputs: the seed's summary line, CSV/JSON rows, SVG plots.
#include <gtest/gtest.h>
#include <regex>

#include "real/bench/matrix.h"
#include "real/bench/svg.h"

namespace fl::bench {
namespace {

size_t count(const std::string &s, const std::string &what)
{
	size_t n = 0;
	for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1))
		n++;
	return n;
}

TEST(BenchOutput, SeedLineShape)
{
	RunResult r;
	r.mops_mean = 0.034262;
	r.mops_stddev = 0.0004;
	r.latency_ns = 29187.164;
	EXPECT_EQ(seed_line(r), "arraymap-mmap: throughput: 0.034 +/- 0.000 M ops/s, latency: 29187.164 ns/op");
}

std::vector<Point> sample_points()
{
	std::vector<Point> pts;
	for (const char *backend : {"anon", "bpf-array"})
		for (uint64_t mib : {1, 8, 64}) {
			Point p;
			p.backend = backend;
			p.map_bytes = mib << 20;
			p.pages = p.map_bytes / 4096;
			p.pattern = "mmap";
			p.run.ok = true;
			p.run.latency_ns = backend[0] == 'a' ? 4000.0 : 30000.0 * double(mib);
			pts.push_back(p);
		}
	Point skipped;
	skipped.backend = "uffd";
	skipped.pattern = "mmap";
	skipped.status = "skipped: uffd: userfaultfd: Operation not permitted, really";
	pts.push_back(skipped);
	Point model;
	model.backend = "model";
	model.is_model = true;
	model.level = "v3/arch64";
	model.pattern = "populate";
	model.model.op.faults = 16;
	pts.push_back(model);
	return pts;
}

TEST(BenchOutput, CsvHasOneRowPerPointAndFixedColumns)
{
	std::string csv = to_csv(sample_points());
	EXPECT_EQ(count(csv, "\n"), 1 + 8u);
	size_t header_commas = count(csv.substr(0, csv.find('\n')), ",");
	size_t pos = 0;
	while ((pos = csv.find('\n', pos)) != std::string::npos && pos + 1 < csv.size()) {
		size_t end = csv.find('\n', pos + 1);
		EXPECT_EQ(count(csv.substr(pos + 1, end - pos - 1), ","), header_commas);
		pos = end;
	}
	EXPECT_NE(csv.find("skipped: uffd: userfaultfd: Operation not permitted; really"), std::string::npos);
	EXPECT_NE(csv.find("model,v3/arch64,"), std::string::npos);
}

TEST(BenchOutput, JsonNamesEveryPoint)
{
	Options o;
	std::string json = to_json(sample_points(), o);
	EXPECT_EQ(count(json, "\"backend\":"), 8u);
	EXPECT_EQ(count(json, "\"latency_ns\":"), 6u);
	EXPECT_EQ(count(json, "\"counts\":"), 1u);
	EXPECT_EQ(json.back(), '\n');
}

TEST(BenchOutput, PlotHasOneLinePerBackend)
{
	std::string svg = plot_pattern(sample_points(), "mmap", 1);
	EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
	EXPECT_EQ(count(svg, "<polyline"), 2u);  // anon and bpf-array; skipped uffd and the model are not lines
	EXPECT_EQ(count(svg, "<circle"), 6u);
	EXPECT_NE(svg.find(">bpf-array<"), std::string::npos);
	EXPECT_NE(svg.find("</svg>"), std::string::npos);
	// 1 MiB .. 64 MiB spans decades 1M..100M; 4000..1.9M ns spans 1k..10M
	EXPECT_NE(svg.find(">100M<"), std::string::npos);
	EXPECT_NE(svg.find(">10M<"), std::string::npos);
}

TEST(BenchOutput, EmptyPlotSaysSo)
{
	EXPECT_NE(loglog_svg("t", "x", "y", {}).find("no data"), std::string::npos);
}

}  // namespace
}  // namespace fl::bench
