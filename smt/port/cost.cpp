// SPDX-License-Identifier: GPL-2.0-only
#include "smt/port/cost.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <vector>

namespace fl::sym {

namespace {

struct Group {
	double s[size_t(Cost::kinds)] = {};
	unsigned n[size_t(Cost::kinds)] = {};
	std::map<std::string, double> streams;  // exploring, by stream
	double total() const
	{
		double t = 0;
		for (auto &[name, secs] : streams)
			t += secs;
		return t + s[size_t(Cost::disjunct)] + s[size_t(Cost::replay)];
	}
};

thread_local Cost g_kind = Cost::branch;
thread_local std::string g_label = "(other)";
std::mutex g_mu;
std::map<std::string, Group> g_groups;
std::atomic<unsigned> g_guarded{0};

double since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CostScope::CostScope(Cost c) : prev(g_kind) { g_kind = c; }
CostScope::~CostScope() { g_kind = prev; }
CostLabel::CostLabel(std::string group) : prev(std::move(g_label)) { g_label = std::move(group); }
CostLabel::~CostLabel() { g_label = std::move(prev); }

ExploreTimer::~ExploreTimer()
{
	double secs = since(t0);
	std::lock_guard lock(g_mu);
	Group &g = g_groups[g_label];
	g.streams[name] += secs;
}

z3::check_result timed_check(z3::solver &s)
{
	auto t0 = std::chrono::steady_clock::now();
	z3::check_result r = s.check();
	double secs = since(t0);
	std::lock_guard lock(g_mu);
	Group &g = g_groups[g_label];
	g.s[size_t(g_kind)] += secs;
	g.n[size_t(g_kind)]++;
	return r;
}

void count_guarded_try() { g_guarded++; }
unsigned guarded_tries() { return g_guarded; }

void print_costs(std::FILE *out)
{
	std::lock_guard lock(g_mu);
	std::vector<std::pair<std::string, Group>> rows(g_groups.begin(), g_groups.end());
	std::stable_sort(rows.begin(), rows.end(), [](auto &a, auto &b) { return a.second.total() > b.second.total(); });
	Group all;
	std::fprintf(out, "\nwhere the time went (seconds over every thread; exploring includes its branch and fresh checks):\n"
			  "%-24s %7s %7s %14s %12s %14s %13s  %s\n",
		     "group", "total", "explore", "branch (n)", "fresh (n)", "disjunct (n)", "replay (n)",
		     "exploring, by stream");
	auto line = [&](const std::string &name, const Group &g) {
		double explore = 0;
		std::string streams;
		char buf[64];
		for (auto &[stream, secs] : g.streams) {
			explore += secs;
			std::snprintf(buf, sizeof buf, " %s %.2f", stream.c_str(), secs);
			streams += buf;
		}
		std::fprintf(out, "%-24s %7.2f %7.2f %7.2f (%4u) %6.2f (%3u) %7.2f (%4u) %6.2f (%4u) %s\n", name.c_str(),
			     g.total(), explore, g.s[0], g.n[0], g.s[1], g.n[1], g.s[2], g.n[2], g.s[3], g.n[3],
			     streams.c_str());
	};
	for (auto &[name, g] : rows) {
		line(name, g);
		for (size_t k = 0; k < size_t(Cost::kinds); k++) {
			all.s[k] += g.s[k];
			all.n[k] += g.n[k];
		}
		for (auto &[stream, secs] : g.streams)
			all.streams[stream] += secs;
	}
	line("all", all);
}

}  // namespace fl::sym
