// SPDX-License-Identifier: GPL-2.0-only
#include "check/contents.h"

#include <algorithm>
#include <cstring>

namespace fl {

ContentsShadow::ContentsShadow(const MapSpec &spec, int64_t map_ret, unsigned page_shift)
	: live_(map_ret >= 0), page_shift_(page_shift)
{
	elem_ = (uint64_t(spec.value_size) + 7) & ~uint64_t(7);
	value_size_ = spec.value_size;
	max_entries_ = spec.max_entries;
	const uint64_t page = uint64_t(1) << page_shift;
	// What mmap may show: PAGE_ALIGN(max_entries * elem_size), the tail of
	// the last page included (user space may write it; no lookup reads it).
	visible_bytes_ = (max_entries_ * elem_ + page - 1) & ~(page - 1);
}

uint8_t ContentsShadow::byte(uint64_t off) const
{
	auto it = bytes_.find(off / kChunk);
	return it == bytes_.end() ? 0 : it->second[off % kChunk];
}

bool ContentsShadow::known(uint64_t off) const
{
	if (unknown_.contains(off))
		return false;
	return !all_unknown_ || known_.contains(off);
}

uint64_t ContentsShadow::unknown_run_end(uint64_t off, uint64_t limit) const
{
	// unknown_'s range, or (all_unknown_) up to the next byte learnt since
	const uint64_t end = unknown_.contains(off) ? unknown_.end_of(off) : known_.next_after(off);
	return end < limit ? end : limit;
}

void ContentsShadow::learn(uint64_t from, uint64_t to)
{
	if (all_known())
		return;
	unknown_.remove(from, to);
	if (all_unknown_)
		known_.add(from, to);
}

void ContentsShadow::set(uint64_t off, uint8_t v)
{
	bytes_[off / kChunk][off % kChunk] = v;
	learn(off, off + 1);
}

void ContentsShadow::kernel_write(uint64_t offset, const std::vector<uint8_t> &bytes)
{
	const uint64_t end = std::min<uint64_t>(offset + bytes.size(), visible_bytes_);
	for (uint64_t off = offset; off < end; off++)
		bytes_[off / kChunk][off % kChunk] = bytes[off - offset];
	learn(offset, end);
}

void ContentsShadow::concurrent(const Op &op, const Event &ev)
{
	if (!live_ || !ev.info.empty() || ev.sig || ev.ret < 0)
		return;
	if (op.kind == OpKind::update) {
		const uint64_t base = uint64_t(op.index) * elem_;
		unknown_.add(base, base + value_size_);
		known_.remove(base, base + value_size_);
	} else if (op.kind == OpKind::store) {
		bytes_.clear();
		unknown_.clear();
		known_.clear();
		all_unknown_ = true;
	}
}

// Zeroes [from, to) at the cost of what the shadow holds, not of the range:
// an update of a large value stays cheap.
void ContentsShadow::zero_range(uint64_t from, uint64_t to)
{
	if (from >= to)
		return;
	const uint64_t first = from / kChunk, last = (to - 1) / kChunk;
	auto clear = [&](uint64_t key, Chunk &c) {  // true: the whole chunk lies in the range
		const uint64_t lo = key == first ? from % kChunk : 0, hi = key == last ? (to - 1) % kChunk + 1 : kChunk;
		std::fill(c.begin() + lo, c.begin() + hi, 0);
		return lo == 0 && hi == kChunk;
	};
	if (bytes_.size() > last - first) {
		for (uint64_t key = first; key <= last; key++)
			if (auto it = bytes_.find(key); it != bytes_.end() && clear(key, it->second))
				bytes_.erase(it);
		return;
	}
	for (auto it = bytes_.begin(); it != bytes_.end();)
		it = it->first >= first && it->first <= last && clear(it->first, it->second) ? bytes_.erase(it) : std::next(it);
}

size_t ContentsShadow::first_difference(uint64_t off, const uint8_t *data, size_t n) const
{
	static const Chunk zero{};
	for (size_t i = 0; i < n;) {
		const uint64_t key = (off + i) / kChunk, at = (off + i) % kChunk;
		const size_t len = std::min<uint64_t>(n - i, kChunk - at);
		auto it = bytes_.find(key);
		const uint8_t *want = (it == bytes_.end() ? zero : it->second).data() + at;
		if (std::memcmp(want, data + i, len) != 0)
			for (size_t j = 0; j < len; j++)
				if (want[j] != data[i + j])
					return i + j;
		i += len;
	}
	return n;
}

// Only the map's own VMAs are shared (bpf_map_mmap refuses private ones;
// reservations are private and anonymous).
bool ContentsShadow::user_offset(const VmaEntry &s, uint64_t a, uint64_t *off) const
{
	if (!s.shared || !s.found || a < s.start || a >= s.end || s.pgoff >= visible_bytes_ >> page_shift_)
		return false;
	*off = (s.pgoff << page_shift_) + (a - s.start);
	return *off < visible_bytes_;
}

std::string ContentsShadow::observe(Machine &m, const Op &op, uint64_t addr, const Event &ev)
{
	if (!live_ || !ev.info.empty() || ev.sig || ev.ret < 0)
		return "";
	const uint64_t mask = m.config().arch == Arch::A32 ? 0xffffffffull : ~0ull;
	switch (op.kind) {
	case OpKind::update: {
		// copy_map_value: value_size bytes, the Program's 8 then zeroes
		const uint64_t base = uint64_t(op.index) * elem_;
		std::vector<uint8_t> v(value_size_ < 8 ? value_size_ : 8);
		for (uint64_t i = 0; i < v.size(); i++)
			v[i] = uint8_t(op.value >> (8 * i));
		kernel_write(base, v);
		if (value_size_ > 8) {
			zero_range(base + 8, base + value_size_);
			learn(base + 8, base + value_size_);
		}
		return "";
	}
	case OpKind::lookup: {
		const uint64_t base = uint64_t(op.index) * elem_;
		const size_t n = ev.data.size();
		size_t i = 0;
		if (all_known()) {  // a chunk at a time
			i = first_difference(base, ev.data.data(), n);
			checked_ += i < n ? i + 1 : i;  // up to the first mismatch
		} else {  // a byte at a time: unknown bytes are learnt, not checked
			while (i < n) {
				if (!known(base + i)) {  // learn the run of unknown bytes from here
					const uint64_t end = unknown_run_end(base + i, base + n);
					for (uint64_t off = base + i; off < end; off++)
						bytes_[off / kChunk][off % kChunk] = ev.data[off - base];
					learn(base + i, end);
					i = end - base;
					continue;
				}
				checked_++;
				if (ev.data[i] != byte(base + i))
					break;
				i++;
			}
		}
		if (i == n)
			return "";
		return "lookup idx=" + std::to_string(op.index) + " byte " + std::to_string(i) + " is " +
		       std::to_string(ev.data[i]) + ", last written " + std::to_string(byte(base + i));
	}
	case OpKind::store:
	case OpKind::load: {
		const bool store = op.kind == OpKind::store;
		// An access spans at most two VMAs: the first and the last byte's.
		const VmaEntry first = m.vma_at(op.proc, addr & mask);
		const VmaEntry last = m.vma_at(op.proc, (addr + op.size - 1) & mask);
		for (unsigned i = 0; i < op.size; i++) {
			const uint64_t a = (addr + i) & mask;
			uint64_t off;
			if (!user_offset(first, a, &off) && !user_offset(last, a, &off))
				continue;
			if (store) {
				set(off, uint8_t(op.value >> (8 * i)));
				continue;
			}
			if (i < ev.data.size() && !known(off)) {
				set(off, ev.data[i]);
				continue;
			}
			checked_++;
			if (i < ev.data.size() && ev.data[i] != byte(off))
				return "load at map offset " + std::to_string(off) + " is " + std::to_string(ev.data[i]) +
				       ", last written " + std::to_string(byte(off));
		}
		return "";
	}
	default:
		return "";
	}
}

}  // namespace fl
