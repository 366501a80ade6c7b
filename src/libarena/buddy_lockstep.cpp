// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_lockstep.h"

#include "libarena/buddy_runner.h"

namespace fl::libarena {

namespace {

// "free live:0  -> 0" -> "0": what the op returned.
std::string result(const BuddySession &s)
{
	const std::string &line = s.verdict().trace.back();
	const size_t arrow = line.rfind("  -> ");
	return arrow == std::string::npos ? "" : line.substr(arrow + 5);
}

}  // namespace

LockstepReport run_buddy_lockstep(const BuddyProgram &p)
{
	LockstepReport r;
	BuddySession series(buddy_level::series), before(buddy_level::before);
	for (size_t i = 0; i < p.ops.size() && r.ok; i++) {
		const BuddyOp &op = p.ops[i];
		if (op.kind == BuddyOp::nmi_free || op.kind == BuddyOp::nmi_alloc || op.kind == BuddyOp::nmi || op.has_nmi) {
			r.skipped_d3++;
			continue;
		}
		if (series.would_skip(op)) {
			r.skipped_d2++;
			continue;
		}
		const bool ok_s = series.step(op), ok_b = before.step(op);
		if (!ok_s || !ok_b) {
			r.ok = false;
			r.what = "op " + std::to_string(i + 1) + ": " + (ok_s ? "before: " + before.verdict().what
									   : "series: " + series.verdict().what);
			break;
		}
		const std::string rs = result(series), rb = result(before);
		r.compared++;
		if (rs == rb)
			continue;
		if (op.kind == BuddyOp::free_bulk && rs == "0") {
			r.differed_d4++;
			continue;
		}
		r.ok = false;
		r.what = "op " + std::to_string(i + 1) + ": series returned " + rs + ", before " + rb;
	}
	return r;
}

}  // namespace fl::libarena
