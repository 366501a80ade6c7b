// SPDX-License-Identifier: GPL-2.0-only
// The uffd backend: real page faults resolved by the port. Its data equals
// the model's for the same accesses, and a fault the port refuses reaches
// the toucher as a real SIGBUS. Skips (with the reason) where userfaultfd
// or the needed uffd features are not available.
#include <csignal>
#include <cstring>
#include <gtest/gtest.h>

#include "real/bench/host_util.h"
#include "real/bench/touch.h"
#include "real/bench/uffd_backend.h"

namespace fl::bench {
namespace {

constexpr uint64_t kPage = 4096;

std::unique_ptr<UffdBackend> make(const Geometry &g, const PortLevel &lvl)
{
	std::string skip;
	auto b = UffdBackend::create(g, lvl, &skip);
	if (!b)
		std::cout << "skipped: " << skip << "\n";
	return b;
}

uint64_t read_u64(const uint8_t *p, Fault *f)
{
	uint64_t v = 0;
	*f = read_bytes(p, &v, sizeof(v));
	return v;
}

Geometry pages(uint64_t n)
{
	Geometry g;
	g.map_bytes = n * kPage;
	return g;
}

class UffdData : public ::testing::TestWithParam<PortLevel> {};

TEST_P(UffdData, EqualsTheModelForTheSameAccesses)
{
	const Geometry g = pages(16);
	auto b = make(g, GetParam());
	if (!b)
		GTEST_SKIP();
	std::string err;
	PortOracle model(GetParam(), g, &err);  // an independent simulated kernel
	ASSERT_EQ(err, "");
	auto *real = static_cast<uint8_t *>(b->map_at(0, g.mmap_bytes(), false, &err));
	ASSERT_NE(real, nullptr) << err;
	const int64_t sim = model.mmap(0, g.mmap_bytes(), false);
	ASSERT_GE(sim, 0);

	// loads and stores, 8 bytes each, at deterministic offsets across the pages
	const uint64_t offsets[] = {0, 8, 3 * kPage + 16, 15 * kPage + 4088, 7 * kPage, 3 * kPage + 24, 9 * kPage + 1000};
	uint64_t value = 0x1122334455667788ull;
	for (uint64_t off : offsets) {
		Fault f;
		uint64_t got = read_u64(real + off, &f);
		ASSERT_FALSE(f.sigbus) << "offset " << off;
		Access a = model.machine().load(0, uint64_t(sim) + off, 8);
		ASSERT_EQ(a.sig, 0);
		uint64_t want;
		memcpy(&want, a.bytes.data(), 8);
		EXPECT_EQ(got, want) << "load at offset " << off;
		value = value * 6364136223846793005ull + 1442695040888963407ull;
		ASSERT_FALSE(write_bytes(real + off + 8 * (off % 3 == 0), &value, 8).sigbus);
		EXPECT_EQ(model.machine().store(0, uint64_t(sim) + off + 8 * (off % 3 == 0), 8, value).sig, 0);
	}
	// every page's stamp and every stored value, read back through both
	for (uint64_t off = 0; off < g.mmap_bytes(); off += 8) {
		Fault f;
		uint64_t got = read_u64(real + off, &f);
		Access a = model.machine().load(0, uint64_t(sim) + off, 8);
		uint64_t want;
		memcpy(&want, a.bytes.data(), 8);
		ASSERT_EQ(got, want) << "offset " << off;
	}
	UffdCounts c = b->counts();
	EXPECT_EQ(c.faults, g.pages());  // one real fault per page, no fault-around
	EXPECT_EQ(c.continued, g.pages());
	EXPECT_EQ(c.refused, 0u);
	ASSERT_TRUE(b->unmap(real, &err)) << err;
}

INSTANTIATE_TEST_SUITE_P(Levels, UffdData,
			 ::testing::Values(PortLevel{Patch::v2, Arch::A64}, PortLevel{Patch::v3, Arch::A32},
					   PortLevel{Patch::v1, Arch::A64}, PortLevel{Patch::pre, Arch::A64}),
			 [](const auto &i) {
				 return std::string(to_string(i.param.patch)) + "_arch" + to_string(i.param.arch);
			 });

// pre: the eager mapping has no ->fault, so after MADV_DONTNEED the port
// refuses the refault (dontneed_refault); v2 refaults the same page.
TEST(UffdRefusal, PreRefaultAfterDontneedIsSigbus)
{
	const Geometry g = pages(4);
	for (Patch patch : {Patch::pre, Patch::v2}) {
		auto b = make(g, PortLevel{patch, Arch::A64});
		if (!b)
			GTEST_SKIP();
		std::string err;
		auto *p = static_cast<uint8_t *>(b->map_at(0, g.mmap_bytes(), false, &err));
		ASSERT_NE(p, nullptr) << err;
		ASSERT_FALSE(touch_pages(p, g.pages(), kPage).sigbus);
		ASSERT_TRUE(b->dontneed(p + kPage, kPage, &err)) << err;
		Fault f;
		uint64_t v = read_u64(p + kPage, &f);
		if (patch == Patch::pre) {
			EXPECT_TRUE(f.sigbus);
			EXPECT_EQ(f.addr, uintptr_t(p + kPage));
			// the poison marker's SIGBUS: BUS_MCEERR_AR on older kernels,
			// BUS_ADRERR on this 6.18
			EXPECT_TRUE(f.code == BUS_ADRERR || f.code == BUS_MCEERR_AR) << f.code;
			EXPECT_EQ(b->counts().refused, 1u);
			EXPECT_EQ(b->counts().last_refusal, "the port raises SIGBUS");
		} else {
			EXPECT_FALSE(f.sigbus);
			EXPECT_EQ(v, page_stamp(1));
			EXPECT_EQ(b->counts().refused, 0u);
		}
		// the other pages are untouched by the refusal
		EXPECT_EQ(read_u64(p, &f), page_stamp(0));
		EXPECT_FALSE(f.sigbus);
		ASSERT_TRUE(b->unmap(p, &err)) << err;
	}
}

// v1 on 32-bit through the regular door: the bound wraps, the port maps the
// bpf_array header page at vm_pgoff 0xfffff. The real mapping cannot show
// that page, so the fault is refused: SIGBUS, never another page.
TEST(UffdRefusal, V1WrapForeignPageIsRefused)
{
	Geometry g = pages(2);
	auto b = make(g, PortLevel{Patch::v1, Arch::A32, Door::regular});
	if (!b)
		GTEST_SKIP();
	std::string err;
	auto *p = static_cast<uint8_t *>(b->map_at(0xfffff, kPage, false, &err));
	ASSERT_NE(p, nullptr) << err;
	Fault f;
	read_u64(p + 0xff0, &f);
	EXPECT_TRUE(f.sigbus);
	UffdCounts c = b->counts();
	EXPECT_EQ(c.refused, 1u);
	EXPECT_EQ(c.continued, 0u);
	EXPECT_EQ(c.last_refusal.find("the port maps a page other than data page 1048575 (foreign_page: pid 0 maps the bpf_array header page"), 0u)
		<< c.last_refusal;
	ASSERT_TRUE(b->unmap(p, &err)) << err;

	// v2 refuses the same mmap outright, as the port does
	auto b2 = make(g, PortLevel{Patch::v2, Arch::A32, Door::regular});
	ASSERT_TRUE(b2);
	EXPECT_EQ(b2->map_at(0xfffff, kPage, false, &err), nullptr);
	EXPECT_NE(err.find("refused by the port"), std::string::npos) << err;
}

}  // namespace
}  // namespace fl::bench
