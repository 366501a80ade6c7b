// SPDX-License-Identifier: GPL-2.0-only
// The text form of a Trace: round trip, console noise, malformed input.
#include <gtest/gtest.h>

#include <random>

#include "check/trace_text.h"

namespace fl {
namespace {

Trace sample()
{
	Trace t;
	t.map_ret = -22;
	t.events.push_back({0, 0, {}, ""});
	t.events.push_back({0, 0, {0x01, 0x00, 0xff, 0x7f}, ""});
	t.events.push_back({0, 7, {}, ""});
	t.events.push_back({-13, 0, {}, ""});
	t.events.push_back({0, 0, {}, "VmFlags: rd wr sh | Rss: 2p"});
	t.events.push_back({2, 0, {}, "100% odd\n\r\x01\x7f\xc3\xa9 trailing "});
	return t;
}

TEST(TraceText, RoundTrips)
{
	Trace t = sample();
	std::string err;
	auto back = read_trace(write_trace(t), &err);
	ASSERT_TRUE(back) << err;
	EXPECT_EQ(*back, t);
	EXPECT_EQ(write_trace(*back), write_trace(t));
}

TEST(TraceText, RandomTracesRoundTrip)
{
	std::mt19937_64 rng(7);  // fixed seed: deterministic
	for (int n = 0; n < 200; n++) {
		Trace t;
		t.map_ret = -int64_t(rng() % 200);
		for (int i = int(rng() % 30); i > 0; i--) {
			Event e;
			e.ret = int64_t(rng()) >> (rng() % 64);
			e.sig = int(rng() % 12);
			for (int k = int(rng() % 20); k > 0; k--)
				e.data.push_back(uint8_t(rng()));
			for (int k = int(rng() % 20); k > 0; k--)
				e.info += char(rng());
			t.events.push_back(e);
		}
		auto back = read_trace(write_trace(t), nullptr);
		ASSERT_TRUE(back);
		EXPECT_EQ(*back, t);
	}
}

TEST(TraceText, ConsoleNoiseAndCarriageReturns)
{
	std::string text = "[    1.234] random: crng init done\r\n";
	for (char c : write_trace(sample())) {
		if (c == '\n')
			text += '\r';
		text += c;
	}
	text += "[    2.000] reboot: Power down\n";
	auto back = read_trace(text, nullptr);
	ASSERT_TRUE(back);
	EXPECT_EQ(*back, sample());
}

TEST(TraceText, MalformedInputSaysWhere)
{
	std::string err;
	EXPECT_FALSE(read_trace("", &err));
	EXPECT_EQ(err, "line 0: no 'trace' line");
	EXPECT_FALSE(read_trace("trace map_ret=0 events=1\nend\n", &err));
	EXPECT_EQ(err, "line 2: trace has 0 events, header says 1");
	EXPECT_FALSE(read_trace("trace map_ret=0 events=1\nev 2 ret=0 sig=0 data=- info=\nend\n", &err));
	EXPECT_EQ(err, "line 2: expected event number 1");
	EXPECT_FALSE(read_trace("trace map_ret=0 events=1\nev 1 ret=0 sig=0 data=abc info=\nend\n", &err));
	EXPECT_EQ(err, "line 2: bad value in event");
	EXPECT_FALSE(read_trace("trace map_ret=0 events=1\nev 1 ret=0 sig=0 data=- info=%4\nend\n", &err));
	EXPECT_EQ(err, "line 2: bad value in event");
	EXPECT_FALSE(read_trace("trace map_ret=x events=0\nend\n", &err));
	EXPECT_EQ(err, "line 1: bad number in trace header");
	EXPECT_FALSE(read_trace("trace map_ret=0 events=0\n", &err));
	EXPECT_EQ(err, "line 1: missing 'end'");
}

}  // namespace
}  // namespace fl
