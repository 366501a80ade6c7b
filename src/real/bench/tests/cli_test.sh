#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultline-bench's contract: bad options -> one-line error, exit 2; a run
# prints the seed's line shape (timings are printed, never checked).
# Usage: cli_test.sh BENCH
set -u
bench=$1
source "$(dirname "$0")/../../../../tests/expect.sh"
EXPECT_CMD=("$bench")
expect 2 "bad value '0' for --map-size" --map-size 0
expect 2 "bad value 'lots' for --map-size" --map-size lots
expect 2 "bad value '8Mb' for --map-size" --map-size 8Mb
expect 2 "beyond this machine's memory" --map-size 100G
expect 2 "unknown backend 'bogus'" --backend bogus
expect 2 'need a thread count from 1' -p 0
expect 2 'need a thread count from 1' --producers -1
expect 2 'unknown option --nr-threads' --nr-threads 4
expect 2 'more than the mapping' --map-size 4096 --touch 2
one_line_error --map-size 0
one_line_error -p 0
expect 0 '^usage: faultline bench' --help
expect 0 '^arraymap-mmap: model v3/arch32: per op: ptes at mmap 256, faults 1[67] \(0 vma-lock retries\),' \
	--backend model --patch v3 --arch 32 --map-size 1M --populate
expect 0 '^arraymap-mmap: throughput: [0-9]+\.[0-9]{3} \+/- [0-9]+\.[0-9]{3} M ops/s, latency: [0-9]+\.[0-9]{3} ns/op$' \
	--backend anon --map-size 64K -d 0.05 -w 0 --touch all arraymap-mmap
expect 0 'nr_threads: 2, map_size: 65536' --backend memfd --map-size 64K -d 0.05 -w 0 -p 2
# bpf-arena skips (exit 0) on a host that refuses arena maps, forced or not.
expect 0 'arraymap-mmap: throughput|^skipped: bpf-arena: ' --backend bpf-arena --map-size 64K -d 0.05 -w 0
EXPECT_CMD=(env FL_HOST_REFUSE_ARENA=1 "$bench")
# (without bpf(2) at all, that is the reason)
expect 0 '^skipped: bpf-arena: (the host refuses BPF_MAP_TYPE_ARENA \(FL_HOST_REFUSE_ARENA is set\)$|bpf\(BPF_MAP_CREATE)' \
	--backend bpf-arena --map-size 64K -d 0.05 -w 0
expect_done
