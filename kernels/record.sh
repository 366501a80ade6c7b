#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultline kernels record [--kernel 6.12|6.1] [--only ARCH-KERNEL]...
#
# Refreshes corpora/kernel-traces/<6.12|6.1>/<arch>-<kernel>/ from real guests: every
# corpus Program on x86_64 and i386, stock (pre) and v2 (patches/v2.diff,
# the seed's kernel hunks), and v1 (patches/v1.diff) on i386, where v1's
# 32-bit wrap lives. The test suite then compares the port with these
# traces without building a kernel (kernels.recorded). Exit 1 if any guest
# trace disagreed with the port (the traces are written anyway).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
p=$KERNELS_DIR/patches
all=(x86_64-stock i386-stock x86_64-v2 i386-v2 i386-v1)
only=()
while [ $# -gt 0 ]; do
	case "$1" in
	--only) [ $# -ge 2 ] || kdie "--only needs one of: ${all[*]}"
		[[ " ${all[*]} " == *" $2 "* ]] || kdie "unknown kernel '$2' (one of: ${all[*]})"
		only+=("$2"); shift 2;;
	--kernel) [ $# -ge 2 ] || kdie "--kernel needs a value"; kernel_series "$2"; shift 2;;
	*) kdie "unknown record option '$1'";;
	esac
done
[ ${#only[@]} -gt 0 ] || only=("${all[@]}")
status=0
for k in "${only[@]}"; do
	arch=${k%-*} level=${k#*-}
	case "$level" in
	stock) args=() ;;
	*) args=(--patch "$p/$level.diff" --level "$level") ;;
	esac
	klog "recording $k"
	"$KERNELS_DIR/run.sh" --record --arch "$arch" "${args[@]}" || status=1
done
exit $status
