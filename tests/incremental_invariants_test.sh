#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The incremental invariant walk against the whole one (FL_INVARIANTS_WHOLE=1):
# the same random Programs and corpus, at a level with the v1 defect and at a
# fixed one, must give the same reach report (ops, buckets, checks, and every
# violation by invariant), and the historic finish_fault_put level's races
# the same page_refcount violations. Usage: incremental_invariants_test.sh [EMULATOR] CLI -- FILE...
set -u
# shellcheck source=tests/same_under_env.sh
. "$(dirname "$0")/same_under_env.sh"
for filter in "--patch v1 --arch 32" "--patch v3 --arch 64"; do
	# shellcheck disable=SC2086
	inc=$("${cli[@]}" reach $filter --random 400 --seed 11 "$@" 2>&1)
	# shellcheck disable=SC2086
	whole=$(FL_INVARIANTS_WHOLE=1 "${cli[@]}" reach $filter --random 400 --seed 11 "$@" 2>&1)
	if [ "$inc" != "$whole" ]; then
		echo "FAIL ($filter): the incremental walk differs from the whole one:"
		diff <(echo "$whole") <(echo "$inc") | head -20
		fails=$((fails + 1))
	fi
	# teeth: the reports hold violations to compare (v1's wrap, the corpus's levels)
	if ! python3 -c 'import json,sys; sys.exit(0 if json.loads(sys.argv[1])["violations"] else 1)' "$inc"; then
		echo "FAIL ($filter): no violation in the report, nothing was compared"
		fails=$((fails + 1))
	fi
done
# The page part (page_refcount on the pages whose counts changed): only a
# race at the historic level finish_fault_put leaves a page's count wrong, so
# the Programs that carry it are replayed, and random schedules explored, in
# both walks (the figures of time stripped).
ffp=$(dirname "$0")/../corpora/interleavings
strip_times() { sed -E 's/[0-9.]+ s\b//g; s/[0-9]+ schedules\/s//g'; }
for args in "--replay $ffp/finish_fault_put.fl $ffp/findings/fuzz_finish_fault_put_refcount.fl" \
	"--historic finish_fault_put --strategy random --seed 11 --schedules 60 --keep-going --patch v2,v3 --page 4k --door anon --spec mask $ffp/explore/fault_vs_munmap.fl $ffp/finish_fault_put.fl"; do
	# shellcheck disable=SC2086
	same_under_env "interleave ${args%% *}: the incremental page check against the whole one" \
		FL_INVARIANTS_WHOLE=1 "violation page_refcount" strip_times "${cli[@]}" interleave $args
done
echo "$fails failed"
[ $fails -eq 0 ]
