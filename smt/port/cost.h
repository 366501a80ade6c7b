// SPDX-License-Identifier: GPL-2.0-only
// Where faultline-prove's time goes (--profile): every Z3 check counts to
// the kind of question its thread is asking (CostScope) and to the group of
// rows the thread is running (CostLabel), and each explored path's time
// (its checks included) to its stream. Measurement only: no verdict reads it.
#pragma once

#include <z3++.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace fl::sym {

enum class Cost { branch, fresh, disjunct, replay, kinds };

struct CostScope {  // this thread's checks are of kind c until the scope ends
	explicit CostScope(Cost c);
	~CostScope();
	Cost prev;
};

struct CostLabel {  // this thread's checks and paths count to `group` until the scope ends
	explicit CostLabel(std::string group);
	~CostLabel();
	std::string prev;
};

struct ExploreTimer {  // one path of the stream `name`, its checks included
	explicit ExploreTimer(std::string name) : name(std::move(name)) {}
	~ExploreTimer();
	std::string name;
	std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
};

z3::check_result timed_check(z3::solver &s);  // s.check(), counted
void count_guarded_try();  // a try of Z3's newer core, whose answer may depend on the wall clock
unsigned guarded_tries();
void print_costs(std::FILE *out);             // by group, the costly first

}  // namespace fl::sym
