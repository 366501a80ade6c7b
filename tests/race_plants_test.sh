#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Each concurrency checker finds its planted slip from the explorer's own
# search over an explore Program written before the slip (not shaped for
# it), on the first, unpreempted schedule, and the finding replays; the same
# Program on the real port is quiet.
#   race_plants_test.sh [EMULATOR...] FAULTLINE_CLI PLANT_DIR PROGRAM
set -u
. "$(dirname "$0")/expect.sh"
args=("$@")
program=${args[-1]} plants=${args[-2]} cli=${args[-3]}
run=("${args[@]:0:${#args[@]}-3}")  # qemu-i386 in the -m32 build, else nothing
config=(--patch v2 --arch 64 --page 4k --door anon --spec mask --seconds 5)

EXPECT_CMD=("${run[@]}" "$cli" interleave)
expect 0 "no finding" "${config[@]}" "$program"

# The page-table lock deleted around finish_fault's check-and-set (no point
# inside): the lockset checker, against MADV_DONTNEED's zap under the PTL.
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-finish_fault_no_ptl")
expect 1 "at schedule 1 .*violation data_race.*vmf_pte_changed:pte.*unmap_vmas:pte.*\{mmap_lock \(shared\), ptl\}" \
	"${config[@]}" "$program"

# A helper that takes mmap_lock for read under do_mmap's write lock: lockdep.
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-mmap_lock_recursive")
expect 1 "at schedule 1 .*violation lockdep.*possible recursive locking detected.*mmap_lock" "${config[@]}" "$program"

# The explorer re-runs every finding from its records and says so when the
# verdict differs: both findings replay.
for plant in finish_fault_no_ptl mmap_lock_recursive; do
	if "${run[@]}" "$plants/interleave-plant-$plant" "${config[@]}" "$program" 2>&1 | grep -q "did not replay"; then
		echo "FAIL: $plant's finding does not replay"; fails=$((fails + 1))
	else
		passes=$((passes + 1))
	fi
done
expect_done
