#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The shipped smt/queries/ is what `faultline-prove --emit` writes. Checks
# the rows given after the directory (default: the fast 32-bit soundness
# rows; the whole set takes minutes: run it with no filters by hand).
# usage: check_sync.sh FAULTLINE-PROVE QUERIES-DIR [FILTER-OPTIONS...]
set -u
prove=$1 shipped=$2
shift 2
[ $# -gt 0 ] || set -- --arch 32 --obligation 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prove" --emit "$tmp" "$@" >/dev/null
# Z3 names let-bound terms by internal ids that depend on what else was
# built first: compare with those names renumbered by appearance.
canon() { [ -f "$1" ] && python3 "$(dirname "$0")/canon_smt2.py" "$1"; }
n=0 stale=0
for f in "$tmp"/*.smt2; do  # the queries; models (.fl) may differ between runs
	n=$((n + 1))
	if ! cmp -s <(canon "$f") <(canon "$shipped/$(basename "$f")"); then
		echo "stale or missing: $(basename "$f")"
		stale=$((stale + 1))
	fi
done
echo "$n generated, $stale differ from $shipped"
[ "$n" -gt 0 ] && [ "$stale" -eq 0 ]
