// SPDX-License-Identifier: GPL-2.0-only
// The contents invariant (check/contents.h): the shadow follows updates,
// stores and kernel writes, and flags a lookup or load that returns bytes
// other than the last ones written there, at every patch level.
#include "check/contents.h"

#include <gtest/gtest.h>

#include "check/differential.h"
#include "check/program_text.h"

namespace fl {
namespace {

Program parse(const std::string &text)
{
	ParseResult r = parse_program(text);
	EXPECT_TRUE(r.program) << r.error.str();
	return r.program ? *r.program : Program{};
}

Config at(Patch patch)
{
	Config c;
	c.patch = patch;
	return c;
}

// Stores through two mappings, an update, lookups and loads that read them
// back: every level agrees with the shadow (value_size 12: elements are 16
// bytes apart, so an update that used the value size as its stride would show).
TEST(Contents, HoldsOnEveryLevel)
{
	Program p = parse("map value_size=12 max_entries=512\n"
			  "mmap A len=2p prot=rw\n"
			  "mmap B len=1p pgoff=1 prot=rw\n"
			  "update idx=1 val=0x1122334455667788\n"
			  "store A+0x20 size=8 val=0xabcdef\n"
			  "store B+0x10 size=4 val=0x77\n"
			  "lookup idx=0\nlookup idx=1\nlookup idx=2\n"
			  "load A+8 size=8\nload A+16 size=8\nload A+0x1010 size=4\n"
			  "fork\nload A+0x20 size=8 proc=1\n");
	for (Patch patch : kPatches) {
		RunReport r = run_differential(p, at(patch));
		EXPECT_EQ(r.verdict.kind, Verdict::ok) << to_string(patch) << ": " << r.verdict.str() << " "
						       << r.verdict.detail;
	}
}

// The shadow itself, fed events a faulty kernel would produce.
TEST(Contents, FlagsALookupThatMissesTheUpdate)
{
	auto m = make_machine(at(Patch::pre));
	MapSpec spec;
	spec.value_size = 12;
	ContentsShadow s(spec, 0, 12);
	Op update;
	update.kind = OpKind::update;
	update.index = 1;
	update.value = 0x42;
	EXPECT_EQ(s.observe(*m, update, 0, Event{}), "");
	Op lookup;
	lookup.kind = OpKind::lookup;
	lookup.index = 1;
	Event good;
	good.data = {0x42, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	EXPECT_EQ(s.observe(*m, lookup, 0, good), "");
	Event stale = good;
	stale.data[0] = 0;  // the update landed elsewhere
	EXPECT_NE(s.observe(*m, lookup, 0, stale), "");
	// A failed lookup compares nothing.
	Event failed;
	failed.ret = -2;
	EXPECT_EQ(s.observe(*m, lookup, 0, failed), "");
	EXPECT_EQ(s.bytes_checked(), 13u);  // 12 of the good lookup, then up to the stale byte
}

// After MADV_DONTNEED on pre a store SIGBUSes while the lazy one lands; the
// differential names that and resynchronises pre through a kernel write,
// which the shadow sees too: a later lookup agrees on both sides.
TEST(Contents, FollowsTheDontneedResync)
{
	Program p = parse("map value_size=8 max_entries=1024\n"
			  "mmap A len=1p prot=rw\n"
			  "madvise A len=1p advice=dontneed\n"
			  "store A+8 size=8 val=0x99\n"
			  "lookup idx=1\n");
	for (Patch patch : {Patch::v1, Patch::v2, Patch::v3}) {
		RunReport r = run_differential(p, at(patch));
		EXPECT_EQ(r.verdict.kind, Verdict::ok) << r.verdict.str() << " " << r.verdict.detail;
		EXPECT_EQ(r.reference_verdict.kind, Verdict::ok) << r.reference_verdict.detail;
		ASSERT_FALSE(r.expected_differences.empty());
		EXPECT_EQ(r.expected_differences[0].what, Difference::dontneed_refault);
	}
}

}  // namespace
}  // namespace fl
