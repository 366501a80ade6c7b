// SPDX-License-Identifier: GPL-2.0-only
#include "check/trace_text.h"

#include <charconv>
#include <cstdio>
#include <vector>

namespace fl {

namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string escape_info(const std::string &s)
{
	std::string out;
	for (unsigned char c : s) {
		if (c == '%' || c < 0x20 || c >= 0x7f) {
			out += '%';
			out += kHex[c >> 4];
			out += kHex[c & 15];
		} else {
			out += char(c);
		}
	}
	return out;
}

int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

std::optional<std::string> unescape_info(std::string_view s)
{
	std::string out;
	for (size_t i = 0; i < s.size(); i++) {
		if (s[i] != '%') {
			out += s[i];
			continue;
		}
		if (i + 2 >= s.size())
			return std::nullopt;
		int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
		if (hi < 0 || lo < 0)
			return std::nullopt;
		out += char(hi << 4 | lo);
		i += 2;
	}
	return out;
}

std::optional<std::vector<uint8_t>> parse_hex(std::string_view s)
{
	std::vector<uint8_t> out;
	if (s == "-")
		return out;
	if (s.empty() || s.size() % 2)
		return std::nullopt;
	for (size_t i = 0; i < s.size(); i += 2) {
		int hi = hex_digit(s[i]), lo = hex_digit(s[i + 1]);
		if (hi < 0 || lo < 0)
			return std::nullopt;
		out.push_back(uint8_t(hi << 4 | lo));
	}
	return out;
}

// "key=VALUE" at the front of `line`, VALUE up to the next space; advances.
std::optional<std::string_view> take_field(std::string_view *line, std::string_view key)
{
	if (line->substr(0, key.size()) != key || line->size() <= key.size() || (*line)[key.size()] != '=')
		return std::nullopt;
	line->remove_prefix(key.size() + 1);
	size_t sp = line->find(' ');
	std::string_view v = line->substr(0, sp);
	line->remove_prefix(sp == std::string_view::npos ? line->size() : sp + 1);
	return v;
}

template <class T>
std::optional<T> parse_int(std::string_view s)
{
	T v{};
	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || end != s.data() + s.size())
		return std::nullopt;
	return v;
}

}  // namespace

std::string write_trace(const Trace &t)
{
	std::string s = "trace map_ret=" + std::to_string(t.map_ret) + " events=" + std::to_string(t.events.size()) + "\n";
	for (size_t i = 0; i < t.events.size(); i++) {
		const Event &e = t.events[i];
		s += "ev " + std::to_string(i + 1) + " ret=" + std::to_string(e.ret) + " sig=" + std::to_string(e.sig) + " data=";
		if (e.data.empty())
			s += '-';
		for (uint8_t b : e.data) {
			s += kHex[b >> 4];
			s += kHex[b & 15];
		}
		s += " info=" + escape_info(e.info) + "\n";
	}
	s += "end\n";
	return s;
}

std::optional<Trace> read_trace(std::string_view text, std::string *err)
{
	Trace t;
	size_t expected = 0;
	bool in_trace = false;
	int lineno = 0;
	auto fail = [&](const std::string &what) -> std::optional<Trace> {
		if (err)
			*err = "line " + std::to_string(lineno) + ": " + what;
		return std::nullopt;
	};
	while (!text.empty()) {
		size_t nl = text.find('\n');
		std::string_view line = text.substr(0, nl);
		text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
		lineno++;
		if (!line.empty() && line.back() == '\r')
			line.remove_suffix(1);
		if (!in_trace) {
			if (line.substr(0, 6) != "trace ")
				continue;
			line.remove_prefix(6);
			auto ret = take_field(&line, "map_ret");
			auto n = take_field(&line, "events");
			if (!ret || !n || !line.empty())
				return fail("expected 'trace map_ret=N events=N'");
			auto r = parse_int<int64_t>(*ret);
			auto c = parse_int<size_t>(*n);
			if (!r || !c)
				return fail("bad number in trace header");
			t.map_ret = *r;
			expected = *c;
			in_trace = true;
			continue;
		}
		if (line == "end") {
			if (t.events.size() != expected)
				return fail("trace has " + std::to_string(t.events.size()) + " events, header says " +
					    std::to_string(expected));
			return t;
		}
		if (line.substr(0, 3) != "ev ")
			return fail("expected 'ev' or 'end'");
		line.remove_prefix(3);
		size_t sp = line.find(' ');
		auto index = parse_int<size_t>(line.substr(0, sp));
		if (!index || *index != t.events.size() + 1 || sp == std::string_view::npos)
			return fail("expected event number " + std::to_string(t.events.size() + 1));
		line.remove_prefix(sp + 1);
		Event e;
		auto ret = take_field(&line, "ret");
		auto sig = take_field(&line, "sig");
		auto data = take_field(&line, "data");
		if (!ret || !sig || !data || line.substr(0, 5) != "info=")
			return fail("expected 'ret=N sig=N data=HEX info=TEXT'");
		auto r = parse_int<int64_t>(*ret);
		auto g = parse_int<int>(*sig);
		auto d = parse_hex(*data);
		auto info = unescape_info(line.substr(5));
		if (!r || !g || !d || !info)
			return fail("bad value in event");
		e.ret = *r;
		e.sig = *g;
		e.data = std::move(*d);
		e.info = std::move(*info);
		t.events.push_back(std::move(e));
	}
	return fail(in_trace ? "missing 'end'" : "no 'trace' line");
}

}  // namespace fl
