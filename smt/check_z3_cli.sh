#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Every shipped script gives the answer its header expects under the z3
# command (each names the program's tactic in its check-sat-using).
# One z3 process reads them all, each after an (echo NAME) and followed by a
# (reset) to a fresh solver: a z3 start per script was three quarters of this
# test's time (28 s against 6.5 s for the 238 scripts here).
# usage: check_z3_cli.sh Z3 QUERIES-DIR
set -u
z3=$1 dir=$2
scripts=("$dir"/*.smt2)
want=$(for f in "${scripts[@]}"; do printf '%s %s\n' "$(basename "$f")" "$(sed -n 's/^; expected: //p' "$f")"; done)
got=$(for f in "${scripts[@]}"; do printf '(echo "@ %s")\n' "$(basename "$f")"; cat "$f"; printf '\n(reset)\n'; done |
	"$z3" -T:600 -in | awk '/^@ / {name = $2; next} name != "" {print name, $1; name = ""}')
n=${#scripts[@]}
# A script z3 did not answer, or answered otherwise, is a line of want not in got.
differ=$(diff <(echo "$want") <(echo "$got"))
fail=$(grep -c '^<' <<<"$differ")
sed -n 's/^> \(.*\) \(.*\)/\1: z3 says \2, differs from its header/p' <<<"$differ" >&2
echo "$n scripts, $fail differ from their header"
[ "$n" -gt 0 ] && [ "$fail" -eq 0 ]
