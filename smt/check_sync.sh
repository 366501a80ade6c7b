#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The shipped smt/queries/ is what `faultline-prove --emit` writes: every
# query of the table (filter options after the directory narrow it; with
# none, a shipped script no longer generated is stale too). Models (.fl)
# may differ between runs and are not compared.
# usage: check_sync.sh FAULTLINE-PROVE QUERIES-DIR [FILTER-OPTIONS...]
set -u
prove=$1 shipped=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prove" --emit "$tmp" --emit-only "$@" >/dev/null || exit 1
python3 "$(dirname "$0")/canon_smt2.py" "$tmp" "$shipped" $([ $# -eq 0 ] && echo --all)
