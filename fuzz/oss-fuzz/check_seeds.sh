#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Checks an $OUT that fuzz/build.sh filled with libFuzzer binaries the way
# OSS-Fuzz/ClusterFuzz will use it: every configuration is an executable of
# its own name, with its .dict, .options and _seed_corpus.zip, runs the
# configuration its name says (fuzz/fuzz_config.h), and replays its seed
# corpus without a crash; the historical bug levels (written to be found:
# BUG_LEVELS) may stop at their bug. Exit 0: all did; 1: one did not; 2: bad
# usage; 77: no binaries in OUT (nothing built yet).
# Usage: check_seeds.sh OUT
set -u
out=${1:?usage: check_seeds.sh OUT}
[ -d "$out" ] || { echo "check_seeds.sh: no folder $out" >&2; exit 2; }
mapfile -t zips < <(ls "$out"/*_seed_corpus.zip 2>/dev/null)
[ ${#zips[@]} -gt 0 ] || { echo "no seed corpora in $out: build the targets first (fuzz/build.sh)"; exit 77; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fails=0
# levels that carry a known bug on purpose (src/base/config.h's Historic and
# ArenaFix, src/libarena's ret_overwrite and guard_leak): a seed may find it
BUG_LEVELS='-(toctou_2021|freeze_mutex_2025|finish_fault_put|fork_uaf|mremap_uaf|ret_overwrite|guard_leak)$'
for zip in "${zips[@]}"; do
	name=$(basename "$zip" _seed_corpus.zip) bin="$out/$(basename "$zip" _seed_corpus.zip)"
	problem=""
	for f in "$bin" "$bin.dict" "$bin.options"; do [ -e "$f" ] || problem+=" missing $(basename "$f");"; done
	rm -rf "$tmp/seeds" && mkdir "$tmp/seeds" && unzip -q "$zip" -d "$tmp/seeds"
	n=$(ls "$tmp/seeds" | wc -l)
	if [ -z "$problem" ]; then
		log=$(ASAN_OPTIONS=detect_leaks=0 "$bin" -runs=0 -artifact_prefix="$tmp/" "$tmp/seeds" 2>&1); rc=$?
		if [ $rc -ne 0 ] && ! { [[ $name =~ $BUG_LEVELS ]] && grep -q "faultline: verdict: violation" <<<"$log"; }; then
			problem+=" exit $rc on its seeds;"
		fi
		grep -q "configuration .* (from the name $name)" <<<"$log" || problem+=" did not read its name;"
		grep -qE "INITED .*|Done [0-9]+ runs|faultline: verdict: violation" <<<"$log" || problem+=" replayed nothing;"
	fi
	if [ -n "$problem" ]; then
		echo "FAIL $name:$problem"; fails=$((fails + 1))
		[ -n "${log:-}" ] && tail -5 <<<"$log"
	else
		echo "ok   $name: $n seeds $([ $rc -eq 0 ] && echo replayed || echo "replayed up to its known bug")" \
			"($(grep -o 'configuration [^ ]*' <<<"$log" | head -1))"
	fi
done
echo "${#zips[@]} configurations, $fails failed"
[ $fails -eq 0 ]
