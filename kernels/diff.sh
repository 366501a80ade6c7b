#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultline kernels diff --patch FILE... [--kernel 6.12|6.1] [--arch x86_64|i386|both] [--count N] [--seed S]
#                        [--batch N] [FILE...]
#
# A series checked the day it is posted, before anyone ports it: the stock
# and the patched kernel (both from build.sh's cache, built if missing) run
# the same Programs (FILE..., else every corpus Program, findings included;
# plus N random ones from seed S) with the same static runner, and their
# traces are compared directly, no port level involved. Allowed: only the
# documented eager/lazy differences (kernels/tool/eager_lazy.h), each named
# when used. Exit 1 on any other difference, or if the patched guest did not
# get to a Program (a crash or a hang); 2 on bad input.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(dirname "$KERNELS_DIR")

arches=(x86_64 i386) patches=() count=0 seed=1 batch=400 files=()
while [ $# -gt 0 ]; do
	case "$1" in
	--arch) [ $# -ge 2 ] || kdie "--arch needs a value"; set_arches "$2"; shift 2;;
	--patch) [ $# -ge 2 ] && [ -r "$2" ] || kdie "--patch needs a readable series file"
		patches+=(--patch "$2"); shift 2;;
	--count|--seed|--batch) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || kdie "$1 needs a number"
		declare "${1#--}=$2"; shift 2;;
	--kernel) [ $# -ge 2 ] || kdie "--kernel needs a value"; kernel_series "$2"; shift 2;;
	-h|--help) sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
	--*) kdie "unknown diff option '$1'";;
	*) [ -r "$1" ] || kdie "cannot read Program '$1'"; files+=("$1"); shift;;
	esac
done
[ ${#patches[@]} -gt 0 ] || kdie "diff needs --patch SERIES (the stock kernel is the other side)"
[ "$batch" -gt 0 ] || kdie "--batch must be positive"
[ ${#files[@]} -gt 0 ] || corpus_programs
klog "kernels diff on $KSRC_PKG: ${#files[@]} Program files + $count random (--seed $seed)"

tool=$(kernels_tool)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for arch in "${arches[@]}"; do
	bits=64; [ "$arch" = i386 ] && bits=32
	stock=$("$KERNELS_DIR/build.sh" --arch "$arch" | tail -1)
	patched=$("$KERNELS_DIR/build.sh" --arch "$arch" "${patches[@]}" | tail -1)
	runner=$("$KERNELS_DIR/runner.sh" "$arch" "$root/build/kernels")
	stage=$work/$arch
	"$tool" stage --release "$FAULTLINE_KERNEL" --arch $bits --patch any --out "$stage" --count "$count" --seed "$seed" "${files[@]}" >&2
	boot_staged "$arch" "$stock" "$runner" "$stage" "$stage/stock.log" "$batch" "$arch stock"
	boot_staged "$arch" "$patched" "$runner" "$stage" "$stage/patched.log" "$batch" "$arch patched"
	klog "$arch: stock $(basename "${stock%/out-*}") vs patched $(basename "${patched%/out-*}")"
	"$tool" diff "$stage" "$stage/stock.log" "$stage/patched.log" || status=1
	[ -n "${FAULTLINE_KEEP_CONSOLE:-}" ] && cp "$stage/stock.log" "$FAULTLINE_KEEP_CONSOLE.$arch.stock" &&
		cp "$stage/patched.log" "$FAULTLINE_KEEP_CONSOLE.$arch.patched"
done
exit $status
