#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Throughput of fuzz targets, two builds side by side: each target runs
# SECONDS from an empty corpus (with its dictionary) on one core, the builds
# alternating target by target so that both see the same machine load.
# Prints exec/s per target and build, and the load average before each run;
# with --afl the binaries are AFL++ builds (persistent mode through
# libAFLDriver, one "\0" seed) and the AFL++ stability of each run follows.
# A libFuzzer run that stops at a finding is run again in fork mode
# (-fork=1 -ignore_crashes=1), marked "(fork)": executions per second of
# wall clock, restarts after each finding included.
#
#   fuzz/bench_exec.sh [--afl] SECONDS DIR_A DIR_B TARGET...   (e.g. build/fuzz/libfuzzer)
set -euo pipefail
afl=0
[ "${1:-}" = --afl ] && { afl=1; shift; }
[ $# -ge 4 ] || { echo "usage: $0 [--afl] SECONDS DIR_A DIR_B TARGET..." >&2; exit 2; }
secs=$1 a=$2 b=$3
shift 3
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-28s %12s %12s %8s  %s\n' target "A exec/s" "B exec/s" "B/A" "load (1 min) before A, B"
for t in "$@"; do
	dict=$SRC_DIR/fuzz/${t%%-*}.dict
	declare -A rate=() load=() stab=()
	for side in A B; do
		dir=$a; [ $side = B ] && dir=$b
		rm -rf "$work/corpus" && mkdir "$work/corpus"
		load[$side]=$(cut -d' ' -f1 /proc/loadavg)
		if [ $afl = 1 ]; then
			printf '\0' >"$work/corpus/empty"
			rm -rf "$work/out"
			AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
				ASAN_OPTIONS=abort_on_error=1:symbolize=0:malloc_context_size=0:detect_leaks=0 \
				taskset -c 0 afl-fuzz -i "$work/corpus" -o "$work/out" -V "$secs" -x "$dict" -s 1 -- "$dir/$t" \
				>/dev/null 2>&1 || true
			stats=$work/out/default/fuzzer_stats
			rate[$side]=$(awk -F' *: *' '$1 == "execs_done" { e = $2 } $1 == "run_time" { r = $2 }
				END { if (r > 0) printf "%d", e / r }' "$stats" 2>/dev/null || true)
			stab[$side]=$(awk -F' *: *' '$1 == "stability" { print $2 }' "$stats" 2>/dev/null || true)
		else
			out=$(taskset -c 0 "$dir/$t" -dict="$dict" -max_total_time="$secs" -print_final_stats=1 -seed=1 \
				"$work/corpus" 2>&1 || true)
			rate[$side]=$(sed -n 's/^stat::average_exec_per_sec: *//p' <<<"$out")
			if grep -q "Test unit written" <<<"$out"; then
				# it stopped at a finding (bounds: the direct door's): run
				# again in fork mode, which goes on past findings, and take
				# its last exec/s (fork and corpus-merge costs included)
				rm -rf "$work/corpus" "$work/arts" && mkdir "$work/corpus" "$work/arts"
				out=$(taskset -c 0 "$dir/$t" -dict="$dict" -max_total_time="$secs" -seed=1 -fork=1 \
					-ignore_crashes=1 -artifact_prefix="$work/arts/" "$work/corpus" 2>&1 || true)
				# (its own exec/s field is per job, 0 when jobs are short:
				# executions over seconds from its last "#N: ... time: Ts")
				rate[$side]="$(sed -n 's/^#\([0-9]*\): .* time: \([0-9]*\)s.*/\1 \2/p' <<<"$out" | tail -1 |
					awk '$2 > 0 { printf "%d", $1 / $2 }') (fork)"
			fi
		fi
	done
	printf '%-28s %12s %12s %8s  %s, %s' "$t" "${rate[A]}" "${rate[B]}" \
		"$(awk -v x="${rate[A]:-0}" -v y="${rate[B]:-0}" 'BEGIN { if (x > 0) printf "%.2fx", y / x; else printf "-" }')" \
		"${load[A]}" "${load[B]}"
	[ $afl = 1 ] && printf '  stability %s, %s' "${stab[A]}" "${stab[B]}"
	echo
done
