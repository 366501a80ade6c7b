// SPDX-License-Identifier: GPL-2.0-only
#include "base/sched/record.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace fl::sched {

namespace {

// "<prefix><decimal>" below `limit`.
bool numbered(const std::string &w, char prefix, int limit, int *out)
{
	if (w.size() < 2 || w[0] != prefix || w[1] < '0' || w[1] > '9')
		return false;
	char *end = nullptr;
	errno = 0;
	const unsigned long v = std::strtoul(w.c_str() + 1, &end, 10);
	if (errno || *end || v >= unsigned(limit))
		return false;
	*out = int(v);
	return true;
}

}  // namespace

std::string format_record(const Record &r)
{
	std::string s = "at T" + std::to_string(r.task) + " " + r.label + "#" + std::to_string(r.occurrence);
	switch (r.action) {
	case Action::switch_to: return s + " switch T" + std::to_string(r.target);
	case Action::fail: return s + " fail";
	case Action::nmi: return s + " nmi N" + std::to_string(r.target);
	}
	return s;
}

bool parse_record(const std::string *w, size_t n, int max_tasks, int max_handlers, Record *out, std::string *error,
		  size_t *bad_word)
{
	static const char *const kExpected = "expected 'TASK LABEL#N switch TASK', 'TASK LABEL#N fail' or "
					     "'TASK LABEL#N nmi HANDLER' after 'at'";
	auto bad = [&](size_t word, std::string msg) {
		*error = std::move(msg);
		if (bad_word)
			*bad_word = std::min(word, n ? n - 1 : 0);
		return false;
	};
	Record r;
	if (n < 3 || !numbered(w[0], 'T', max_tasks, &r.task))
		return bad(0, n >= 1 && w[0].size() >= 2 && w[0][0] == 'T'
				      ? "task " + w[0] + " must be below T" + std::to_string(max_tasks)
				      : std::string(kExpected));
	const size_t hash = w[1].rfind('#');
	char *end = nullptr;
	errno = 0;
	const unsigned long long occ =
		hash == std::string::npos || hash == 0 ? 0 : std::strtoull(w[1].c_str() + hash + 1, &end, 10);
	if (!occ || errno || *end || occ > UINT32_MAX)
		return bad(1, "expected LABEL#N (N from 1), got '" + w[1] + "'");
	r.label = w[1].substr(0, hash);
	r.occurrence = uint32_t(occ);
	if (w[2] == "switch" && n == 4 && numbered(w[3], 'T', max_tasks, &r.target))
		r.action = Action::switch_to;
	else if (w[2] == "fail" && n == 3)
		r.action = Action::fail;
	else if (w[2] == "nmi" && n == 4 && numbered(w[3], 'N', max_handlers, &r.target))
		r.action = Action::nmi;
	else
		return bad(n == 4 && (w[2] == "switch" || w[2] == "nmi") ? 3 : 2, kExpected);
	*out = r;
	return true;
}

}  // namespace fl::sched
