#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tests/layers.sh on copies of src/base and src/kernel: the real tree passes,
# and a planted include of the machine in the port, or of the port in the
# ground floor, fails with the file named.
# usage: layers_test.sh SOURCE_DIR
set -u
src=$1
source "$src/tests/expect.sh"
EXPECT_CMD=(bash "$src/tests/layers.sh")
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
copy() {
	rm -rf "$t/$1"; mkdir -p "$t/$1/src"
	cp -r "$src/src/base" "$src/src/kernel" "$t/$1/src/"
}
copy ok
expect 0 ' 0 includes break' "$t/ok"
copy port
sed -i '0,/#include "mm.h"/s//#include "mm.h"\n#include "sim\/machine.h"/' "$t/port/src/kernel/mm/memory.cpp"
expect 1 'src/kernel/mm/memory.cpp: includes "sim/machine.h"' "$t/port"
copy floor
echo '#include "../kernel/include/mm.h"' >> "$t/floor/src/base/config.h"
expect 1 'src/base/config.h: includes "../kernel/include/mm.h": the ground floor' "$t/floor"
copy up
echo '#include "../../../check/program.h"' >> "$t/up/src/kernel/kernel/bpf/arraymap.cpp"
expect 1 'arraymap.cpp: includes "../../../check/program.h"' "$t/up"
expect 2 'has no src/base' "$t"
expect_done
