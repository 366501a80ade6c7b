// SPDX-License-Identifier: GPL-2.0-only
// A JSON string literal, for the few machine-readable outputs written by hand
// (faultline-cli summary --json, faultline-bench's matrix.json).
#pragma once

#include <cstdio>
#include <string>

namespace fl {

inline std::string json_string(const std::string &s)
{
	std::string out = "\"";
	for (char ch : s) {
		if (ch == '"' || ch == '\\')
			out += '\\';
		if (static_cast<unsigned char>(ch) < 0x20) {
			char buf[8];
			std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(ch));
			out += buf;
			continue;
		}
		out += ch;
	}
	return out + "\"";
}

}  // namespace fl
