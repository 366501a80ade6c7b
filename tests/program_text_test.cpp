// SPDX-License-Identifier: GPL-2.0-only
// The text form: round trips, the meaning of each argument, and the exact
// position of every class of parse error.

// (historical) machine.h once named uapi::SIGBUS/SIGSEGV, which <signal.h>
// (pulled in by gtest) defines as macros.
#include "check/program_text.h"

#include <gtest/gtest.h>

#include "program_printers.h"

#include <ostream>
#include <string>

namespace fl {

namespace {

// Program has no operator== (Expectation's ignores its filter), so compare
// every field here.
void expect_same_filter(const ConfigFilter &a, const ConfigFilter &b)
{
	EXPECT_EQ(a.arches, b.arches);
	EXPECT_EQ(a.patches, b.patches);
	EXPECT_EQ(a.page_shifts, b.page_shifts);
	EXPECT_EQ(a.doors, b.doors);
	EXPECT_EQ(a.spec_v1, b.spec_v1);
}

void expect_same(const Program &a, const Program &b)
{
	EXPECT_EQ(a.header, b.header);
	EXPECT_EQ(a.map, b.map);
	EXPECT_EQ(a.labels, b.labels);
	ASSERT_EQ(a.ops.size(), b.ops.size());
	for (size_t i = 0; i < a.ops.size(); i++)
		EXPECT_EQ(a.ops[i], b.ops[i]) << "op " << i << ": " << format_op(a, a.ops[i]) << " vs "
					      << format_op(b, b.ops[i]);
	ASSERT_EQ(a.expects.size(), b.expects.size());
	for (size_t i = 0; i < a.expects.size(); i++) {
		EXPECT_EQ(a.expects[i], b.expects[i]);
		expect_same_filter(a.expects[i].when, b.expects[i].when);
	}
}

Program parse_ok(const std::string &text)
{
	ParseResult r = parse_program(text);
	EXPECT_TRUE(r.program.has_value()) << r.error.str() << "\n" << text;
	return r.program ? *r.program : Program{};
}

// parse(format(p)) == p and the canonical text is a fixed point.
void round_trip(const Program &p)
{
	const std::string text = format_program(p);
	ParseResult r = parse_program(text);
	ASSERT_TRUE(r.program.has_value()) << r.error.str() << "\n" << text;
	expect_same(p, *r.program);
	EXPECT_EQ(text, format_program(*r.program));
}

const char kEveryOp[] = R"(# every header line, every op kind
arch 32
patch v2
page 16k
door regular
spec_v1 bypass
map value_size=12 max_entries=0x1001 key_size=4 flags=mmapable,rdonly_prog

reserve R len=64p
mmap A len=4p pgoff=1 prot=r flags=shared,populate
mmap B len=0x2000 prot=none flags=private at=R+2p proc=1
mmap C len=1 prot=rwx flags=fixed_noreplace,shared at=R-1p
munmap A+1p len=1p
mprotect A+0x3000 len=1p prot=rw
madvise A len=4p advice=dontneed
madvise B len=1p advice=dontfork proc=2
madvise B len=1p advice=dofork
mremap A len=4p new_len=2p
mremap A len=2p new_len=2p flags=maymove,fixed to=R+8p as=D
mremap D len=2p new_len=3p flags=maymove,dontunmap as=D proc=3
fork
fork proc=1
exit proc=2
load A size=1
load A+4095 size=2
load A-0 size=4
load D+0p
store A val=0x4141414141414141
store A+8 size=4 val=7 proc=1
update idx=0 val=1
update idx=0xffffffff val=2 flags=noexist
update idx=3 val=3 flags=exist
lookup idx=4096
freeze
close proc=63
smaps D+1p
arena_alloc len=1p at=A+1p as=E
arena_free E len=2p
arena_reserve A+3p len=1p
expect violation foreign_page if patch=v1 arch=32 door=regular,direct
expect difference if page=64k,4k spec_v1=mask
expect ok
)";

TEST(ProgramText, EveryOpRoundTrips)
{
	Program p = parse_ok(kEveryOp);
	ASSERT_EQ(p.ops.size(), 31u);
	bool seen[kOpKinds] = {};
	for (const Op &op : p.ops)
		seen[int(op.kind)] = true;
	for (int k = 0; k < kOpKinds; k++)
		EXPECT_TRUE(seen[k]) << to_string(OpKind(k));
	round_trip(p);
}

TEST(ProgramText, HeaderAndMap)
{
	Program p = parse_ok(kEveryOp);
	EXPECT_EQ(p.header.arch, Arch::A32);
	EXPECT_EQ(p.header.patch, Patch::v2);
	EXPECT_EQ(p.header.page_shift, 14u);
	EXPECT_EQ(p.header.door, Door::regular);
	EXPECT_EQ(p.header.bypass_spec_v1, true);
	EXPECT_EQ(p.map.value_size, 12u);
	EXPECT_EQ(p.map.max_entries, 0x1001u);
	EXPECT_EQ(p.map.key_size, 4u);
	EXPECT_EQ(p.map.map_flags, uapi::BPF_F_MMAPABLE | uapi::BPF_F_RDONLY_PROG);
	std::vector<Config> c = p.configs().expand();
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].name(), "v2/arch32/16k/regular/bypass");
}

TEST(ProgramText, OpArguments)
{
	Program p = parse_ok(kEveryOp);
	EXPECT_EQ(p.labels, (std::vector<std::string>{"R", "A", "B", "C", "D", "E"}));

	const Op &mmap = p.ops[1];
	EXPECT_EQ(mmap.kind, OpKind::mmap);
	EXPECT_EQ(mmap.label, 1);
	EXPECT_EQ(mmap.len, (Num{4, true}));
	EXPECT_EQ(mmap.pgoff, 1u);
	EXPECT_EQ(mmap.prot, uapi::PROT_READ);
	EXPECT_EQ(mmap.flags, uapi::MAP_SHARED | uapi::MAP_POPULATE);
	EXPECT_FALSE(mmap.has_at);

	const Op &fixed = p.ops[2];
	EXPECT_EQ(fixed.proc, 1);
	EXPECT_EQ(fixed.len, (Num{0x2000, false}));
	EXPECT_EQ(fixed.prot, uapi::PROT_NONE);
	EXPECT_TRUE(fixed.has_at);
	EXPECT_EQ(fixed.at, (Addr{0, Num{2, true}, false}));
	EXPECT_EQ(p.ops[3].at, (Addr{0, Num{1, true}, true}));

	const Op &move = p.ops[10];
	EXPECT_EQ(move.kind, OpKind::mremap);
	EXPECT_EQ(move.flags, uapi::MREMAP_MAYMOVE | uapi::MREMAP_FIXED);
	EXPECT_EQ(move.at, (Addr{0, Num{8, true}, false}));
	EXPECT_EQ(move.label, 4);  // D

	const Op &grow = p.ops[11];
	EXPECT_EQ(grow.addr.label, 4);
	EXPECT_EQ(grow.label, 4);

	EXPECT_EQ(p.ops[15].size, 1u);
	EXPECT_EQ(p.ops[16].addr.offset, (Num{4095, false}));
	EXPECT_EQ(p.ops[17].addr, (Addr{1, Num{}, true}));
	EXPECT_EQ(p.ops[18].size, 8u);
	EXPECT_EQ(p.ops[18].addr.offset, (Num{0, true}));
	EXPECT_EQ(p.ops[19].value, 0x4141414141414141u);
	EXPECT_EQ(p.ops[22].index, 0xffffffffu);
	EXPECT_EQ(p.ops[22].flags, int(uapi::BPF_NOEXIST));
	EXPECT_EQ(p.ops[26].proc, 63);
	EXPECT_EQ(p.ops[6].advice, uapi::MADV_DONTNEED);
	EXPECT_EQ(p.ops[7].advice, uapi::MADV_DONTFORK);
}

TEST(ProgramText, Defaults)
{
	Program p = parse_ok("mmap A len=1p\nload A\nupdate idx=1 val=2\nmremap A len=1p new_len=2p\n");
	EXPECT_EQ(p.map, MapSpec{});
	EXPECT_EQ(p.header, Header{});
	EXPECT_EQ(p.ops[0].prot, uapi::PROT_READ | uapi::PROT_WRITE);
	EXPECT_EQ(p.ops[0].flags, uapi::MAP_SHARED);
	EXPECT_EQ(p.ops[0].pgoff, 0u);
	EXPECT_EQ(p.ops[0].proc, 0);
	EXPECT_EQ(p.ops[1].size, 8u);
	EXPECT_EQ(p.ops[2].flags, int(uapi::BPF_ANY));
	EXPECT_EQ(p.ops[3].flags, 0);
	EXPECT_EQ(p.ops[3].label, -1);
	EXPECT_EQ(format_program(p), "map value_size=8 max_entries=1024 key_size=4 flags=mmapable\n"
				     "mmap A len=1p\n"
				     "load A\n"
				     "update idx=1 val=2\n"
				     "mremap A len=1p new_len=2p\n");
	round_trip(p);
}

TEST(ProgramText, Expectations)
{
	Program p = parse_ok(kEveryOp);
	ASSERT_EQ(p.expects.size(), 3u);
	const Expectation &v = p.expects[0];
	EXPECT_EQ(v.violation, Invariant::foreign_page);
	EXPECT_FALSE(v.difference);
	EXPECT_EQ(v.when.patches, std::vector<Patch>{Patch::v1});
	EXPECT_EQ(v.when.arches, std::vector<Arch>{Arch::A32});
	EXPECT_EQ(v.when.doors, (std::vector<Door>{Door::regular, Door::direct}));
	EXPECT_EQ(v.when.page_shifts.size(), 3u);
	EXPECT_EQ(v.when.spec_v1.size(), 2u);
	EXPECT_EQ(v.when.expand().size(), 2u * 3 * 2);

	const Expectation &d = p.expects[1];
	EXPECT_TRUE(d.difference);
	EXPECT_EQ(d.violation, Invariant::none);
	// Canonical order, whatever order the condition listed.
	EXPECT_EQ(d.when.page_shifts, (std::vector<unsigned>{12, 16}));
	EXPECT_EQ(d.when.spec_v1, std::vector<bool>{false});

	EXPECT_EQ(p.expects[2].violation, Invariant::none);
	EXPECT_FALSE(p.expects[2].difference);
	EXPECT_EQ(p.expects[2].when.expand().size(), 4u * 2 * 3 * 3 * 2);

	const std::string text = format_program(p);
	EXPECT_NE(text.find("expect violation foreign_page if patch=v1 arch=32 door=regular,direct\n"),
		  std::string::npos);
	EXPECT_NE(text.find("expect difference if page=4k,64k spec_v1=mask\n"), std::string::npos);
	EXPECT_NE(text.find("\nexpect ok\n"), std::string::npos);
}

TEST(ProgramText, ConditionNamingEveryValueIsAll)
{
	Program p = parse_ok("expect ok if patch=v3,v2,v1,pre,v1\n");
	EXPECT_EQ(p.expects[0].when.patches, (std::vector<Patch>{Patch::pre, Patch::v1, Patch::v2, Patch::v3}));
	EXPECT_EQ(format_program(p), "map value_size=8 max_entries=1024 key_size=4 flags=mmapable\nexpect ok\n");
}

TEST(ProgramText, CommentsAndBlankLines)
{
	Program p = parse_ok("\n\n   # only a comment\n\t\n"
			     "arch 64 # trailing comment\n"
			     "  mmap   A\tlen=2p   # indented, tabs\r\n"
			     "#load A\n"
			     "load A+1p#no space before the comment\n");
	EXPECT_EQ(p.header.arch, Arch::A64);
	ASSERT_EQ(p.ops.size(), 2u);
	EXPECT_EQ(p.ops[1].addr.offset, (Num{1, true}));
	EXPECT_FALSE(parse_program("").program->ops.size());
}

TEST(ProgramText, Numbers)
{
	Program q = parse_ok("mmap A len=0x10p pgoff=0xFFFFFFFFFFFFFFFF\n"
			     "munmap A+0x1000 len=18446744073709551615\n"
			     "mremap A len=4096 new_len=4095p\n"
			     "store A val=18446744073709551615\n"
			     "lookup idx=4294967295\n");
	EXPECT_EQ(q.ops[0].len, (Num{16, true}));
	EXPECT_EQ(q.ops[0].pgoff, UINT64_MAX);
	EXPECT_EQ(q.ops[1].addr.offset, (Num{4096, false}));
	EXPECT_EQ(q.ops[1].len, (Num{UINT64_MAX, false}));
	EXPECT_EQ(q.ops[2].len, (Num{4096, false}));
	EXPECT_EQ(q.ops[2].new_len, (Num{4095, true}));
	EXPECT_EQ(q.ops[3].value, UINT64_MAX);
	EXPECT_EQ(q.ops[4].index, UINT32_MAX);
	// Decimal below 4096, hex from there on; pages keep their suffix.
	EXPECT_EQ(format_op(q, q.ops[1]), "munmap A+0x1000 len=0xffffffffffffffff");
	EXPECT_EQ(format_op(q, q.ops[2]), "mremap A len=0x1000 new_len=4095p");
	EXPECT_EQ(format_op(q, q.ops[0]), "mmap A len=16p pgoff=0xffffffffffffffff");
	EXPECT_EQ(Num({3, true}).resolve(16), 3u << 16);
	round_trip(q);
}

TEST(ProgramText, RawFlagBitsRoundTrip)
{
	Program p = parse_ok("map flags=none\n"
			     "mmap A len=1p prot=8 flags=shared,0x40\n"
			     "mmap B len=1p flags=none\n"
			     "madvise A len=1p advice=100\n"
			     "update idx=0 val=0 flags=4\n");
	EXPECT_EQ(p.map.map_flags, 0u);
	EXPECT_EQ(p.ops[0].prot, 8);
	EXPECT_EQ(p.ops[0].flags, uapi::MAP_SHARED | 0x40);
	EXPECT_EQ(p.ops[1].flags, 0);
	EXPECT_EQ(p.ops[2].advice, 100);
	EXPECT_EQ(p.ops[3].flags, 4);
	round_trip(p);

	// Built in code rather than parsed: still a fixed point.
	Program q;
	q.map.map_flags = 0xffffffffu;
	q.add_label("X");
	Op op;
	op.kind = OpKind::mmap;
	op.label = 0;
	op.flags = -1;
	op.prot = uapi::PROT_WRITE | uapi::PROT_EXEC;
	q.ops.push_back(op);
	op.kind = OpKind::mremap;
	op.label = -1;
	op.addr.label = 0;
	op.flags = uapi::MREMAP_DONTUNMAP | 0x100;
	op.prot = 0;
	q.ops.push_back(op);
	round_trip(q);
}

TEST(ProgramText, LabelRebinding)
{
	Program p = parse_ok("mmap A len=1p\nmunmap A len=1p\nmmap A len=2p at=A\n");
	EXPECT_EQ(p.labels, std::vector<std::string>{"A"});
	EXPECT_EQ(p.ops[2].label, 0);
	EXPECT_EQ(p.ops[2].at.label, 0);
	EXPECT_EQ(p.label_index("A"), 0);
	EXPECT_EQ(p.label_index("B"), -1);
	round_trip(p);
}

struct ErrorCase {
	const char *text;
	int line, column;
	const char *message;  // a substring of the message
};

class ProgramTextError : public testing::TestWithParam<ErrorCase> {};

TEST_P(ProgramTextError, Position)
{
	const ErrorCase &c = GetParam();
	ParseResult r = parse_program(c.text);
	ASSERT_FALSE(r.program.has_value()) << c.text;
	EXPECT_EQ(r.error.line, c.line) << r.error.str();
	EXPECT_EQ(r.error.column, c.column) << r.error.str();
	EXPECT_NE(r.error.message.find(c.message), std::string::npos) << r.error.str();
	EXPECT_EQ(r.error.str(), std::to_string(c.line) + ":" + std::to_string(c.column) + ": " + r.error.message);
}

INSTANTIATE_TEST_SUITE_P(
	Errors, ProgramTextError,
	testing::Values(
		// statements
		ErrorCase{"mmap A len=1p\n  frobnicate x\n", 2, 3, "unknown statement"},
		// schedule records: the column of the word at fault
		ErrorCase{"at T9 l#1 switch T1\n", 1, 4, "must be below T8"},
		ErrorCase{"at T0 l#0 switch T1\n", 1, 7, "expected LABEL#N"},
		ErrorCase{"at T0 l#1 switch X1\n", 1, 18, "expected 'TASK LABEL#N switch TASK'"},
		ErrorCase{"at T0 l#1 hop T1\n", 1, 11, "expected 'TASK LABEL#N switch TASK'"},
		// headers
		ErrorCase{"arch 32\narch 64\n", 2, 1, "duplicate 'arch'"},
		ErrorCase{"arch 31\n", 1, 6, "bad arch"},
		ErrorCase{"patch\n", 1, 1, "missing value"},
		ErrorCase{"page 4k 16k\n", 1, 9, "unexpected"},
		ErrorCase{"page 8k\n", 1, 6, "bad page"},
		ErrorCase{"door side\n", 1, 6, "bad door"},
		ErrorCase{"spec_v1 maybe\n", 1, 9, "bad spec_v1"},
		ErrorCase{"mmap A len=1p\npatch v1\n", 2, 1, "must come before"},
		ErrorCase{"expect ok\ndoor anon\n", 2, 1, "must come before"},
		// map
		ErrorCase{"map\nmap\n", 2, 1, "duplicate 'map'"},
		ErrorCase{"mmap A len=1p\nmap value_size=4\n", 2, 1, "before ops"},
		ErrorCase{"map value_size=4 value_size=8\n", 1, 18, "duplicate key 'value_size'"},
		ErrorCase{"map values=4\n", 1, 5, "unknown key 'values'"},
		ErrorCase{"map max_entries=4294967296\n", 1, 17, "out of range"},
		ErrorCase{"map flags=mmapable,,rdonly\n", 1, 20, "empty list item"},
		ErrorCase{"map flags=mmapable,sleepable\n", 1, 20, "unknown flags 'sleepable'"},
		ErrorCase{"map key_size=\n", 1, 14, "missing value"},
		ErrorCase{"map 4\n", 1, 5, "expected key=value"},
		// op arguments
		ErrorCase{"mmap A\n", 1, 1, "missing len="},
		ErrorCase{"mmap\n", 1, 1, "missing label"},
		ErrorCase{"mmap len=1p\n", 1, 6, "expected label"},
		ErrorCase{"mmap 9A len=1p\n", 1, 6, "bad label"},
		ErrorCase{"mmap A len=1p len=2p\n", 1, 15, "duplicate key 'len'"},
		ErrorCase{"mmap A len=1p size=4\n", 1, 15, "unknown key 'size'"},
		ErrorCase{"mmap A len=1p prot=rwq\n", 1, 22, "bad prot"},
		ErrorCase{"mmap A len=1p prot=rr\n", 1, 21, "bad prot"},
		ErrorCase{"mmap A len=1p flags=shared,anonymous\n", 1, 28, "unknown flags"},
		ErrorCase{"mmap A len=1p at=B\n", 1, 18, "unknown label 'B'"},
		ErrorCase{"mmap A len=1p at=A\n", 1, 18, "unknown label 'A'"},
		ErrorCase{"mmap A len=1p\nload B+1p\n", 2, 6, "unknown label 'B'"},
		ErrorCase{"mmap A len=1p\nload A*2\n", 2, 6, "bad address"},
		ErrorCase{"mmap A len=1p\nload\n", 2, 1, "missing address"},
		ErrorCase{"mmap A len=1p\nload A+\n", 2, 8, "bad number"},
		ErrorCase{"mmap A len=1p\nload A-1q\n", 2, 8, "bad number"},
		ErrorCase{"mmap A len=1p\nload A size=3\n", 2, 13, "size must be"},
		ErrorCase{"mmap A len=1p\nstore A size=4\n", 2, 1, "missing val="},
		ErrorCase{"mmap A len=1p\nmprotect A len=1p\n", 2, 1, "missing prot="},
		ErrorCase{"mmap A len=1p\nmadvise A len=1p advice=willneed\n", 2, 25, "unknown advice"},
		ErrorCase{"mmap A len=1p\nmremap A len=1p\n", 2, 1, "missing new_len="},
		ErrorCase{"mmap A len=1p\nmremap A len=1p new_len=1p flags=grow\n", 2, 34, "unknown flags"},
		ErrorCase{"mmap A len=1p\nmremap A len=1p new_len=1p as=1B\n", 2, 31, "bad label"},
		ErrorCase{"update idx=1 val=1 flags=lock\n", 1, 26, "unknown flags"},
		ErrorCase{"lookup\n", 1, 1, "missing idx="},
		ErrorCase{"fork 1\n", 1, 6, "expected key=value"},
		ErrorCase{"fork proc=64\n", 1, 11, "proc must be below 64"},
		ErrorCase{"fork =1\n", 1, 6, "expected key=value"},
		// numbers
		ErrorCase{"mmap A len=18446744073709551616\n", 1, 12, "out of range"},
		ErrorCase{"mmap A len=0x10000000000000000p\n", 1, 12, "out of range"},
		ErrorCase{"mmap A len=1p pgoff=0x1_0\n", 1, 21, "bad number"},
		ErrorCase{"mmap A len=1p pgoff=1p\n", 1, 21, "pages not allowed"},
		ErrorCase{"mmap A len=0x\n", 1, 12, "bad number"},
		ErrorCase{"mmap A len=-1\n", 1, 12, "bad number"},
		ErrorCase{"mmap A len=p\n", 1, 12, "bad number"},
		ErrorCase{"lookup idx=4294967296\n", 1, 12, "out of range"},
		ErrorCase{"lookup idx=1p\n", 1, 12, "pages not allowed"},
		ErrorCase{"update idx=0 val=0x1ffffffffffffffff\n", 1, 18, "out of range"},
		// expectations
		ErrorCase{"expect\n", 1, 1, "missing outcome"},
		ErrorCase{"expect fine\n", 1, 8, "unknown outcome"},
		ErrorCase{"expect violation\n", 1, 1, "missing invariant"},
		ErrorCase{"expect violation none\n", 1, 18, "unknown invariant"},
		ErrorCase{"expect violation leak\n", 1, 18, "unknown invariant"},
		ErrorCase{"expect ok patch=v1\n", 1, 11, "expected 'if'"},
		ErrorCase{"expect ok if\n", 1, 11, "missing condition"},
		ErrorCase{"expect ok if patch=v1 patch=v2\n", 1, 23, "duplicate key 'patch'"},
		ErrorCase{"expect ok if colour=red\n", 1, 14, "unknown key"},
		ErrorCase{"expect difference if patch=v1,v4\n", 1, 31, "bad patch 'v4'"},
		ErrorCase{"expect ok if arch=32,\n", 1, 22, "empty list item"},
		ErrorCase{"expect ok if page=4k,2k\n", 1, 22, "bad page"},
		ErrorCase{"expect ok if spec_v1=on\n", 1, 22, "bad spec_v1"},
		ErrorCase{"expect ok if door=pipe\n", 1, 19, "bad door"}));

TEST(ProgramText, ConfigNames)
{
	Config c;
	EXPECT_EQ(c.name(), "pre/arch64/4k/anon/mask");
	c = Config{Arch::A32, Patch::v3, 16, Door::direct, true};
	EXPECT_EQ(c.name(), "v3/arch32/64k/direct/bypass");
	EXPECT_EQ(parse_arch("arch32"), Arch::A32);
	EXPECT_EQ(parse_arch("64"), Arch::A64);
	EXPECT_EQ(parse_arch("128"), std::nullopt);
	EXPECT_EQ(parse_page_shift("64K"), 16u);
	EXPECT_EQ(parse_page_shift("16384"), 14u);
	EXPECT_EQ(parse_page_shift("4096"), 12u);
	EXPECT_EQ(parse_page_shift("8k"), std::nullopt);
	EXPECT_EQ(page_size_name(14), "16k");
	for (Invariant i : {Invariant::none, Invariant::write_active, Invariant::page_refcount,
			    Invariant::page_identity, Invariant::foreign_page, Invariant::coherent,
			    Invariant::pte_outside_vma, Invariant::freeze_iff, Invariant::use_after_free})
		EXPECT_EQ(parse_invariant(to_string(i)), i);
	for (int k = 0; k < kOpKinds; k++)
		EXPECT_EQ(parse_op_kind(to_string(OpKind(k))), OpKind(k));
	EXPECT_EQ(parse_op_kind("mmap2"), std::nullopt);

	ConfigFilter all;
	std::vector<Config> every = all.expand();
	ASSERT_EQ(every.size(), std::size(kPatches) * 2 * 3 * 3 * 2);  // a new level needs no edit here
	EXPECT_EQ(every.front(), (Config{Arch::A32, Patch::pre, 12, Door::anon, false}));
	EXPECT_EQ(every[1], (Config{Arch::A32, Patch::pre, 12, Door::anon, true}));
	EXPECT_EQ(every.back(), (Config{Arch::A64, std::end(kPatches)[-1], 16, Door::direct, true}));
	for (const Config &x : every)
		EXPECT_TRUE(all.matches(x));
	ConfigFilter some;
	some.patches = {Patch::v1};
	EXPECT_FALSE(some.matches(c));
	c.patch = Patch::v1;
	EXPECT_TRUE(some.matches(c));
}

}  // namespace
}  // namespace fl
