#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultline-bench-libarena's contract: bad options -> one-line error, exit 2;
# a run prints seed 002's layout with the seed's row under ours (timings are
# printed, never checked). About 1 s under ASan.
# Usage: cli_test.sh BENCH
set -u
bench=$1
source "$(dirname "$0")/../../../../../tests/expect.sh"
EXPECT_CMD=("$bench")
expect 2 "bad value '9' for -p: producers, 1..8" -p 9
expect 2 "bad value '0' for --allocs" --allocs 0
expect 2 "bad value '1,,4' for --allocs" --allocs 1,,4
expect 2 "bad value 'malloc' for --variants" --variants malloc
expect 2 "bad value '0' for -d: seconds, > 0" -d 0
expect 2 "bad value '-1' for --runs" --runs -1
expect 2 'unknown option --threads' --threads 4
expect 2 '--runs needs a value' --runs
one_line_error -p 9
one_line_error --bogus
expect 0 '^usage: faultline bench --libarena' --help
tiny=(--libarena --variants malloc-xfree --allocs 1,16 -p 1,2 --runs 1 -d 0.02 -w 0)
# a cell's shape, not its figures: a timer too coarse for the tiny run prints "-"
expect 0 '^1      port  ([0-9]+/[0-9]+ [0-9.]+x|-)' "${tiny[@]}" --no-model
expect 0 '^       seed  273/64 4.3x +865/64 13.5x' "${tiny[@]}" --no-model
expect 0 '^16     1    \| 1.00 / 1.00' "${tiny[@]}"
expect_done
