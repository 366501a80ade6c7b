#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Each concurrency checker finds its planted slip from the explorer's own
# search over an explore Program written before the slip (not shaped for
# it), on the first, unpreempted schedule, and the finding replays; the same
# Program on the real port is quiet.
#   race_plants_test.sh [EMULATOR...] FAULTLINE_CLI PLANT_DIR PROGRAM CLOSE_PROGRAM FREEZE_PROGRAM FAULT_PROGRAM
#                       VMA_PROGRAM CLOSES_PROGRAM
set -u
. "$(dirname "$0")/expect.sh"
args=("$@")
closes_program=${args[-1]} vma_program=${args[-2]} fault_program=${args[-3]}
freeze_program=${args[-4]} close_program=${args[-5]} program=${args[-6]} plants=${args[-7]} cli=${args[-8]}
run=("${args[@]:0:${#args[@]}-8}")  # qemu-i386 in the -m32 build, else nothing
config=(--patch v2 --arch 64 --page 4k --door anon --spec mask --seconds 5)
# "Quiet" is the bounded search run to its end (each ends within 3 s here), not
# a time budget: the same schedules every run, and none of them finds anything.
quiet=(--strategy bounded --seconds 120) exhausted="exhausted, .*: no finding"

EXPECT_CMD=("${run[@]}" "$cli" interleave)
expect 0 "$exhausted" "${config[@]}" "${quiet[@]}" "$program"

# The page-table lock deleted around finish_fault's check-and-set (no point
# inside): the lockset checker, against MADV_DONTNEED's zap under the PTL.
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-finish_fault_no_ptl")
expect 1 "at schedule 1 .*violation data_race.*vmf_pte_changed:pte.*unmap_vmas:pte.*\{mmap_lock \(shared\), ptl\}" \
	"${config[@]}" "$program"

# A helper that takes mmap_lock for read under do_mmap's write lock: lockdep.
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-mmap_lock_recursive")
expect 1 "at schedule 1 .*violation lockdep.*possible recursive locking detected.*mmap_lock" "${config[@]}" "$program"

# ->close drops a map reference the initial mmap never took: the map is
# freed under its fd, and KASAN's quarantine reports the next touch (not an
# ASan abort, not silence in a release build).
EXPECT_CMD=("${run[@]}" "$cli" interleave)
expect 0 "$exhausted" "${config[@]}" "${quiet[@]}" "$close_program"
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-mmap_close_put")
expect 1 "at schedule 1 .*violation use_after_free.*BUG: KASAN: slab-use-after-free of a bpf_map" "${config[@]}" \
	"$close_program"

# mmap's write-active count taken after freeze_mutex is dropped: a freeze
# passes in between, and the ghost invariant "frozen => no writer" sees the
# writable VMA at the next point (before any byte changes, before the group
# ends and the linearizability check could look).
EXPECT_CMD=("${run[@]}" "$cli" interleave)
expect 0 "$exhausted" "${config[@]}" "${quiet[@]}" "$freeze_program"
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-mmap_inc_after_unlock")
expect 1 "at schedule [0-9]+ .*violation freeze_iff.*frozen and a VM_MAYWRITE mapping of it is live" "${config[@]}" \
	"$freeze_program"

# The count invariants at every point (check/interleave/point_invariants.h):
# a split that links the new VMA before ->open counts it (write_active), a
# fault that hands the PTE its reference only after the PTL is dropped
# (page_refcount). Both balance again before the op returns, so without the
# point check the same search finds nothing.
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-split_link_before_open")
expect 1 "at schedule 1 .*violation write_active.*2 VM_MAYWRITE VMAs live and 0 writers in flight" "${config[@]}" \
	"$program"
expect 0 "$exhausted" "${config[@]}" "${quiet[@]}" --no-point-invariants "$program"
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-fault_ref_after_unlock")
expect 1 "at schedule 1 .*violation page_refcount.*finish_fault:spin_unlock.*refcount 1 mapcount 1" "${config[@]}" \
	"$fault_program"
expect 0 "$exhausted" "${config[@]}" "${quiet[@]}" --no-point-invariants "$fault_program"

# vm_flags written by mprotect under mmap_lock without the VMA write lock:
# the lockset checker reports it against a fault's read under the per-VMA
# lock from the one run that holds both accesses, found by the bounded
# search over a regression Program written before the slip; the same search
# without the lockset checker finds nothing.
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-mprotect_no_vma_lock")
expect 1 "violation data_race.*data race on vm_flags.*access_error:vm_flags.*\{vm_lock \(shared\)\}.*mprotect_fixup:vm_flags.*\{mmap_lock\}" \
	--seconds 5 "$vma_program"
expect 0 "$exhausted" "${quiet[@]}" --no-lockset "$vma_program"
EXPECT_CMD=("${run[@]}" "$cli" interleave)
expect 0 "$exhausted" "${quiet[@]}" "$vma_program"

# close(2)'s file_lock deleted: two closes of one fd (an explore Program
# written before the slip). The lockset checker reports the two closes'
# plain accesses to the fd's slot from the first, unpreempted schedule; with
# it off, the explorer needs a point at each declared access (--access-points)
# to walk between a close's look and its clear, where both closes take the
# file and the second fput touches a freed file. That finding's text says
# "points access", so it replays with no flag; on the real port it is quiet.
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-close_fd_no_file_lock")
expect 1 "at schedule 1 .*violation data_race.*data race on fd table.*file_close_fd_locked:fd_array.*holding \{\}" \
	"${config[@]}" "$closes_program"
expect 0 "$exhausted" "${config[@]}" "${quiet[@]}" --no-lockset "$closes_program"
found=$(mktemp -d)
expect 1 "violation use_after_free.*slab-use-after-free of a file in fput" \
	"${config[@]}" --no-lockset --access-points --out "$found" "$closes_program"
if grep -qx "points access" "$found"/*.fl; then passes=$((passes + 1)); else
	echo "FAIL: the access-points finding's text does not say 'points access'"; fails=$((fails + 1)); fi
expect 1 "violation use_after_free" --replay --no-lockset "$found"/*.fl
EXPECT_CMD=("${run[@]}" "$cli" interleave)
expect 0 "$exhausted" "${config[@]}" "${quiet[@]}" "$closes_program"
expect 0 "$exhausted" "${config[@]}" "${quiet[@]}" --access-points "$closes_program"
expect 0 ": ok$" --replay "$found"/*.fl
rm -rf "$found"

# From scratch, with no corpus: the swarm's generated Programs (seed 1) find
# the plants any Program that maps the map walks into, within 3 Programs (the
# others take 650-8,900, seconds in release: docs/interleavings.md).
# mmap_close_put's update through the freed map's fd copies into its vfree()d
# values, which is reported as KASAN_VMALLOC reports it (it was a trap).
for plant in mmap_lock_recursive:lockdep mmap_close_put:use_after_free split_link_before_open:write_active \
	fault_ref_after_unlock:page_refcount; do
	EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-${plant%%:*}")
	expect 1 "violation ${plant#*:}" --swarm --patch v3 --arch 64 --page 4k --door anon --spec mask --seconds 60 --seed 1
done
# A swarm over N cells gives the i-th its own stream, seed S x N + i (on its
# line), so that they do not search code every cell shares with the same
# Programs, nor runs of different seeds with each other's.
EXPECT_CMD=("${run[@]}" "$plants/interleave-plant-mmap_lock_recursive")
for cell in "v2/arch64/4k/anon/mask seed 2" "v3/arch64/4k/anon/mask seed 3"; do
	expect 1 "^swarm $cell: .*FINDING$" --swarm --patch v2,v3 --arch 64 --page 4k --door anon --spec mask --seconds 60 \
		--seed 1
done

# The explorer re-runs every finding from its records and says so when the
# verdict differs: every finding replays.
for plant in finish_fault_no_ptl mmap_lock_recursive mmap_close_put mmap_inc_after_unlock split_link_before_open \
	fault_ref_after_unlock mprotect_no_vma_lock close_fd_no_file_lock; do
	p=$program
	[ $plant = mmap_close_put ] && p=$close_program
	[ $plant = mmap_inc_after_unlock ] && p=$freeze_program
	[ $plant = fault_ref_after_unlock ] && p=$fault_program
	[ $plant = mprotect_no_vma_lock ] && p=$vma_program
	[ $plant = close_fd_no_file_lock ] && p=$closes_program
	if "${run[@]}" "$plants/interleave-plant-$plant" "${config[@]}" "$p" 2>&1 | grep -q "did not replay"; then
		echo "FAIL: $plant's finding does not replay"; fails=$((fails + 1))
	else
		passes=$((passes + 1))
	fi
done
expect_done
