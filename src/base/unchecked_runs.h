// SPDX-License-Identifier: GPL-2.0-only
// How many of an explorer's schedules the linearizability check left
// unchecked, and why (each run's note, without its details in parentheses),
// so that a quiet report says what it did not look at. Shared by the
// array-map and the allocator explorers and their swarms.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace fl {

struct UncheckedRuns {
	uint64_t total = 0;
	std::map<std::string, uint64_t> by_reason;

	// A run's note ("linearizability not checked: REASON (DETAILS)"), or
	// "" for a run that was checked.
	void add(const std::string &note)
	{
		if (note.empty())
			return;
		static const std::string prefix = "linearizability not checked: ";
		std::string reason = note.substr(0, note.find(" ("));
		if (reason.rfind(prefix, 0) == 0)
			reason.erase(0, prefix.size());
		total++;
		by_reason[reason]++;
	}

	void add(const UncheckedRuns &other)
	{
		total += other.total;
		for (const auto &[reason, n] : other.by_reason)
			by_reason[reason] += n;
	}

	// The report's line, "  linearizability not checked on N schedules:
	// REASON (n); ...\n", or "" when every run was checked.
	std::string line() const
	{
		if (!total)
			return {};
		std::string s = "  linearizability not checked on " + std::to_string(total) + " schedules: ";
		for (auto it = by_reason.begin(); it != by_reason.end(); ++it)
			s += (it == by_reason.begin() ? "" : "; ") + it->first + " (" + std::to_string(it->second) + ")";
		return s + "\n";
	}
};

}  // namespace fl
