// SPDX-License-Identifier: GPL-2.0-only
// Runs an allocator Program on a fresh arena and allocator, predicting every
// result from the shadow model (which objects are live, which wait on the
// deferred list) and checking the invariants after every op and at every
// NMI point. The one runner the fuzz target, the property tests and the
// ctest replay share.
#pragma once

#include <string>
#include <vector>

#include "libarena/buddy_program.h"

namespace fl::libarena {

struct BuddyVerdict {
	bool ok = true;
	size_t op = 0;     // 0-based, when !ok
	std::string what;  // "I12: free stale:0 returned 0, expected -EINVAL"
	std::vector<std::string> trace;  // one line per op: the op and what it returned
};

BuddyVerdict run_buddy_program(const BuddyProgram &p);

// The same, one op at a time (the RapidCheck stateful model drives this).
class BuddySession {
public:
	explicit BuddySession(buddy_level level);
	~BuddySession();
	BuddySession(const BuddySession &) = delete;
	BuddySession &operator=(const BuddySession &) = delete;
	// Runs op and the checks after it; false (and verdict() says why) on a violation.
	bool step(const BuddyOp &op);
	const BuddyVerdict &verdict() const;
	size_t live_objects() const;

private:
	BuddyProgram program_;
	struct Impl;
	Impl *impl_;
};

}  // namespace fl::libarena
