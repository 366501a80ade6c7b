#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultline kernels repro [--kernel 6.12|6.1] [--arch x86_64|i386|both] [--patch FILE --level pre|v1|v2]
#                         [--count N] [--seed S] [FILE...]
#
# The C reproducers (`faultline repro`) of every corpus Program (or of FILE...,
# plus N random ones from seed S) run inside the real guest, beside the runner,
# in the same boot: each is built with gcc -static (-m32 -static on i386) and
# must print the runner's trace of its Program and exit 0 where that trace is
# the port's at the kernel's level (stock -> pre; a series -> --level, default
# v2), 1 where it is not (a documented difference). The i386 reproducers run
# here, since this host cannot execve i386 binaries. Programs `faultline
# repro` refuses (arena kfuncs, ...) are listed and skipped. Exit 1 on any
# reproducer that does not reproduce; 2 on bad input.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(dirname "$KERNELS_DIR")

arches=(x86_64 i386) patches=() level="" count=0 seed=1 files=()
while [ $# -gt 0 ]; do
	case "$1" in
	--arch) [ $# -ge 2 ] || kdie "--arch needs a value"; set_arches "$2"; shift 2;;
	--patch) [ $# -ge 2 ] && [ -r "$2" ] || kdie "--patch needs a readable series file"
		patches+=(--patch "$2"); shift 2;;
	--level) [ $# -ge 2 ] || kdie "--level needs a value"
		case "$2" in pre|v1|v2|v3) level=$2;; *) kdie "unknown --level '$2' (pre, v1, v2, v3)";; esac; shift 2;;
	--count|--seed) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || kdie "$1 needs a number"
		declare "${1#--}=$2"; shift 2;;
	--kernel) [ $# -ge 2 ] || kdie "--kernel needs a value"; kernel_series "$2"; shift 2;;
	-h|--help) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
	--*) kdie "unknown repro option '$1'";;
	*) [ -r "$1" ] || kdie "cannot read Program '$1'"; files+=("$1"); shift;;
	esac
done
series_level
[ ${#files[@]} -gt 0 ] || corpus_programs

tool=$(kernels_tool)
cli=$(faultline_cli)
cc=gcc; command -v ccache >/dev/null && cc="ccache gcc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for arch in "${arches[@]}"; do
	bits=64 m32=""; [ "$arch" = i386 ] && bits=32 m32=-m32
	image=$("$KERNELS_DIR/build.sh" --arch "$arch" "${patches[@]}" | tail -1)
	runner=$("$KERNELS_DIR/runner.sh" "$arch" "$root/build/kernels")
	stage=$work/$arch
	"$tool" stage --release "$FAULTLINE_KERNEL" --arch $bits --patch "$level" --out "$stage" --count "$count" \
		--seed "$seed" "${files[@]}" >&2
	mkdir -p "$stage/c"
	start=$SECONDS
	refused=0
	for f in "$stage"/p/*.fl; do
		n=$(basename "${f%.fl}")
		if ! why=$("$cli" repro --level "$level" --arch $bits "$f" -o "$stage/c/$n.c" 2>&1); then
			klog "$arch: no reproducer for $(grep -P "^$n.fl\t" "$stage/index.tsv" | cut -f3): ${why##*: }"
			refused=$((refused + 1))
		fi
	done
	# Static, as a reproducer is attached to a report: two compilers at a time.
	ls "$stage"/c/*.c | xargs -P 2 -I{} sh -c \
		'n=$(basename {} .c); nice -n 10 '"$cc"' -O2 -static '"$m32"' -o "'"$stage"'/p/$n.repro" {}' ||
		kdie "$arch: a reproducer did not build"
	klog "$arch: $(ls "$stage"/p/*.repro | wc -l) reproducers built ($refused refused) in $((SECONDS - start)) s"
	# One boot: a Program and its reproducer must share it.
	boot_staged "$arch" "$image" "$runner" "$stage" "$stage/console.log" "$(ls "$stage/p" | wc -l)" "$arch $level repro"
	"$tool" repro-compare "$stage" "$stage/console.log" || status=1
	[ -n "${FAULTLINE_KEEP_CONSOLE:-}" ] && cp "$stage/console.log" "$FAULTLINE_KEEP_CONSOLE.$arch"
done
exit $status
