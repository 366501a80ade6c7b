// SPDX-License-Identifier: GPL-2.0-only
// One Program process on the host: a child that executes memory-management
// syscalls, loads and stores on command and reports what it saw. Workers
// share one file-descriptor table with the supervisor (clone CLONE_FILES,
// as the machine has one map fd for all its processes), so a `close` or a
// pipe made in one is visible to all; their address spaces are their own.
#pragma once

#include <cstdint>

#include "check/program.h"

namespace fl::real {

// Fixed-size, so each message is one atomic pipe write.
struct Command {
	OpKind kind = OpKind::load;
	int prot = 0, flags = 0, advice = 0, map_fd = -1;
	unsigned size = 0, page_shift = 12;
	uint64_t addr = 0, len = 0, new_len = 0, at = 0, pgoff = 0, value = 0;
};

struct Reply {
	int64_t ret = 0;  // syscall result, or the new worker's host pid for fork
	int sig = 0;      // SIGBUS/SIGSEGV of a load or store
	unsigned size = 0;
	uint8_t data[8] = {};
	int child_cmd_fd = -1;  // fork: the write end of the new worker's command pipe
};

// Starts a worker that reads Commands from `cmd_fd` and writes Replies to
// `reply_fd`: returns its pid in the caller, never returns in the worker.
// -errno on failure.
int64_t spawn_worker(int cmd_fd, int reply_fd);

}  // namespace fl::real
