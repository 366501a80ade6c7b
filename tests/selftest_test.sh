#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultline selftest on every corpus Program: generate (at level pre),
# compile against Debian's libbpf-dev with the test_progs shim
# (tests/selftest_shim/), link them into one runner, run it on this kernel
# (pre-patch): every test must pass. Multi-process Programs are refused by
# the generator (counted, not failed). Not blind: the v2 test of a Program
# on which v2 and pre differ must fail here.
# Usage: selftest_test.sh CLI SOURCE_DIR WORK_DIR. Exit 77 without bpf(2).
set -u
cli=$1 src=$2 work=$3
shim=$src/tests/selftest_shim
rm -rf "$work" && mkdir -p "$work/c"
[ -f /usr/include/bpf/bpf.h ] || { echo "skipped: libbpf-dev is not installed"; exit 77; }
start=$SECONDS
cd "$src" || exit 1
cc=gcc; command -v ccache >/dev/null && cc="ccache gcc"
# Arena Programs are refused (their kfuncs need a BPF program): array-map Programs only.
mapfile -t progs < <(tools/corpus_files.sh | xargs grep -L "^map .*type=arena")
: >"$work/tests.h"
refused=0
for f in "${progs[@]}"; do
	n=$(basename "${f%.fl}")
	if out=$("$cli" selftest --level pre "$f" -o "$work/c/$n.c" 2>&1); then
		fn=faultline_$(tr -c 'a-zA-Z0-9\n' _ <<<"$n" | tr A-Z a-z)
		echo "FL_TEST($fn)" >>"$work/tests.h"
	elif grep -q "one-process Programs only" <<<"$out"; then
		refused=$((refused + 1))
	else
		echo "FAIL: selftest $f: $out"; exit 1
	fi
done
gen=$((SECONDS - start))
n=$(wc -l <"$work/tests.h")
printf '%s\0' "$work"/c/*.c | xargs -0 -n 1 -P "${SELFTEST_JOBS:-2}" sh -c \
	"$cc"' -O0 -Wall -Wextra -Werror -I'"$shim"' -c -o "${0%.c}.o" "$0" || { echo "FAIL: gcc $0"; exit 255; }' || exit 1
gcc -O0 -Wall -Wextra -Werror -I"$shim" -DFL_SHIM_TESTS="\"$work/tests.h\"" -o "$work/test_progs" \
	"$shim/test_progs.c" "$work"/c/*.o -lbpf || { echo "FAIL: link"; exit 1; }
built=$((SECONDS - start - gen))
echo "selftest: ${#progs[@]} Programs: $n generated in ${gen} s ($refused multi-process refused), compiled and linked in ${built} s"
# bpf(2) available? The runner's first test would fail on every assert otherwise.
if ! "$cli" oracle --allow-skip tests/data/ok.fl | grep -q '^oracle:'; then
	echo "skipped: bpf(2) is not permitted here"; exit 77
fi
"$work/test_progs" >"$work/run.log" 2>&1; rc=$?
grep -E 'FAIL|Summary' "$work/run.log"
[ $rc -eq 0 ] || { echo "FAIL: generated selftests failed on this (pre) kernel"; tail -20 "$work/run.log"; exit 1; }
# Not blind: at v2, 11_dontneed_refault's pages refault after MADV_DONTNEED; pre's SIGBUS.
"$cli" selftest --level v2 corpora/programs/11_dontneed_refault.fl -o "$work/v2.c" || exit 1
echo "FL_TEST(faultline_11_dontneed_refault)" >"$work/v2.h"
gcc -O0 -I"$shim" -DFL_SHIM_TESTS="\"$work/v2.h\"" -o "$work/v2" "$shim/test_progs.c" "$work/v2.c" -lbpf || exit 1
out=$("$work/v2" 2>&1); rc=$?
if [ $rc -ne 1 ] || ! grep -q "FAIL" <<<"$out"; then
	echo "FAIL: the v2 selftest of 11_dontneed_refault passed on a pre kernel (rc $rc)"; exit 1
fi
echo "selftest: the v2 test of 11_dontneed_refault fails here, as it must: $(grep -m1 'actual' <<<"$out")"
echo "selftest: total ${SECONDS} s"
