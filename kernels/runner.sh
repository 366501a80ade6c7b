#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# runner.sh ARCH OUTDIR: builds the static guest runner (kernels/guest/runner.cpp
# plus the host-kernel executor and the Program/Trace vocabulary it needs)
# for ARCH (x86_64: -static; i386: -m32 -static, libs from g++-multilib)
# and prints its path. Rebuilt only when a source is newer than the binary.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ $# -eq 2 ] || kdie "usage: runner.sh ARCH OUTDIR"
arch=$1 out=$2
check_arch "$arch"
root=$(dirname "$KERNELS_DIR")
# src/real (the host-kernel executor) and the vocabulary it links (CMake's fl_vocab).
srcs=("$KERNELS_DIR/guest/runner.cpp" "$root"/src/real/*.cpp
	"$root"/src/check/{program,program_text,program_binary,trace,trace_text}.cpp
	"$root"/src/base/{config,invariants}.cpp)
for s in "${srcs[@]}"; do [ -f "$s" ] || kdie "missing runner source $s"; done
bin=$out/runner-$arch
flags=(-std=c++20 -O2 -static -I"$root/src" -Wall -Wextra -Wno-missing-field-initializers)
[ "$arch" = i386 ] && flags+=(-m32)
mkdir -p "$out"
stale=0
[ -x "$bin" ] || stale=1
for s in "${srcs[@]}" "$root"/src/check/*.h "$root"/src/real/*.h; do [ "$s" -nt "$bin" ] && stale=1; done
if [ $stale = 1 ]; then
	klog "building the static guest runner for $arch"
	nice -n 10 g++ "${flags[@]}" -o "$bin" "${srcs[@]}" >&2
fi
echo "$bin"
