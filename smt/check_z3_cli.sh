#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Every shipped script gives the answer its header expects under the z3
# command (each names the program's tactic in its check-sat-using).
# usage: check_z3_cli.sh Z3 QUERIES-DIR
set -u
z3=$1 dir=$2 fail=0 n=0
for f in "$dir"/*.smt2; do
	want=$(sed -n 's/^; expected: //p' "$f")
	got=$("$z3" -T:60 "$f" | head -1)
	n=$((n + 1))
	if [ "$got" != "$want" ]; then
		echo "$(basename "$f"): z3 says $got, header expects $want" >&2
		fail=$((fail + 1))
	fi
done
echo "$n scripts, $fail differ from their header"
[ "$n" -gt 0 ] && [ "$fail" -eq 0 ]
