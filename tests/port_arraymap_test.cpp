// SPDX-License-Identifier: GPL-2.0-only
// kernel/bpf/arraymap.c through bpf(2): array_map_alloc_check and
// bpf_get_file_flag at map creation, the power-of-two rounding of the
// allocation, zeroed memory, update/lookup errnos, and the aliasing of the
// kernel's view with the user mapping (docs/arraymap.md, docs/bpf-syscall.md#the-map-file).
#include "port_helpers.h"

namespace fl::port {
namespace {

using namespace uapi;

constexpr uint32_t kUnknownFlag = 1u << 20;
constexpr uint32_t kPreserveElems = 1u << 11;  // BPF_F_PRESERVE_ELEMS

std::vector<Config> all_levels()
{
	ConfigFilter f = base_filter();
	f.page_shifts = {12};
	return f.expand();
}

int64_t create(const Config &c, MapSpec spec)
{
	return make_machine(c)->map_create(spec);
}

// docs/arraymap.md#array_map_alloc_check check 1: every bad attribute is -EINVAL.
TEST(PortArrayMapCreate, BadAttributesAreEinval)
{
	for (const Config &c : all_levels()) {
		SCOPED_TRACE(c.name());
		MapSpec s;
		s.max_entries = 0;
		EXPECT_EQ(create(c, s), -EINVAL) << "max_entries 0";

		s = MapSpec{};
		s.key_size = 8;
		EXPECT_EQ(create(c, s), -EINVAL) << "key_size 8";
		s.key_size = 0;
		EXPECT_EQ(create(c, s), -EINVAL) << "key_size 0";

		s = MapSpec{};
		s.value_size = 0;
		EXPECT_EQ(create(c, s), -EINVAL) << "value_size 0";

		s = MapSpec{};
		s.map_flags = BPF_F_MMAPABLE | kUnknownFlag;
		EXPECT_EQ(create(c, s), -EINVAL) << "unknown flag";

		// check 3: only PERF_EVENT_ARRAY may preserve elements
		s.map_flags = BPF_F_MMAPABLE | kPreserveElems;
		EXPECT_EQ(create(c, s), -EINVAL) << "BPF_F_PRESERVE_ELEMS";

		// bpf_map_flags_access_ok
		s.map_flags = BPF_F_MMAPABLE | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG;
		EXPECT_EQ(create(c, s), -EINVAL) << "RDONLY_PROG|WRONLY_PROG";

		// bpf_get_file_flag (docs/bpf-syscall.md#the-map-file: the fd's O_ flags)
		s.map_flags = BPF_F_MMAPABLE | BPF_F_RDONLY | BPF_F_WRONLY;
		EXPECT_EQ(create(c, s), -EINVAL) << "RDONLY|WRONLY";

		// each of them alone is fine
		for (uint32_t ok : {BPF_F_RDONLY, BPF_F_WRONLY, BPF_F_RDONLY_PROG, BPF_F_WRONLY_PROG, 0u}) {
			s.map_flags = BPF_F_MMAPABLE | ok;
			EXPECT_GE(create(c, s), 0) << "flags 0x" << std::hex << s.map_flags;
		}
	}
}

// docs/arraymap.md#array_map_alloc_check check 4: value_size > INT_MAX is -E2BIG, but only after check 1.
TEST(PortArrayMapCreate, ValueSizeAboveIntMaxIsE2big)
{
	for (const Config &c : all_levels()) {
		SCOPED_TRACE(c.name());
		MapSpec s;
		s.max_entries = 1;
		s.value_size = 0x80000000u;
		EXPECT_EQ(create(c, s), -E2BIG);
		s.value_size = 0xffffffffu;
		EXPECT_EQ(create(c, s), -E2BIG);

		// check 1 comes first
		s.key_size = 2;
		EXPECT_EQ(create(c, s), -EINVAL);

		// INT_MAX itself passes the check; the 2 GiB allocation then
		// fails in vmalloc on 32 bits (docs/bpf-syscall.md#bpf_map_area_mmapable_alloc: NULL -> -ENOMEM; the
		// 32-bit machine has 1 GiB of RAM and a smaller vmalloc space) and succeeds on the 64-bit
		// machine's 64 GiB (so maps past 4 GiB exist; their pages are sparse).
		s.key_size = 4;
		s.value_size = 0x7fffffffu;
		if (c.arch == Arch::A32)
			EXPECT_EQ(create(c, s), -ENOMEM);
		else
			EXPECT_GE(create(c, s), 0);
	}
}

// docs/arraymap.md#array_map_alloc: without bypass_spec_v1 max_entries is rounded up to a power of
// two in u32 and wraps to 0 above 2^31: -E2BIG. With the bypass there is no
// rounding, the check passes and only the (16 GiB) allocation can fail.
TEST(PortArrayMapCreate, MaxEntriesAbove2To31)
{
	for (const Config &c : all_levels()) {
		SCOPED_TRACE(c.name());
		MapSpec s;
		for (uint32_t n : {0x80000001u, 0xc0000000u, 0xffffffffu}) {
			s.max_entries = n;
			Config mask = c;
			mask.bypass_spec_v1 = false;
			EXPECT_EQ(create(mask, s), -E2BIG) << n;
			Config bypass = c;
			bypass.bypass_spec_v1 = true;
			int64_t r = create(bypass, s);
			EXPECT_NE(r, -E2BIG) << n;
			if (c.arch == Arch::A32)
				EXPECT_EQ(r, -ENOMEM) << n;  // 16 GiB of elements on a 1 GiB machine
			else
				EXPECT_GE(r, 0) << n;  // 16-32 GiB of (sparse) elements on the 64 GiB machine
		}
		// 2^31 itself is a power of two: no wrap; the allocation fails on 32 bits
		s.max_entries = 0x80000000u;
		if (c.arch == Arch::A32)
			EXPECT_EQ(create(c, s), -ENOMEM);
		else
			EXPECT_GE(create(c, s), 0);
	}
}

// docs/arraymap.md#array_map_alloc, docs/arraymap.md#kernel-side-addressing: the allocation is rounded up to a power of two but
// map.max_entries keeps the user's value, and every bound uses it.
TEST(PortArrayMapCreate, RoundingKeepsMaxEntries)
{
	ConfigFilter f = base_filter();
	f.page_shifts = {12};
	f.spec_v1 = {false, true};
	for (const Config &c : f.expand()) {
		SCOPED_TRACE(c.name());
		MapSpec s;
		s.value_size = 8;
		s.max_entries = 5;  // allocated as 8 without the bypass
		auto m = machine_with_map(c, s);
		std::vector<uint8_t> v;
		EXPECT_EQ(m->map_lookup(4, &v), 0);
		EXPECT_EQ(m->map_lookup(5, &v), -ENOENT);
		EXPECT_EQ(m->map_lookup(7, &v), -ENOENT);
		EXPECT_EQ(m->map_lookup(0xffffffffu, &v), -ENOENT);
		EXPECT_EQ(m->map_update(4, le_bytes(1), BPF_ANY), 0);
		EXPECT_EQ(m->map_update(5, le_bytes(1), BPF_ANY), -E2BIG);
		EXPECT_EQ(m->map_update(7, le_bytes(1), BPF_ANY), -E2BIG);
	}
}

// docs/arraymap.md#array_map_alloc, docs/bpf-syscall.md#bpf_map_area_mmapable_alloc: __GFP_ZERO. Every element reads as zero, and so do the
// bytes past max_entries * elem_size up to the end of the last page.
TEST(PortArrayMapCreate, MemoryIsZeroed)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		MapSpec s;
		s.value_size = 12;  // elem_size 16
		s.max_entries = 3;
		auto m = machine_with_map(c, s);
		for (uint32_t i = 0; i < 3; i++) {
			std::vector<uint8_t> v;
			ASSERT_EQ(m->map_lookup(i, &v), 0);
			EXPECT_EQ(v, std::vector<uint8_t>(12, 0)) << i;
		}
		int64_t a = map_pages(*m, 1, 0, R);
		ASSERT_GE(a, 0);
		for (uint64_t off = 0; off < m->page_size(); off += m->page_size() / 8)
			EXPECT_EQ(load64(*m, a + off), 0u) << off;
		EXPECT_EQ(load64(*m, a + m->page_size() - 8), 0u);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/arraymap.md#kernel-side-addressing: the errnos of array_map_update_elem, in their order.
TEST(PortArrayMapElem, UpdateErrnos)
{
	for (const Config &c : all_levels()) {
		SCOPED_TRACE(c.name());
		MapSpec s;
		s.max_entries = 4;
		auto m = machine_with_map(c, s);
		auto v = le_bytes(0x1234);

		EXPECT_EQ(m->map_update(0, v, 3), -EINVAL);        // > BPF_EXIST
		EXPECT_EQ(m->map_update(0, v, 8), -EINVAL);
		EXPECT_EQ(m->map_update(4, v, 3), -EINVAL);        // flags checked before the index
		EXPECT_EQ(m->map_update(4, v, BPF_ANY), -E2BIG);   // index >= max_entries
		EXPECT_EQ(m->map_update(4, v, BPF_NOEXIST), -E2BIG);  // index before NOEXIST
		EXPECT_EQ(m->map_update(0, v, BPF_NOEXIST), -EEXIST);
		EXPECT_EQ(m->map_update(0, v, 4 /* BPF_F_LOCK */), -EINVAL);  // no spin lock
		EXPECT_EQ(m->map_update(0, v, 4 | BPF_EXIST), -EINVAL);

		// none of the failures wrote anything
		std::vector<uint8_t> out;
		ASSERT_EQ(m->map_lookup(0, &out), 0);
		EXPECT_EQ(le_value(out), 0u);

		EXPECT_EQ(m->map_update(0, v, BPF_EXIST), 0);
		ASSERT_EQ(m->map_lookup(0, &out), 0);
		EXPECT_EQ(le_value(out), 0x1234u);
		EXPECT_EQ(m->map_update(3, le_bytes(7), BPF_ANY), 0);
		ASSERT_EQ(m->map_lookup(3, &out), 0);
		EXPECT_EQ(le_value(out), 7u);
		EXPECT_EQ(m->map_lookup(4, &out), -ENOENT);
	}
}

// docs/arraymap.md#kernel-side-addressing: element i lives at byte i * round_up(value_size, 8) of the
// mapping; a kernel update shows through the mapping and a user store
// shows in lookup. Only value_size bytes are copied.
TEST(PortArrayMapElem, KernelAndUserViewsAlias)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		const uint64_t ps = uint64_t(1) << c.page_shift;
		MapSpec s;
		s.value_size = 12;  // elem_size 16
		s.max_entries = uint32_t(3 * ps / 16);
		auto m = machine_with_map(c, s);
		int64_t a = map_pages(*m, 3);
		ASSERT_GE(a, 0);

		for (uint32_t i : {0u, 1u, uint32_t(ps / 16) - 1, uint32_t(ps / 16) + 3,
				   uint32_t(3 * ps / 16) - 1}) {
			SCOPED_TRACE(i);
			std::vector<uint8_t> v(12);
			for (size_t k = 0; k < 12; k++)
				v[k] = uint8_t(0xa0 + k + i);
			ASSERT_EQ(m->map_update(i, v, BPF_ANY), 0);
			Access got = m->load(0, a + uint64_t(i) * 16, 8);
			ASSERT_EQ(got.sig, 0);
			EXPECT_EQ(got.bytes, std::vector<uint8_t>(v.begin(), v.begin() + 8));
			got = m->load(0, a + uint64_t(i) * 16 + 8, 8);
			ASSERT_EQ(got.sig, 0);
			// bytes 12..15 are padding: never written by copy_map_value
			EXPECT_EQ(got.bytes, (std::vector<uint8_t>{v[8], v[9], v[10], v[11], 0, 0, 0, 0}));

			ASSERT_EQ(m->store(0, a + uint64_t(i) * 16 + 4, 4, 0xdeadbeef).sig, 0);
			std::vector<uint8_t> out;
			ASSERT_EQ(m->map_lookup(i, &out), 0);
			std::vector<uint8_t> want = v;
			want[4] = 0xef, want[5] = 0xbe, want[6] = 0xad, want[7] = 0xde;
			EXPECT_EQ(out, want);
		}
		EXPECT_TRUE(invariants_hold(*m));
	}
}

// docs/arraymap.md#kernel-side-addressing: the user offset o addresses element o / elem_size also through
// a window at a page offset.
TEST(PortArrayMapElem, AliasingThroughOffsetWindow)
{
	for (const Config &c : base_filter().expand()) {
		SCOPED_TRACE(c.name());
		const uint64_t ps = uint64_t(1) << c.page_shift;
		MapSpec s;
		s.value_size = 8;
		s.max_entries = uint32_t(4 * ps / 8);
		auto m = machine_with_map(c, s);
		int64_t a = map_pages(*m, 2, 2);  // data pages 2 and 3
		ASSERT_GE(a, 0);
		uint32_t idx = uint32_t(2 * ps / 8) + 5;  // page 2, element 5
		ASSERT_EQ(m->map_update(idx, le_bytes(0x55aa), BPF_ANY), 0);
		EXPECT_EQ(load64(*m, a + 5 * 8), 0x55aau);
		ASSERT_EQ(store64(*m, a + ps + 16, 0x77), 0);  // page 3, element 2
		std::vector<uint8_t> out;
		ASSERT_EQ(m->map_lookup(uint32_t(3 * ps / 8) + 2, &out), 0);
		EXPECT_EQ(le_value(out), 0x77u);
		EXPECT_TRUE(invariants_hold(*m));
	}
}

}  // namespace
}  // namespace fl::port
