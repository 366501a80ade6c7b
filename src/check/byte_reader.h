// SPDX-License-Identifier: GPL-2.0-only
// The fuzzers' byte reader, shared by every bytes -> Program decoder.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fl {

// Reads front to back; past the end every read is zero, so every byte
// string, including the empty one, decodes.
class Bytes {
public:
	Bytes(const uint8_t *data, size_t size) : data_(data), size_(size) {}

	bool empty() const { return pos_ >= size_; }
	uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
	// Little endian. One statement per read: the order in which the
	// operands of | are evaluated is unspecified.
	uint16_t u16()
	{
		const uint16_t lo = u8();
		return uint16_t(lo | u8() << 8);
	}
	uint32_t u32()
	{
		const uint32_t lo = u16();
		return lo | uint32_t(u16()) << 16;
	}
	uint64_t u64()
	{
		const uint64_t lo = u32();
		return lo | uint64_t(u32()) << 32;
	}
	unsigned pick(unsigned n) { return n ? u8() % n : 0; }

private:
	const uint8_t *data_;
	size_t size_;
	size_t pos_ = 0;
};

}  // namespace fl
