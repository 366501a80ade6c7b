# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the tests that compare a CLI's output with and without an
# environment switch (incremental_invariants_test.sh, machine_reuse_test.sh),
# with their arguments "[EMULATOR] CLI -- FILE...": afterwards cli holds
# the command (EMULATOR CLI), "$@" the files, and fails is 0.
cli=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do cli+=("$1"); shift; done
shift
fails=0
#
#   same_under_env WHAT VAR=VALUE TEETH FILTER CMD...
# runs CMD (its output through the shell function or command FILTER) with
# and without VAR=VALUE; counts a failure in $fails when the outputs differ
# or when the output lacks TEETH (a grep pattern: something was compared).
same_under_env() {
	local what=$1 setting=$2 teeth=$3 filter=$4
	shift 4
	local plain switched
	plain=$("$@" 2>&1 | $filter)
	switched=$(env "$setting" "$@" 2>&1 | $filter)
	if [ "$plain" != "$switched" ]; then
		echo "FAIL ($what): $setting changes the output:"
		diff <(echo "$switched") <(echo "$plain") | head -20
		fails=$((fails + 1))
	fi
	if ! grep -q "$teeth" <<<"$plain"; then
		echo "FAIL ($what): no '$teeth' in the output, nothing was compared"
		fails=$((fails + 1))
	fi
}
