#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The command-line conventions: every subcommand answers `help CMD` and
# `CMD --help` with exit 0 (the wrapper without building or installing
# anything), and a bad option with exit 2, the code for bad input.
# Usage: cli_help_test.sh SOURCE_DIR CLI [BENCH]
set -u
src=$1 cli=$2 bench=${3:-}
source "$src/tests/expect.sh"

EXPECT_CMD=("$cli")
for c in replay summary decode oracle repro selftest; do
	expect 0 "^usage: faultline-cli $c" "$c" --help
	expect 0 "^usage: faultline-cli $c" help "$c"
	expect 2 "unknown option --bogus" "$c" --bogus "$src/tests/data/ok.fl"
done
expect 0 '^exit: 0 ok, 1 a finding' help
expect 2 "unknown command 'frob'" help frob

# The wrapper: help from its header, before any package check or build.
EXPECT_CMD=("$src/faultline")
for c in verify test replay summary fuzz props prove bench deps docker-check oracle repro selftest kernels; do
	expect 0 "^  \./faultline $c" help "$c"
	expect 0 "^  \./faultline $c" "$c" --help
done
for k in build run record diff; do
	expect 0 "faultline kernels $k" kernels "$k" --help
done
expect 0 '^Exit codes, every command: 0 ok; 1 a finding' help
expect 2 "unknown command 'frob'" frob
expect 2 "unknown command 'frob'" help frob
expect 2 'kernels needs build, run, record, diff or repro' kernels frob
expect 2 'test takes no arguments' test --bogus

# What the wrapper hands bad options to (it adds nothing in between).
EXPECT_CMD=(env)
for py in tools/verify.py tools/fuzz_campaign.py props/run_props.py; do
	expect 2 'unrecognized arguments: --bogus' python3 "$src/$py" --bogus
done
expect 2 "unknown option '--bogus'" bash "$src/tools/podman_check.sh" --bogus
for k in build run record diff; do
	expect 2 "unknown .*option '--bogus'" bash "$src/kernels/$k.sh" --bogus
done
if [ -n "$bench" ]; then
	expect 0 'usage' "$bench" --help
	expect 2 'bogus' "$bench" --bogus
fi
expect_done
