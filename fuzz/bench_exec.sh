#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Throughput of libFuzzer targets, two builds side by side: each target runs
# SECONDS from an empty corpus (with its dictionary) on one core, the builds
# alternating target by target so that both see the same machine load.
# Prints exec/s per target and build, and the load average before each run.
#
#   fuzz/bench_exec.sh SECONDS DIR_A DIR_B TARGET...   (e.g. build/fuzz/libfuzzer)
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 SECONDS DIR_A DIR_B TARGET..." >&2; exit 2; }
secs=$1 a=$2 b=$3
shift 3
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-28s %12s %12s %8s  %s\n' target "A exec/s" "B exec/s" "B/A" "load (1 min) before A, B"
for t in "$@"; do
	dict=$SRC_DIR/fuzz/${t%%-*}.dict
	declare -A rate=() load=()
	for side in A B; do
		dir=$a; [ $side = B ] && dir=$b
		rm -rf "$work/corpus" && mkdir "$work/corpus"
		load[$side]=$(cut -d' ' -f1 /proc/loadavg)
		out=$(taskset -c 0 "$dir/$t" -dict="$dict" -max_total_time="$secs" -print_final_stats=1 -seed=1 \
			"$work/corpus" 2>&1 || true)
		rate[$side]=$(sed -n 's/^stat::average_exec_per_sec: *//p' <<<"$out")
	done
	printf '%-28s %12s %12s %8s  %s, %s\n' "$t" "${rate[A]}" "${rate[B]}" \
		"$(awk -v x="${rate[A]:-0}" -v y="${rate[B]:-0}" 'BEGIN { if (x > 0) printf "%.2fx", y / x; else printf "-" }')" \
		"${load[A]}" "${load[B]}"
done
