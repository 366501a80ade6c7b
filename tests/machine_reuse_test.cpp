// SPDX-License-Identifier: GPL-2.0-only
// Workspace (check/workspace.h): a run on machines restored from the arena
// gives what a run on new machines gives, every time, in every workspace
// of the thread, whatever ran before; and the arena takes back what a run
// allocated.
#include <gtest/gtest.h>

#include <random>

#include "check/program_binary.h"
#include "check/workspace.h"

namespace fl {
namespace {

std::vector<Program> random_programs(size_t n, uint32_t seed)
{
	std::mt19937 rng(seed);
	std::vector<Program> out;
	for (size_t i = 0; i < n; i++) {
		std::vector<uint8_t> bytes(8 + rng() % 120);
		for (auto &b : bytes)
			b = uint8_t(rng());
		out.push_back(decode_program(bytes.data(), bytes.size()));
	}
	return out;
}

Config at(Patch patch, Arch arch, Door door)
{
	Config c;
	c.patch = patch;
	c.arch = arch;
	c.door = door;
	return c;
}

void expect_same(const RunReport &a, const RunReport &b, const std::string &what)
{
	EXPECT_EQ(a.verdict.str(), b.verdict.str()) << what;
	EXPECT_EQ(a.verdict.detail, b.verdict.detail) << what;
	EXPECT_EQ(a.reference_verdict.str(), b.reference_verdict.str()) << what;
	EXPECT_TRUE(a.trace == b.trace) << what;
	EXPECT_TRUE(a.reference == b.reference) << what;
	EXPECT_EQ(a.expected_differences.size(), b.expected_differences.size()) << what;
}

TEST(MachineReuse, SameAsNewMachinesEveryTime)
{
	const Config cfgs[] = {at(Patch::v1, Arch::A32, Door::direct), at(Patch::v3, Arch::A64, Door::anon),
			       at(Patch::pre, Arch::A64, Door::regular)};
	size_t violations = 0;
	for (const Program &p : random_programs(150, 7)) {
		for (const Config &c : cfgs) {
			std::unique_ptr<Machine> test = make_machine(c), ref;
			if (c.patch != Patch::pre)
				ref = make_machine(reference_config(c));
			const RunReport fresh = run_differential(p, *test, ref.get());
			Workspace *ws = Workspace::of(c);
			ASSERT_NE(ws, nullptr);
			const RunReport first = ws->run(p);
			const RunReport again = ws->run(p);
			expect_same(fresh, first, c.name() + " first run");
			expect_same(first, again, c.name() + " second run");
			violations += fresh.verdict.kind != Verdict::ok;
		}
	}
	EXPECT_GT(violations, 0u) << "no violation among the Programs: the comparison has no teeth";
}

TEST(MachineReuse, ArenaTakesBackARun)
{
	Workspace *ws = Workspace::of(at(Patch::v2, Arch::A64, Door::anon));
	ASSERT_NE(ws, nullptr);
	const std::vector<Program> ps = random_programs(20, 3);
	arena::Arena &a = arena::thread_arena();
	ws->run(ps[0]);
	const size_t used = a.used();
	for (const Program &p : ps)
		ws->run(p);
	ws->run(ps[0]);
	EXPECT_EQ(a.used(), used) << "the same Program after others uses the same arena bytes";
}

}  // namespace
}  // namespace fl
