#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The layer rule (docs/architecture.md), as an include scan:
#  - the ground floor (src/base/) includes nothing of the project but itself;
#  - the port (src/kernel/) includes only itself and the ground floor: never
#    the machine (src/sim/) or anything above it.
# A quoted include counts as "itself" when it resolves inside the layer's own
# folder (relative to the file, to src/, or to src/kernel/include for the
# port); "base/..." is the ground floor, which the port may include.
# usage: layers.sh SOURCE_DIR      exit 0: the rule holds, 1: it does not, 2: bad input
set -u
src=${1:-}
[ -d "$src/src/base" ] && [ -d "$src/src/kernel" ] || { echo "layers: $src has no src/base and src/kernel" >&2; exit 2; }
cd "$src" || exit 2
bad=0 files=0
inside() {  # inside FILE INCLUDE LAYER-DIR SEARCH-DIR...: the include resolves under LAYER-DIR
	local f=$1 inc=$2 layer=$3 d p
	shift 3
	for d in "$(dirname "$f")" "$@"; do
		p=$(realpath -m "$d/$inc")
		[ -e "$p" ] && [[ "$p" == "$(realpath "$layer")"/* ]] && return 0
	done
	return 1
}
check() {  # check LAYER-DIR WHAT SEARCH-DIR...
	local layer=$1 what=$2 f inc
	shift 2
	while IFS= read -r f; do
		files=$((files + 1))
		while IFS= read -r inc; do
			[[ "$inc" == base/* ]] && [ -e "src/$inc" ] && continue
			inside "$f" "$inc" "$layer" "$@" && continue
			echo "$f: includes \"$inc\": $what"
			bad=$((bad + 1))
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done < <(find "$layer" -type f \( -name '*.h' -o -name '*.cpp' \) | sort)
}
check src/base "the ground floor includes only itself" src
check src/kernel "the port includes only itself and src/base/" src/kernel/include src
echo "layers: $files files, $bad includes break the layer rule"
[ "$bad" -eq 0 ]
