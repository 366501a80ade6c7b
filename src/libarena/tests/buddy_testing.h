// SPDX-License-Identifier: GPL-2.0-only
// What several allocator tests share: the Programs of corpora/buddy, and
// two verdicts compared field by field.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "libarena/buddy_runner.h"

namespace fl::libarena {

// Every text Program of corpora/buddy that parses, with its path.
inline std::vector<std::pair<std::string, BuddyProgram>> buddy_corpus_programs()
{
	std::vector<std::pair<std::string, BuddyProgram>> out;
	for (const auto &entry :
	     std::filesystem::recursive_directory_iterator(std::filesystem::path(FL_SOURCE_DIR) / "corpora/buddy")) {
		if (entry.path().extension() != ".bl")
			continue;
		std::ifstream in(entry.path());
		std::stringstream text;
		text << in.rdbuf();
		if (auto p = parse_buddy_program(text.str(), nullptr))
			out.emplace_back(entry.path().string(), std::move(*p));
	}
	return out;
}

// Two runs of one Program gave the same verdict (`name` says which).
inline void expect_same_verdict(const BuddyVerdict &a, const BuddyVerdict &b, const std::string &name)
{
	EXPECT_EQ(a.ok, b.ok) << name;
	EXPECT_EQ(a.op, b.op) << name;
	EXPECT_EQ(a.what, b.what) << name;
	EXPECT_EQ(a.trace, b.trace) << name;
	EXPECT_EQ(a.results, b.results) << name;
	EXPECT_EQ(a.spans, b.spans) << name;
	EXPECT_EQ(a.between, b.between) << name;
	EXPECT_EQ(a.records, b.records) << name;
	EXPECT_EQ(a.trace_hash, b.trace_hash) << name;
	EXPECT_EQ(a.linearize_note, b.linearize_note) << name;
}

}  // namespace fl::libarena
