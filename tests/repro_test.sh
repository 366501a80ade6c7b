#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultline repro on every corpus Program: generate (at level pre), build
# for x86_64 and i386 (in parallel), run the x86_64 ones
# on this kernel and check each prints the host executor's trace and exits
# 0 (repro_check). i386 binaries cannot execve on this host (no IA-32
# emulation): every reproducer is compiled for i386 with gcc's warnings as
# errors (-fsyntax-only: its diagnostics at -O0 are the front end's), one is
# built and linked there; `kernels repro` runs them in the i386 guest. Then the verdict is not blind: a
# repro generated for v2 of a Program on which v2 and pre differ must exit 1.
# Usage: repro_test.sh CLI REPRO_CHECK SOURCE_DIR WORK_DIR
set -u
cli=$1 check=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work/c" "$work/bin64" "$work/bin32"
# Relative paths and ccache: the generated files name the Program as given, so
# a second run (or another checkout) compiles nothing it has compiled before.
cd "$src" || exit 1
cc=gcc; command -v ccache >/dev/null && cc="ccache gcc"
# Arena Programs are refused (their kfuncs need a BPF program): array-map Programs only.
mapfile -t progs < <(tools/corpus_files.sh | xargs grep -L "^map .*type=arena")
start=$SECONDS
for f in "${progs[@]}"; do
	n=$(basename "${f%.fl}")
	"$cli" repro --level pre "$f" -o "$work/c/$n.c" || { echo "FAIL: repro $f"; exit 1; }
done
gen=$((SECONDS - start))
# Every reproducer is compiled for both widths, two jobs at a time, -O0 to
# keep it quick; the x86_64 ones (-c, so ccache can answer a second run) are
# linked to run here, the i386 ones only checked. The static link of every file for both widths
# is the same libc each time: one Program (10_fork, every kind of process
# op) is built the documented way, -O2 -static, for both widths, with
# warnings as errors, where gcc's format and flow analyses run.
for w in "" -m32; do
	$cc -O2 -static -Wall -Wextra -Werror $w -o "$work/warn$w" "$work/c/10_fork.c" || { echo "FAIL: gcc -O2 -static $w"; exit 1; }
done
for f in "$work"/c/*.c; do
	n=$(basename "${f%.c}")
	printf '%s\0%s\0%s\0' "$f" "$work/bin64/$n" ""
	printf '%s\0%s\0%s\0' "$f" "$work/bin32/$n" "-m32"
done | xargs -0 -n 3 -P "${REPRO_JOBS:-2}" sh -c "cc='$cc'"'
	if [ -z "$2" ]; then
		$cc -O0 -Wall -Wextra -Werror -c -o "$1.o" "$0" && gcc -o "$1" "$1.o" && rm "$1.o"
	else
		gcc -O0 -Wall -Wextra -Werror -m32 -fsyntax-only "$0" && touch "$1"
	fi || { echo "FAIL: gcc $2 $0"; exit 255; }' || exit 1
built=$((SECONDS - start - gen))
n64=$(ls "$work/bin64" | wc -l) n32=$(ls "$work/bin32" | wc -l)
# ELF class 1 (32-bit), machine 3 (EM_386): the one linked for i386
[ "$(od -An -tx1 -j4 -N1 "$work/warn-m32" | tr -d ' ')" = 01 ] && [ "$(od -An -tx1 -j18 -N1 "$work/warn-m32" | tr -d ' ')" = 03 ] ||
	{ echo "FAIL: $work/warn-m32 is not an i386 ELF"; exit 1; }
echo "repro: ${#progs[@]} Programs, generated in ${gen} s; built $n64 x86_64 and checked $n32 i386 reproducers in ${built} s"
[ "$n64" -eq ${#progs[@]} ] && [ "$n32" -eq ${#progs[@]} ] || exit 1
"$check" "$work/bin64" "${progs[@]}"
rc=$?
[ $rc -eq 0 ] || exit $rc
# Not blind: 11_dontneed_refault's stock kernel SIGBUSes where v2 refaults.
"$cli" repro --level v2 --arch 64 corpora/programs/11_dontneed_refault.fl -o "$work/v2.c" &&
	$cc -O0 -static -o "$work/v2" "$work/v2.c" || exit 1
out=$("$work/v2" 2>&1); rc=$?
if [ $rc -ne 1 ] || ! grep -q "DIFFERS from the port's (v2/arch64" <<<"$out"; then
	echo "FAIL: the v2 reproducer of 11_dontneed_refault exited $rc on a pre kernel:"; echo "$out" | tail -4
	exit 1
fi
echo "repro: the v2 reproducer of 11_dontneed_refault exits 1 here: $(grep DIFFERS <<<"$out")"
echo "repro: total ${SECONDS} s"
