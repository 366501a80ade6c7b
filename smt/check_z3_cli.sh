#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A few shipped scripts (one per obligation, both answers) give the answer
# their header expects under the z3 command.
# usage: check_z3_cli.sh Z3 QUERIES-DIR
set -u
z3=$1 dir=$2 fail=0
for f in o1-v1-arch32-4k-regular o1-v2-arch32-4k-direct o1-v2-arch64-4k-direct \
	 o2-v2-arch64-64k-anon o3-v1-arch32-4k-direct o4-v3-arch32-4k-anon \
	 o5-any-arch64-4k-any o6-v3-arch32-64k-anon; do
	want=$(sed -n 's/^; expected: //p' "$dir/$f.smt2")
	got=$("$z3" -T:60 "$dir/$f.smt2" | head -1)
	if [ "$got" != "$want" ]; then
		echo "$f: z3 says $got, header expects $want" >&2
		fail=1
	else
		echo "$f: $got"
	fi
done
exit $fail
