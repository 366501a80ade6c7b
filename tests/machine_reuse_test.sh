#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Machines restored from the arena (check/workspace.h) against machines built
# for every run (FL_MACHINE_REUSE=0): the whole corpus under every
# configuration it allows must give the same traces and summary (random
# Programs: ctest MachineReuse.*).
# Usage: machine_reuse_test.sh [EMULATOR] CLI -- FILE...
set -u
cli=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do cli+=("$1"); shift; done
shift
fails=0
compare() {  # compare WHAT ARGS...
	local what=$1; shift
	local reuse fresh
	reuse=$("${cli[@]}" "$@" 2>&1)
	fresh=$(FL_MACHINE_REUSE=0 "${cli[@]}" "$@" 2>&1)
	if [ "$reuse" != "$fresh" ]; then
		echo "FAIL ($what): reused machines differ from new ones:"
		diff <(echo "$fresh") <(echo "$reuse") | head -20
		fails=$((fails + 1))
	fi
	if ! grep -q "violation" <<<"$reuse"; then
		echo "FAIL ($what): no violation in the output, nothing was compared"
		fails=$((fails + 1))
	fi
}
compare "summary of the corpus" summary "$@"
compare "replay of the corpus" replay "$@"
[ $fails -eq 0 ] && echo "machine reuse: same results as new machines"
exit $((fails > 0))
