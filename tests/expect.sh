# SPDX-License-Identifier: GPL-2.0-only
# Shared by the command-line contract tests (sourced): `expect RC PATTERN ARGS...`
# runs "${EXPECT_CMD[@]}" ARGS... and checks its exit code and that its output
# matches the extended regex; `one_line_error ARGS...` that the run prints
# exactly one line on stderr (bad input); `expect_done` prints the tally and
# fails if any failed.
fails=0 passes=0
expect() {
	local want=$1 pattern=$2; shift 2
	local out rc
	out=$("${EXPECT_CMD[@]}" "$@" 2>&1 </dev/null); rc=$?
	if [ "$rc" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
		echo "FAIL: $* -> rc $rc (want $want), output does not match /$pattern/:"
		grep -m3 -iE 'error|failed' <<<"$out"  # the cause, if it was printed early
		echo "$out" | tail -5
		fails=$((fails + 1))
	else
		passes=$((passes + 1))
	fi
}
one_line_error() {  # bad input: exactly one line on stderr
	local out
	out=$("${EXPECT_CMD[@]}" "$@" 2>&1 >/dev/null </dev/null | wc -l)
	[ "$out" -eq 1 ] && passes=$((passes + 1)) || { echo "FAIL: $* -> $out lines of error"; fails=$((fails + 1)); }
}
expect_done() {
	echo "$passes passed, $fails failed"
	[ "$fails" -eq 0 ]
}
