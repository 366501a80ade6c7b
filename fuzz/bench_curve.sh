#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# How a libFuzzer target's speed holds up as its campaign grows: runs TARGET
# of DIR for SECONDS on one core from its seed corpus (corpora/<kind>/seeds,
# if any) into CORPUS (kept: a grown corpus to profile on), with the flags
# and ASAN_OPTIONS tools/fuzz_campaign.py gives a campaign, restarting on
# the same corpus after a finding (a live slip such as guard_leak's, or a
# false alarm on correct code, would otherwise end the campaign). Every status line
# libFuzzer prints is stamped with the campaign's wall clock; the report is
# exec/s over minute 1 (the samples between 45 s and 75 s) and over the last
# window (from the last sample before SECONDS - WINDOW to the end), the
# findings (kept in CORPUS.findings/, to replay) and the corpus size. With -o FILE the stamped samples are kept
# ("seconds total_execs" per line).
#
#   fuzz/bench_curve.sh [-o FILE] [-w WINDOW] SECONDS DIR TARGET CORPUS [CPU]
#   (e.g. 600 build/fuzz/libfuzzer buddy-before /tmp/grown/buddy-before 0)
set -euo pipefail
out="" window=120
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out=$2; shift 2 ;;
	-w) window=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 4 ] || { echo "usage: $0 [-o FILE] [-w WINDOW] SECONDS DIR TARGET CORPUS [CPU]" >&2; exit 2; }
secs=$1 dir=$2 t=$3 corpus=$4 cpu=${5:-0}
[ -x "$dir/$t" ] || { echo "$0: no fuzz target $dir/$t (fuzz/build.sh builds it)" >&2; exit 2; }
[ -f "$dir/$t.options" ] || { echo "$0: no $dir/$t.options (fuzz/build.sh writes it beside the target)" >&2; exit 2; }
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0:detect_leaks=0}  # tools/fuzz_campaign.py's
seeds_kind=${t%%-*}
[[ $t == program-*-threads ]] && seeds_kind=threads  # fuzz_campaign.py's name for it
max_len=$(sed -n 's/^max_len = //p' "$dir/$t.options")  # the binary's own, as a campaign has it
seeds=()
[ -d "$SRC_DIR/corpora/$seeds_kind/seeds" ] && seeds=("$SRC_DIR/corpora/$seeds_kind/seeds")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$corpus" "$corpus.findings"
samples=${out:-$work/samples}
: >"$samples"
start=$EPOCHREALTIME base=0 findings=0 load=$(cut -d' ' -f1 /proc/loadavg)
elapsed() { awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
while :; do
	left=$(awk -v s="$secs" -v e="$(elapsed)" 'BEGIN { printf "%d", s - e }')
	[ "$left" -gt 0 ] || break
	last=0
	while IFS= read -r line; do
		case "$line" in
		"#"[0-9]*) n=${line%%[!#0-9]*}; last=${n#\#}; echo "$(elapsed) $((base + last))" >>"$samples" ;;
		stat::number_of_executed_units:*) last=${line##* } ;;
		*"Test unit written"*) findings=$((findings + 1)) ;;
		esac
	done < <(taskset -c "$cpu" "$dir/$t" -dict="$dir/$t.dict" -max_len="$max_len" -timeout=10 \
		-entropic_feature_frequency_threshold=16 -max_total_time="$left" -print_final_stats=1 \
		-artifact_prefix="$corpus.findings/" "$corpus" "${seeds[@]}" 2>&1 || true)
	[ "$last" -gt 0 ] || { echo "$0: $t ran no input (see: $dir/$t -runs=1 $corpus)" >&2; exit 1; }
	base=$((base + last))
	echo "$(elapsed) $base" >>"$samples"
done
# exec/s between two samples: the first at or after A and the last at or before B
rate() {
	awk -v a="$1" -v b="$2" '$1 >= a && !f { t0 = $1; n0 = $2; f = 1 } $1 <= b { t1 = $1; n1 = $2 }
		END { if (f && t1 > t0) printf "%d", (n1 - n0) / (t1 - t0); else printf "-" }' "$samples"
}
end=$(tail -1 "$samples" | cut -d' ' -f1)
from=$(awk -v e="$end" -v w="$window" '$1 <= e - w { t = $1 } END { print t + 0 }' "$samples")
printf '%-32s minute-1 %6s exec/s  last %5.0f s %6s exec/s  findings %d  corpus %d  load %s\n' "$t" \
	"$(rate 45 75)" "$(awk -v e="$end" -v f="$from" 'BEGIN { print e - f }')" "$(rate "$from" "$end")" "$findings" \
	"$(ls "$corpus" | wc -l)" "$load"
