#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Machines restored from the arena (check/workspace.h) against machines built
# for every run (FL_MACHINE_REUSE=0): the whole corpus under every
# configuration it allows must give the same traces and summary (random
# Programs: fl_tests --gtest_filter='MachineReuse.*').
# Usage: machine_reuse_test.sh [EMULATOR] CLI -- FILE...
set -u
# shellcheck source=tests/same_under_env.sh
. "$(dirname "$0")/same_under_env.sh"
for cmd in summary replay; do
	same_under_env "$cmd of the corpus: reused machines against new ones" FL_MACHINE_REUSE=0 violation cat \
		"${cli[@]}" "$cmd" "$@"
done
[ $fails -eq 0 ] && echo "machine reuse: same results as new machines"
exit $((fails > 0))
