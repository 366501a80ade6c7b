#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultline kernels run [--kernel 6.12|6.1] [--arch x86_64|i386|both] [--patch FILE]... [--level pre|v1|v2]
#                       [--count N] [--seed S] [--batch N] [--record] [FILE...]
#
# Builds (or takes from the cache) the kernel, builds the static runner,
# stages the Programs (FILE..., else every corpus Program; plus N random
# ones from seed S), boots the guest once per batch, and compares every trace
# with the port at the matching level (stock -> pre; a series -> --level,
# default v2), width (i386 -> 32) and door anon. Exit 1 on any disagreement.
# --record also writes corpus Programs' guest traces to
# corpora/kernel-traces/<6.12|6.1>/<arch>-<stock|level>/ (what `kernels record` does).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(dirname "$KERNELS_DIR")

arches=(x86_64) patches=() level="" count=0 seed=1 batch=400 record=0 files=()
while [ $# -gt 0 ]; do
	case "$1" in
	--arch) [ $# -ge 2 ] || kdie "--arch needs a value"; set_arches "$2"; shift 2;;
	--patch) [ $# -ge 2 ] || kdie "--patch needs a file"; patches+=(--patch "$2"); shift 2;;
	--level) [ $# -ge 2 ] || kdie "--level needs a value"
		case "$2" in pre|v1|v2|v3) level=$2;; *) kdie "unknown --level '$2' (pre, v1, v2, v3)";; esac; shift 2;;
	--count|--seed|--batch) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || kdie "$1 needs a number"
		declare "${1#--}=$2"; shift 2;;
	--record) record=1; shift;;
	--kernel) [ $# -ge 2 ] || kdie "--kernel needs a value"; kernel_series "$2"; shift 2;;
	--*) kdie "unknown run option '$1'";;
	*) [ -r "$1" ] || kdie "cannot read Program '$1'"; files+=("$1"); shift;;
	esac
done
[ "$batch" -gt 0 ] || kdie "--batch must be positive"
series_level
kname=$level
[ ${#patches[@]} -gt 0 ] || kname=stock
if [ ${#files[@]} -eq 0 ] && [ "$count" -eq 0 ] || [ $record = 1 ]; then
	[ ${#files[@]} -eq 0 ] || kdie "--record takes no FILE (it records the corpus)"
	corpus_programs
fi
[ "$count" -gt 0 ] && klog "random Programs: --count $count --seed $seed"

tool=$(kernels_tool)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for arch in "${arches[@]}"; do
	bits=64; [ "$arch" = i386 ] && bits=32
	image=$("$KERNELS_DIR/build.sh" --arch "$arch" "${patches[@]}" | tail -1)
	runner=$("$KERNELS_DIR/runner.sh" "$arch" "$root/build/kernels")
	stage=$work/$arch
	"$tool" stage --release "$FAULTLINE_KERNEL" --arch $bits --patch "$level" --out "$stage" --count "$count" --seed "$seed" "${files[@]}" >&2
	boot_staged "$arch" "$image" "$runner" "$stage" "$stage/console.log" "$batch" "$arch $kname"
	rec=()
	if [ $record = 1 ]; then
		out=$root/corpora/kernel-traces/$FAULTLINE_KERNEL/$arch-$kname
		rm -rf "$out" && mkdir -p "$out"
		# The tree is <stock|patch sha256 prefix>-<config and compat hash>.
		tree=$(basename "${image%/out-*}")
		desc="$KSRC_PKG $(kernel_version) $arch, tree $tree"
		printf '# kernel: %s\n# arch: %s\n# level: %s\n' "$desc" $bits "$level" >"$out/KERNEL"
		rec=(--record "$out" --kernel "$desc")
	fi
	"$tool" compare --release "$FAULTLINE_KERNEL" "$stage" "$stage/console.log" "${rec[@]}" || status=1
	[ -n "${FAULTLINE_KEEP_CONSOLE:-}" ] && cp "$stage/console.log" "$FAULTLINE_KEEP_CONSOLE.$arch"
done
exit $status
