#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the concurrency checkers cost per schedule, in each build given
# (e.g. build/release build/default): the same seeded schedules with every
# checker on, each one off, and all off, alternating variant by variant so
# that all see the same machine load; CPU seconds (user+sys), the lowest
# of REPEATS runs. Array map: faultline-cli interleave over the
# corpora/interleavings/explore Programs (v2, arch64, 4k, anon), SCHEDULES
# in all; allocator: buddy-explore over corpora/buddy/explore at series, a
# tenth as many (each costs more). Prints figures only
# (the checkers' verdicts are the tests' business).
#
#   tools/checker_cost.sh [-r REPEATS] [-n SCHEDULES] BUILD_DIR...
set -euo pipefail
repeats=3 schedules=2000
while [ $# -gt 0 ]; do
	case "$1" in
	-r) repeats=$2; shift 2 ;;
	-n) schedules=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { echo "usage: $0 [-r REPEATS] [-n SCHEDULES] BUILD_DIR..." >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
times=$(mktemp)
trap 'rm -f "$times"' EXIT
cpu() {  # COMMAND...: user+sys seconds of one run (its output dropped); a run that fails stops the benchmark
	local rc=0
	/usr/bin/time -f "%U %S" -o "$times" "$@" >/dev/null 2>&1 || rc=$?
	# 1 is a finding: timed like any run (the tests judge verdicts); more is a failure
	[ "$rc" -le 1 ] || { echo "$0: '$*' exited $rc" >&2; exit 2; }
	awk 'END { printf "%.3f", $1 + $2 }' "$times"
}
bench() {  # LABEL SCHEDULES ON-COMMAND... -- lockset-off linearize-off points-off: one table
	local label=$1 n=$2
	shift 2
	local -a cmd=()
	while [ "$1" != -- ]; do cmd+=("$1"); shift; done
	shift
	local -a names=("all on" "lockset off" "linearize off" "point checks off" "all off")
	local -a flags=("" "$1" "$2" "$3" "$1 $2 $3")
	local -a best=()
	for ((r = 0; r < repeats; r++)); do
		for i in "${!flags[@]}"; do
			# shellcheck disable=SC2086 # the flags are words
			t=$(cpu "${cmd[@]}" ${flags[$i]})
			if [ -z "${best[$i]:-}" ] || awk -v a="$t" -v b="${best[$i]}" 'BEGIN { exit !(a < b) }'; then
				best[$i]=$t
			fi
		done
	done
	echo "$label ($n schedules, lowest of $repeats)"
	for i in "${!flags[@]}"; do
		awk -v name="${names[$i]}" -v t="${best[$i]}" -v n="$n" -v all="${best[4]}" \
			'BEGIN { printf "  %-17s %7.2f s  %7.1f us/schedule  %+6.0f %% over all off\n", name, t, t * 1e6 / n, (t / all - 1) * 100 }'
	done
}
fl=("$src"/corpora/interleavings/explore/*.fl) bl=("$src"/corpora/buddy/explore/*.bl)
for dir in "$@"; do
	[ -x "$dir/faultline-cli" ] && [ -x "$dir/src/libarena/buddy-explore" ] ||
		{ echo "$0: $dir has no faultline-cli or buddy-explore (build it first)" >&2; exit 2; }
	echo "== $dir"
	per=$((schedules / ${#fl[@]}))
	bench "array map: interleave --strategy random --seed 1 --schedules $per, ${#fl[@]} Programs, v2/64/4k/anon" \
		"$((per * ${#fl[@]}))" "$dir/faultline-cli" interleave --patch v2 --arch 64 --page 4k --door anon --spec mask \
		--historic none --strategy random --seed 1 --schedules "$per" "${fl[@]}" \
		-- --no-lockset --no-linearize --no-point-invariants
	per=$((schedules / 10 / ${#bl[@]}))
	bench "allocator: buddy-explore --level series --max-schedules $per, ${#bl[@]} Programs" "$((per * ${#bl[@]}))" \
		"$dir/src/libarena/buddy-explore" --level series --max-schedules "$per" "${bl[@]}" \
		-- --no-lockset --no-linearize --no-point-checks
done
