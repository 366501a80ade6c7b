#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The whole table (faultline-prove exits 1 on a mismatched row or a
# counterexample that did not replay), written as scripts, and the shipped
# smt/queries/ is what it wrote: every query of the table (filter options
# after the directory narrow it; without them, a shipped script no longer
# generated is stale too), and no answer came from the wall-clock-guarded
# core. Models (.fl) are not compared.
# usage: check_sync.sh FAULTLINE-PROVE QUERIES-DIR [OPTIONS...]
set -u
prove=$1 shipped=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
summary=$("$prove" --emit "$tmp" "$@" | tail -1)
rc=${PIPESTATUS[0]}
echo "$summary"
[ "$rc" -eq 0 ] || exit 1
# every answer within Z3's rlimit: none may depend on the machine's speed
case $summary in
*"; 0 wall-clock-guarded tries") ;;
*) echo "check_sync: a row needed Z3's wall-clock-guarded core; its verdict may depend on the load" >&2; exit 1 ;;
esac
all=--all
for a in "$@"; do
	case $a in --patch | --arch | --page | --obligation | --assume) all= ;; esac
done
python3 "$(dirname "$0")/canon_smt2.py" "$tmp" "$shipped" $all
