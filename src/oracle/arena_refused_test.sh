#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The oracle on a host that refuses BPF_MAP_TYPE_ARENA, forced with
# FL_HOST_REFUSE_ARENA (real/host_executor.h): arena Programs are skipped
# with the reason, never compared; a run of nothing else is a skip (exit 0
# with --allow-skip, 2 without); array-map Programs beside them are still
# compared, and a wrong port is still caught. Exit 77 without bpf(2).
# Usage: arena_refused_test.sh CLI NOT_BLIND SOURCE_DIR
set -u
cli=$1 not_blind=$2 src=$3
cd "$src" || exit 2
source tests/expect.sh
export FL_HOST_REFUSE_ARENA=1
if "$cli" oracle --allow-skip tests/data/ok.fl | grep -q '^skipped: '; then
	echo "skipped: bpf(2) is not permitted here"; exit 77
fi
EXPECT_CMD=("$cli" oracle)
refused='the host refuses BPF_MAP_TYPE_ARENA \(FL_HOST_REFUSE_ARENA is set\)'
# Only arena Programs: nothing to compare, a skip like bpf(2)'s.
expect 0 "^skipped: $refused\$" --allow-skip --arena --count 20 --seed 1
expect 2 "^skipped: $refused\$" --arena --count 20 --seed 1
expect 2 "^skipped: $refused\$" corpora/programs/arena_01_user_fault.fl
# Mixed: the arena ones counted as skipped, the reason once; the array ones compared.
expect 0 "^skipped: 2 arena Programs: $refused\$" corpora/programs/01_exact_fit.fl \
	corpora/programs/arena_01_user_fault.fl corpora/programs/arena_02_create_checks.fl
expect 0 '^oracle: 3 programs in [0-9.]+ s: 1 agree \(0 up to a documented difference\), 0 disagree, 0 unsupported, 0 errors, 2 skipped' \
	corpora/programs/01_exact_fit.fl corpora/programs/arena_01_user_fault.fl corpora/programs/arena_02_create_checks.fl
# Random array Programs beside arena files run as usual.
expect 0 ', 0 disagree, .*, 1 skipped \(seed 3\)' --count 10 --seed 3 corpora/programs/arena_01_user_fault.fl
# Not blind: a wrong port (oracle.not_blind's) still disagrees on array maps.
EXPECT_CMD=("$not_blind")
expect 0 '^caught the exact-fit mmap'
expect_done
