// SPDX-License-Identifier: GPL-2.0-only
// The RapidCheck stateful model of libarena's buddy allocator: commands are
// allocator ops (alloc, bulk, free of live / stale / interior / unaligned /
// NULL objects, free with an NMI at lock_held, free_bulk with NULLs and
// duplicates, NMI free and alloc, user stores, destroy+init); the model is
// the shadow of src/libarena/buddy_invariants.h (live objects, the deferred
// list), kept by the session, which predicts every return value and checks
// I1-I12 after every command and at every named point. Quiet on `before`,
// `nmi_deferred` and `series` (whose commands also name a CPU, NMIs at the
// series' named points, and drains); on the historical `ret_overwrite` and
// `guard_leak` levels it must find the double free reported as success and
// the guard left set after a cached free, from scratch, and shrink them.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <chrono>
#include <cstdio>

#include "libarena/buddy_runner.h"

namespace fl::libarena {
namespace {

struct Model {
	size_t ops = 0;  // the shadow lives in the session; the model only counts
};

struct Sut {
	explicit Sut(buddy_level l) : session(l) {}
	BuddySession session;
};

rc::Gen<Target> gen_target()
{
	return rc::gen::apply(
		[](int kind, u32 n) {
			static constexpr Target::Kind kinds[] = {Target::live,	Target::live,	   Target::live,
								 Target::stale, Target::stale,	   Target::interior,
								 Target::unaligned, Target::null};
			return Target{kinds[kind], n};
		},
		rc::gen::inRange(0, 8), rc::gen::inRange<u32>(0, 16));
}

rc::Gen<u64> gen_size()
{
	return rc::gen::weightedOneOf<u64>({{6, rc::gen::inRange<u64>(1, 300)},
					    {1, rc::gen::inRange<u64>(300, 70000)},
					    {1, rc::gen::element<u64>(0, 512u << 10, (512u << 10) + 1)}});
}

// The level the commands are generated for: the series levels add CPUs, NMIs at named points and drains.
thread_local buddy_level g_level = buddy_level::before;

struct Step : rc::state::Command<Model, Sut> {
	BuddyOp op;
	explicit Step(const Model &)
	{
		const bool series = has_caches(g_level);
		const int kind = *rc::gen::weightedElement<int>(
			{{5, BuddyOp::alloc}, {1, BuddyOp::bulk}, {4, BuddyOp::free}, {1, BuddyOp::free_bulk},
			 {1, BuddyOp::nmi_free}, {1, BuddyOp::nmi_alloc}, {1, BuddyOp::store}, {1, BuddyOp::reinit},
			 {series ? 1u : 0u, BuddyOp::drain}});
		op.kind = BuddyOp::Kind(kind);
		if (series) {
			op.cpu = u8(*rc::gen::inRange(0, 2));
			if ((op.kind == BuddyOp::nmi_free || op.kind == BuddyOp::nmi_alloc) && *rc::gen::inRange(0, 2))
				op.at = kBuddyNmiPoints[*rc::gen::inRange<size_t>(0, kBuddyNmiPointCount)];
		}
		switch (op.kind) {
		case BuddyOp::alloc:
		case BuddyOp::nmi_alloc:
			op.size = *gen_size();
			break;
		case BuddyOp::bulk:
			op.size = *gen_size();
			op.norder = *rc::gen::inRange<u64>(0, 6);
			break;
		case BuddyOp::free:
			op.target = *gen_target();
			op.has_nmi = *rc::gen::inRange(0, 4) == 0;
			if (op.has_nmi)
				op.nmi_target = *gen_target();
			break;
		case BuddyOp::nmi_free:
			op.target = *gen_target();
			break;
		case BuddyOp::free_bulk:
			op.targets = *rc::gen::container<std::vector<Target>>(*rc::gen::inRange<size_t>(0, 5), gen_target());
			break;
		case BuddyOp::store:
			op.target = Target{Target::live, *rc::gen::inRange<u32>(0, 16)};
			op.value = *rc::gen::arbitrary<u64>();
			break;
		case BuddyOp::reinit:
		case BuddyOp::drain:
		case BuddyOp::nmi:  // not generated (yet): handler blocks
			break;
		}
	}
	void apply(Model &m) const override { m.ops++; }
	void run(const Model &, Sut &s) const override
	{
		if (!s.session.step(op)) {
			const BuddyVerdict &v = s.session.verdict();
			std::string trace;
			for (const std::string &line : v.trace)
				trace += line + "\n";
			RC_FAIL(v.what + "\n" + trace);
		}
	}
	void show(std::ostream &os) const override
	{
		BuddyProgram p;
		p.ops = {op};
		std::string t = format_buddy_program(p);
		os << t.substr(t.find('\n') + 1);
	}
};

bool check_level(buddy_level level)
{
	return rc::check(std::string("buddy stateful model at ") + to_string(level), [level] {
		g_level = level;
		Model m;
		Sut s(level);
		rc::state::check(m, s, rc::state::gen::execOneOfWithArgs<Step>());
	});
}

}  // namespace

TEST(BuddyModel, BeforeKeepsEveryInvariant) { EXPECT_TRUE(check_level(buddy_level::before)); }
TEST(BuddyModel, NmiDeferredKeepsEveryInvariant) { EXPECT_TRUE(check_level(buddy_level::nmi_deferred)); }

TEST(BuddyModel, SeriesKeepsEveryInvariant) { EXPECT_TRUE(check_level(buddy_level::series)); }

// The historical levels: found (and shrunk) from scratch, with the time it took.
void expect_found(buddy_level level)
{
	auto t0 = std::chrono::steady_clock::now();
	EXPECT_FALSE(check_level(level));
	std::printf("%s found in %.2f s\n", to_string(level),
		    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

TEST(BuddyModel, FindsRetOverwriteDoubleFree) { expect_found(buddy_level::ret_overwrite); }
TEST(BuddyModel, FindsGuardLeftSet) { expect_found(buddy_level::guard_leak); }

}  // namespace fl::libarena
