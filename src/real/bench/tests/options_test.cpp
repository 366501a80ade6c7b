// SPDX-License-Identifier: GPL-2.0-only
// faultline-bench's options: the sizes the seed's strtoull(arg, NULL, 0)
// misread are rejected, good ones parse in full.
#include <gtest/gtest.h>

#include "real/bench/options.h"

namespace fl::bench {
namespace {

std::optional<Options> parse(std::vector<std::string> args, std::string *err)
{
	std::vector<char *> argv{const_cast<char *>("faultline-bench")};
	for (auto &a : args)
		argv.push_back(a.data());
	return parse_options(int(argv.size()), argv.data(), err);
}

TEST(BenchOptions, SizesParseInFull)
{
	EXPECT_EQ(parse_size("8388608"), 8388608u);
	EXPECT_EQ(parse_size("0x800000"), 8388608u);
	EXPECT_EQ(parse_size("8M"), 8388608u);
	EXPECT_EQ(parse_size("8MiB"), 8388608u);
	EXPECT_EQ(parse_size("64K"), 65536u);
	EXPECT_EQ(parse_size("1G"), 1ull << 30);
	for (const char *bad : {"", "0", "0x0", "8Q", "abc", "-1", " 1", "1e6", "99999999999999999999",
				"17179869184G", "8 M"})
		EXPECT_FALSE(parse_size(bad)) << bad;
}

TEST(BenchOptions, SeedGeometry)
{
	Geometry g;
	g.map_bytes = 1 << 20;
	EXPECT_EQ(g.max_entries(), 131072u);
	EXPECT_EQ(g.mmap_bytes(), 1u << 20);
	g.map_bytes = 4097;  // 513 entries: 4104 bytes, two pages
	EXPECT_EQ(g.max_entries(), 513u);
	EXPECT_EQ(g.pages(), 2u);
}

TEST(BenchOptions, BadOptionsSayWhy)
{
	struct Case {
		std::vector<std::string> args;
		const char *message;
	} cases[] = {
		{{"--map-size", "0"}, "bad value '0' for --map-size"},
		{{"--map-size", "8X"}, "bad value '8X' for --map-size"},
		{{"--map-size", "-1"}, "bad value '-1' for --map-size"},
		{{"--map-size", "1024G"}, "beyond this machine's memory"},
		{{"--backend", "tmpfs"}, "unknown backend 'tmpfs'"},
		{{"-p", "0"}, "need a thread count from 1"},
		{{"--producers=-3"}, "need a thread count from 1"},
		{{"-p", "two"}, "need a thread count from 1"},
		{{"-d", "0"}, "bad value '0' for -d"},
		{{"--touch", "some"}, "bad value 'some' for --touch"},
		{{"--map-size", "8K", "--touch", "3"}, "more than the mapping's 2 pages"},
		{{"--threads", "1,0"}, "bad value '1,0' for --threads"},
		{{"--backends", "anon,nope"}, "unknown backend in 'anon,nope'"},
		{{"--map-size"}, "--map-size needs a value"},
		{{"--nr-threads", "4"}, "unknown option --nr-threads"},
		{{"other-bench"}, "unexpected argument 'other-bench'"},
	};
	for (const Case &c : cases) {
		std::string err;
		EXPECT_FALSE(parse(c.args, &err)) << c.args[0];
		EXPECT_NE(err.find(c.message), std::string::npos) << err;
	}
}

TEST(BenchOptions, SeedCommandLineParses)
{
	std::string err;
	auto o = parse({"-p", "4", "--map-size", "67108864", "arraymap-mmap", "--touch", "all", "--populate",
			"--backend=uffd", "--patch", "v3", "--arch", "32"},
		       &err);
	ASSERT_TRUE(o) << err;
	EXPECT_EQ(o->timing.producers, 4);
	EXPECT_EQ(o->geometry.map_bytes, 64u << 20);
	EXPECT_EQ(o->pattern().touch_pages, o->geometry.pages());
	EXPECT_TRUE(o->pattern().populate);
	EXPECT_EQ(o->backend, "uffd");
	EXPECT_EQ(o->level.patch, Patch::v3);
	EXPECT_EQ(o->level.arch, Arch::A32);
}

}  // namespace
}  // namespace fl::bench
