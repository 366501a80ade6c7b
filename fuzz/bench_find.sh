#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Time to the first finding, two libFuzzer builds side by side: each build
# runs TARGET RUNS times from an empty corpus (with its dictionary, seeds
# 1..RUNS, at most SECONDS each) on one core, the builds alternating run by
# run so that both see the same machine load. Prints seconds and executions
# to the finding per run and their medians (a run without a finding counts
# as SECONDS, marked "-"), and the finding's first line.
#
#   fuzz/bench_find.sh RUNS SECONDS DIR_A DIR_B TARGET   (e.g. 5 300 ... program-v1-arch32-direct)
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 RUNS SECONDS DIR_A DIR_B TARGET" >&2; exit 2; }
runs=$1 secs=$2 a=$3 b=$4 t=$5
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
dict=$SRC_DIR/fuzz/${t%%-*}.dict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A secs_of=() execs_of=()
printf '%-5s %-4s %10s %10s  %s\n' seed side seconds execs finding
for seed in $(seq 1 "$runs"); do
	for side in A B; do
		dir=$a; [ $side = B ] && dir=$b
		rm -rf "$work/corpus" "$work/arts" && mkdir "$work/corpus" "$work/arts"
		t0=$(date +%s.%N)
		out=$(taskset -c "${FL_BENCH_CPU:-0}" "$dir/$t" -dict="$dict" -max_total_time="$secs" -seed="$seed" \
			-print_final_stats=1 -artifact_prefix="$work/arts/" "$work/corpus" 2>&1 || true)
		t1=$(date +%s.%N)
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' <<<"$out" | tail -1)
		if ls "$work/arts"/crash-* >/dev/null 2>&1; then
			s=$(awk -v x="$t0" -v y="$t1" 'BEGIN { printf "%.2f", y - x }')
			what=$(grep -m1 -E '^faultline: ' <<<"$out" | cut -c1-90 || true)
		else
			s=$secs what=-
		fi
		secs_of[$side]+="$s "
		execs_of[$side]+="${execs:-0} "
		printf '%-5s %-4s %10s %10s  %s\n' "$seed" "$side" "$s" "${execs:-?}" "$what"
	done
done
for side in A B; do
	printf 'median %s: %s s, %s execs\n' "$side" "$(tr ' ' '\n' <<<"${secs_of[$side]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${execs_of[$side]}" | grep . | median)"
done
