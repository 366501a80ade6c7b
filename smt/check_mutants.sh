#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The mutants' self-check: for each slip smt/mutants/NAME, faultline-prove-NAME
# (the table over the port with that slip compiled in, proof and replay alike)
# runs the file's `options:` rows, and every row must come out as the file
# says where it lists the row (red: each listed result differs from
# smt/expected) and as smt/expected says elsewhere, each counterexample
# replayed on the slipped concrete port (faultline-prove's own exit status).
# The unslipped port's table is smt.prove's.
# usage: check_mutants.sh BIN-DIR MUTANTS-DIR EXPECTED [OPTIONS...]
set -u
bin=$1 mutants=$2 expected=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows() { grep -v '^#' "$1" | grep -- '->' | sed 's/ *-> */ -> /'; }  # FILE: its "KEY -> RESULT" lines
rows "$expected" >"$tmp/base"
bad=0 total=0
for f in "$mutants"/*; do
	name=${f##*/}
	prove=$bin/faultline-prove-$name
	[ -x "$prove" ] || { echo "$name: $prove not built"; bad=1; continue; }
	rows "$f" >"$tmp/red"
	[ -s "$tmp/red" ] || { echo "$name: lists no row it turns red"; bad=1; continue; }
	# each listed row is red: the base table expects something else for it
	red=1
	while read -r line; do
		key=${line%% -> *}
		base=$(awk -F' -> ' -v k="$key" '$1 == k' "$tmp/base")
		[ -n "$base" ] || { echo "$name: '$key' is not a row of $expected"; red=0; }
		[ "$base" != "$line" ] || { echo "$name: '$line' is the unslipped expectation (not red)"; red=0; }
	done <"$tmp/red"
	# the expectations for the slipped port: the base table, the listed rows replaced
	awk -F' -> ' 'NR == FNR { red[$1] = $0; next } ($1 in red) { print red[$1]; next } { print }' \
		"$tmp/red" "$tmp/base" >"$tmp/expected"
	read -ra opts <<<"$(sed -n 's/^options: *//p' "$f")"
	start=$SECONDS
	"$prove" "${opts[@]}" --expected "$tmp/expected" "$@" >"$tmp/out" 2>&1
	rc=$?
	# every listed row was in the run (the options reach it)
	awk '/^[0-9] +(pre|v1|v2|v3|any) / { print $1, $2, $3, $4, $5 }' "$tmp/out" | sort >"$tmp/ran"
	missing=$(sed 's/ -> .*//' "$tmp/red" | sort | comm -23 - "$tmp/ran")
	n=$(wc -l <"$tmp/red") ran=$(wc -l <"$tmp/ran")
	total=$((total + n))
	if [ $rc -ne 0 ] || [ -n "$missing" ] || [ $red -eq 0 ]; then
		echo "$name: FAILED (faultline-prove exit $rc)"
		grep -A1 'MISMATCH' "$tmp/out"
		[ -z "$missing" ] || sed 's/^/  listed but not run: /' <<<"$missing"
		tail -1 "$tmp/out"
		bad=1
	else
		printf '%-18s %2d of %2d rows red as listed, the rest as smt/expected, every counterexample replayed (%d s)\n' \
			"$name" "$n" "$ran" $((SECONDS - start))
	fi
done
[ $bad -eq 0 ] && echo "mutants: every slip turned its rows red ($total rows)"
exit $bad
