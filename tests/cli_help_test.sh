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
# Every command the CLI lists (so a new one must answer too), and at least these.
mapfile -t cli_cmds < <("$cli" help | awk '/^  [a-z]/ && $1 != "configuration" {print $1}')
for c in replay summary decode oracle interleave reach repro selftest; do
	[[ " ${cli_cmds[*]} " == *" $c "* ]] || { echo "FAIL: faultline-cli help does not list $c"; fails=$((fails + 1)); }
done
for c in "${cli_cmds[@]}"; do
	expect 0 "^usage: faultline-cli $c" "$c" --help
	expect 0 "^usage: faultline-cli $c" help "$c"
	expect 2 "unknown option --bogus" "$c" --bogus "$src/tests/data/ok.fl"
done
expect 0 '^exit: 0 ok, 1 a finding' help
expect 2 "unknown command 'frob'" help frob

# The wrapper: help from its header, before any package check or build.
EXPECT_CMD=("$src/faultline")
# Every command the wrapper's dispatch handles (its `case "$cmd"` labels), so a
# command added there without a header line fails here.
mapfile -t wrapper_cmds < <(sed -n '/^case "\$cmd" in$/,/^esac$/p' "$src/faultline" |
	grep -E '^[a-z][a-z| -]*\)$' | tr -d ')' | tr '|' '\n' | tr -d ' ' | grep -vx help)
[ ${#wrapper_cmds[@]} -ge 15 ] || { echo "FAIL: found only ${#wrapper_cmds[@]} wrapper commands"; fails=$((fails + 1)); }
for c in "${cli_cmds[@]}"; do  # what the CLI offers, the wrapper offers
	[[ " ${wrapper_cmds[*]} " == *" $c "* ]] || { echo "FAIL: ./faultline has no command $c"; fails=$((fails + 1)); }
done
for c in "${wrapper_cmds[@]}"; do
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
expect 2 'test takes no arguments but --m32' test --bogus
expect 2 'test takes at most one argument' test --m32 extra

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
