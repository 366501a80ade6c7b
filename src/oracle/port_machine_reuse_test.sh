#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# oracle::run_port on machines restored from the arena (check/workspace.h)
# against new machines (FL_MACHINE_REUSE=0): the oracle's random batch at
# fl_port_bench's configurations must give the same traces and scopes (the
# digests). The bench's times are dropped: they are printed, never judged.
# Usage: port_machine_reuse_test.sh BENCH -- COUNT SEED
set -u
# shellcheck source=tests/same_under_env.sh
. "$(dirname "$0")/../../tests/same_under_env.sh"
without_times() { sed -E 's/ in [0-9.]+ s: +[0-9]+ Programs\/s//'; }
same_under_env "the oracle's random batch on the port: reused machines against new ones" FL_MACHINE_REUSE=0 \
	digest without_times "${cli[@]}" "$@"
[ $fails -eq 0 ] && echo "oracle port side: same traces on reused machines as on new ones"
exit $((fails > 0))
