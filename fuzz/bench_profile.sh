#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Where a fuzz target's time goes, two libFuzzer builds side by side: B grows
# a corpus from empty for SECONDS (seed 1, its dictionary), then each build
# fuzzes its own copy of that corpus for SECONDS on one core under
# `perf record` (cpu-clock samples with call stacks: this VM has no hardware
# counters). Prints each side's exec/s, its ten hottest functions by their
# own samples, and the inclusive share of each FUNCTION (a substring of a
# symbol; default: the differential runner, the eager reference's remap, the
# invariant checks, fork's page-table copy and libFuzzer's feature scan).
# Both sides start from the same bytes, which are the same Programs only if
# the decoder did not change between the builds (since fbc3b00 it makes
# bigger maps, so the eager reference's remap weighs more today). Sampling
# slows both sides alike: exec/s is lower than bench_exec.sh's.
#
#   fuzz/bench_profile.sh SECONDS DIR_A DIR_B TARGET [FUNCTION...]
#   (e.g. 20 /work/before/build/fuzz/libfuzzer build/fuzz/libfuzzer program-v2-arch64-anon)
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 SECONDS DIR_A DIR_B TARGET [FUNCTION...]" >&2; exit 2; }
secs=$1 a=$2 b=$3 t=$4
shift 4
funcs=("$@")
[ ${#funcs[@]} -gt 0 ] || funcs=(run_differential remap_vmalloc_range_partial check_invariants copy_page_range
	TracePC::CollectFeatures)
command -v perf >/dev/null || { echo "$0: perf is not installed (Debian: linux-perf)" >&2; exit 2; }
perf record -q -o /dev/null -- true 2>/dev/null ||
	{ echo "$0: perf record is not permitted here (kernel.perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid))" >&2; exit 2; }
for dir in "$a" "$b"; do
	[ -x "$dir/$t" ] || { echo "$0: no fuzz target $dir/$t (fuzz/build.sh builds it)" >&2; exit 2; }
done
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
dict=$SRC_DIR/fuzz/${t%%-*}.dict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpu=${FL_BENCH_CPU:-0}

mkdir "$work/corpus"
taskset -c "$cpu" "$b/$t" -dict="$dict" -max_total_time="$secs" -seed=1 "$work/corpus" >/dev/null 2>&1 || true
echo "corpus: $(ls "$work/corpus" | wc -l) inputs from $secs s of B"
for side in A B; do
	dir=$a; [ $side = B ] && dir=$b
	cp -r "$work/corpus" "$work/corpus.$side"
	out=$(taskset -c "$cpu" perf record -q -F 999 -g -o "$work/perf.$side" -- "$dir/$t" -dict="$dict" \
		-max_total_time="$secs" -seed=2 -print_final_stats=1 "$work/corpus.$side" 2>&1 || true)
	echo "$side: $(sed -n 's/^stat::average_exec_per_sec: *//p' <<<"$out") exec/s under perf ($dir)"
	! grep -q "Test unit written" <<<"$out" ||
		echo "$side: stopped at a finding: the profile is of its start, not of fuzzing (bench_exec.sh goes on in fork mode)"
done
# perf report's rows, "share% symbol" (argument lists cut off), once per side
# and kind: self ("no-children") and inclusive ("children").
for side in A B; do
	for kind in no-children children; do
		perf report -i "$work/perf.$side" --$kind --sort symbol --stdio -g none 2>/dev/null |
			sed -n -E 's/^ +([0-9.]+%) +([0-9.]+% +)?\[.\] +(.*)$/\1 \3/p' | sed -E 's/\(.*//; s/ +$//' \
			>"$work/rows.$side.$kind"
	done
done
echo
echo "top 10 by own samples"
paste -d'|' <(head -10 "$work/rows.A.no-children" | cut -c1-60) <(head -10 "$work/rows.B.no-children" | cut -c1-60) |
	awk -F'|' '{ printf "  A %-60s  B %s\n", $1, $2 }'
echo
printf '%-30s %7s  %7s\n' 'inclusive share' A B
for f in "${funcs[@]}"; do
	printf '  %-28s %7s  %7s\n' "$f" \
		"$(grep -F -m1 -- "$f" "$work/rows.A.children" | cut -d' ' -f1 || true)" \
		"$(grep -F -m1 -- "$f" "$work/rows.B.children" | cut -d' ' -f1 || true)"
done
