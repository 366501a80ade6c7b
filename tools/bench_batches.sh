#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The batches that decode or generate Programs outside the fuzzers, two
# builds side by side (e.g. build/default of two worktrees), alternating
# build by build so that both see the same machine load:
#  - RapidCheck's stateful model (fl_props Props/Model_.Stateful/*, every
#    configuration): cases/s, the same seed and number of cases on both;
#  - the port side of the oracle's random batch (fl_port_bench: oracle::run_port,
#    which `kernels compare` runs too): Programs/s per configuration.
# Prints figures only; the outputs' verdicts are compared by the tests
# (oracle.port_machine_reuse, the props), never the times.
#
#   tools/bench_batches.sh DIR_A DIR_B [CASES [PROGRAMS [SEED]]]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DIR_A DIR_B [CASES [PROGRAMS [SEED]]]" >&2; exit 2; }
a=$1 b=$2 cases=${3:-200} programs=${4:-3000} seed=${5:-1}
model() {  # DIR: "<cases>/s <seconds> s" over every configuration
	RC_PARAMS="seed=$seed max_success=$cases max_size=40" FL_PROPS_NO_EXPORT=1 \
		"$1/props/fl_props" --gtest_filter='Props/Model_.Stateful/*' 2>&1 |
		awk -v n="$cases" '/^\[       OK \] Props\/Model_/ { gsub(/[()]/, "", $(NF-1)); ms += $(NF-1); k++ }
			END { printf "%8.0f cases/s  (%d configurations x %d cases in %.2f s)", k * n / (ms / 1000), k, n, ms / 1000 }'
}
printf 'RapidCheck model, seed %s, %s cases per configuration\n' "$seed" "$cases"
for side in A B; do
	dir=$a; [ $side = B ] && dir=$b
	printf '  %s %s\n' "$side" "$(model "$dir")"
done
printf "oracle's random batch, port side (fl_port_bench %s %s)\n" "$programs" "$seed"
for side in A B; do
	dir=$a; [ $side = B ] && dir=$b
	"$dir/src/oracle/fl_port_bench" "$programs" "$seed" | sed "s/^/  $side /"
done
