#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultline oracle's contract on bad input: one line, exit 2, whatever the
# host allows. Usage: oracle_cli_test.sh [EMULATOR] CLI DATA_DIR
set -u
cli=("$@"); data=${cli[-1]}; unset 'cli[-1]'; fails=0
expect() {  # expect RC PATTERN ARGS...
	local want=$1 pattern=$2; shift 2
	local out rc
	out=$("${cli[@]}" oracle "$@" 2>&1); rc=$?
	if [ "$rc" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
		echo "FAIL: oracle $* -> rc $rc (want $want): $(tail -2 <<<"$out")"
		fails=$((fails + 1))
	fi
}
expect 2 'needs Program files or --count' 
expect 2 "bad value 'x' for --count" --count x
expect 2 "bad value '-1' for --seed" --count 1 --seed -1
expect 2 'cannot read .*nonexistent.fl' "$data/nonexistent.fl"
expect 2 'malformed.fl:4:13: ' "$data/malformed.fl"
expect 2 'unknown option --bogus' --bogus
expect 2 "bad value 'soon' for --time" --count 1 --time soon
# Runs (or says why not) and names its seed.
expect 0 'seed 42|^skipped: ' --allow-skip --count 2 --seed 42
# --time bounds the random batch: far fewer than a million in one second.
expect 0 'time 1 s is up after [0-9]+ of 1000000 random|^skipped: ' --allow-skip --count 1000000 --seed 42 --time 1
echo "$fails failed"
[ $fails -eq 0 ]
