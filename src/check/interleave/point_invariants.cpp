// SPDX-License-Identifier: GPL-2.0-only
#include "check/interleave/point_invariants.h"

#include <algorithm>

namespace fl::interleave {

PointInvariants::PointInvariants(Machine &m, const Program &p) : m_(m)
{
	for (const Op &op : p.ops)
		if (op.kind == OpKind::exit && op.proc >= 0) {
			if (exits_.size() <= size_t(op.proc))
				exits_.resize(size_t(op.proc) + 1);
			exits_[size_t(op.proc)] = true;
		}
}

void PointInvariants::leave(const Op &op)
{
	auto it = std::find(flight_.begin(), flight_.end(), &op);
	if (it != flight_.end())
		flight_.erase(it);
}

std::string PointInvariants::check() const
{
	InFlight f;
	for (const Op *op : flight_) {
		f.ops++;
		if (op->proc >= 0 && size_t(op->proc) < exits_.size() && exits_[size_t(op->proc)])
			f.closing = true;  // its last mmput may run exit_mmap
		switch (op->kind) {
		case OpKind::update: f.writers++; break;
		case OpKind::mmap:
			if (op->has_at || (op->flags & uapi::MAP_FIXED))
				f.closing = true;  // may replace a mapping: its ->close
			else
				f.writers++;
			break;
		case OpKind::reserve:  // a PROT_NONE MAP_FIXED mmap over a mapping: its ->close
			f.closing |= op->has_at || (op->flags & uapi::MAP_FIXED);
			break;
		case OpKind::mremap: f.closing = f.moving = true; break;
		case OpKind::munmap:
		case OpKind::mprotect:
		case OpKind::madvise:
		case OpKind::exit: f.closing = true; break;
		case OpKind::fork: f.forking = true; break;
		default: break;
		}
	}
	return m_.check_point_invariants(f).detail;
}

}  // namespace fl::interleave
