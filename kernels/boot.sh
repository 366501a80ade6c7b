#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# boot.sh ARCH BZIMAGE INIT [DIR] [TIMEOUT]
#
# Boots BZIMAGE under qemu-system-ARCH (TCG; this machine has no /dev/kvm)
# with an initramfs holding INIT as /init (a static binary) and, if given,
# DIR's files under /p (*.repro executable: kernels repro). The serial console goes to stdout. INIT must end by
# reboot(RB_AUTOBOOT) or by exiting (panic=-1): with -no-reboot either way
# makes qemu exit 0. There is no ACPI, so RB_POWER_OFF would only halt.
# Exit: qemu's status, 124 if TIMEOUT (default 600 s) ran out.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -ge 3 ] || kdie "usage: boot.sh ARCH BZIMAGE INIT [DIR] [TIMEOUT]"
arch=$1 image=$2 init=$3 dir=${4:-} limit=${5:-600}
check_arch "$arch"
[ -f "$image" ] || kdie "no kernel image '$image'"
[ -f "$init" ] || kdie "no init binary '$init'"
# The kernel's own gen_init_cpio builds the archive without root or mknod.
gen=$(dirname "$image")/../../../usr/gen_init_cpio
[ -x "$gen" ] || kdie "no gen_init_cpio next to '$image'"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
	echo "dir /dev 755 0 0"
	echo "nod /dev/console 600 0 0 c 5 1"
	echo "dir /proc 755 0 0"
	echo "dir /sys 755 0 0"
	echo "file /init $(readlink -f "$init") 755 0 0"
	if [ -n "$dir" ]; then
		echo "dir /p 755 0 0"
		for f in "$dir"/*; do
			mode=644
			case "$f" in *.repro) mode=755 ;; esac
			echo "file /p/$(basename "$f") $(readlink -f "$f") $mode 0 0"
		done
	fi
} >"$work/list"
"$gen" "$work/list" >"$work/initramfs.cpio"

# tsc_early_khz: under TCG the TSC cannot be calibrated and the clock would
# fall back to 4 ms jiffies; the host's TSC rate keeps guest time sane.
khz=$(awk -F': ' '/^cpu MHz/ {printf "%d", $2 * 1000; exit}' /proc/cpuinfo)
# norandmaps: no ASLR, so that stock and patched guests lay a process out
# the same way (whether a 2.8 GiB i386 mapping fits depended on mmap_base's
# random offset: kernels diff, random seed=7 i=1217, -EINVAL vs -ENOMEM).
# no_timer_check: a slow TCG boot (a loaded host) can fail the IO-APIC timer
# check and panic ("IO-APIC + timer doesn't work!"): seen on 1 boot of 5 at
# nice 19, which lost a batch of 400 Programs.
append="console=ttyS0 panic=-1 quiet norandmaps no_timer_check"
[ -n "$khz" ] && append+=" tsc_early_khz=$khz tsc=reliable"
mem=512
rc=0
timeout "$limit" "qemu-system-$arch" -accel tcg -kernel "$image" -initrd "$work/initramfs.cpio" \
	-append "$append" -nographic -no-reboot -m "$mem" </dev/null || rc=$?
exit $rc
