# SPDX-License-Identifier: GPL-2.0-only
# Shared paths and helpers for the kernels/ scripts (sourced, not run).
# Everything big lives outside the repository, in the cache folder.

KERNELS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KCACHE=${FAULTLINE_CACHE:-$HOME/.cache/faultline}/kernels
KERNEL_SERIES_KNOWN=(6.12 6.1)

klog() { printf '[kernels] %s\n' "$*" >&2; }
kdie() { printf '[kernels] %s\n' "$*" >&2; exit 2; }

# kernel_series 6.12|6.1: which Debian linux-source package the guests are
# built from (6.12, the default, or 6.1). Sets KSRC_PKG, the compat layer
# (compat/<series>/) and the fuzz the series is applied with; exported so the
# scripts run.sh and diff.sh call (build.sh) build the same kernel.
kernel_series() {
	[[ " ${KERNEL_SERIES_KNOWN[*]} " == *" $1 "* ]] || kdie "unknown --kernel '$1' (${KERNEL_SERIES_KNOWN[*]})"
	export FAULTLINE_KERNEL=$1
	KSRC_PKG=linux-source-$1
	KCOMPAT_DIR=$KERNELS_DIR/compat/$1
	# 6.1 only: the seed's bpf.h hunk has a trailing context line from 6.9+.
	KPATCH_FUZZ=0
	[ "$1" = 6.1 ] && KPATCH_FUZZ=1
	KERNEL_PACKAGES=("$KSRC_PKG" qemu-system-x86 bc bison flex libelf-dev libssl-dev cpio
		xz-utils gcc-multilib g++-multilib ccache make patch python3)
}
kernel_series "${FAULTLINE_KERNEL:-6.12}"

# The Debian version of the kernel source, e.g. 6.12.117-1~deb12u1 (it moves with
# security updates, so it names the cache folder and every recorded trace).
kernel_version() { echo "${FAULTLINE_KVERSION:-$(dpkg-query -W -f='${Version}' "$KSRC_PKG" 2>/dev/null)}"; }

check_arch() { case "$1" in x86_64|i386) ;; *) kdie "unknown --arch '$1' (x86_64, i386 or both)";; esac; }

# The option parsing run.sh, diff.sh and repro.sh share (they set the
# caller's arches, files and level):
# set_arches VALUE: --arch x86_64, i386 or both.
set_arches() { if [ "$1" = both ]; then arches=(x86_64 i386); else check_arch "$1"; arches=("$1"); fi; }
# corpus_programs: every corpus Program (tools/corpus_files.sh), absolute paths.
corpus_programs() {
	local root
	root=$(dirname "$KERNELS_DIR")
	mapfile -t files < <("$root/tools/corpus_files.sh" "$root")
	files=("${files[@]/#/$root/}")
}
# series_level: the level a kernel is compared at: pre for a stock kernel
# (no --patch), else --level, default v2.
series_level() {
	if [ ${#patches[@]} -eq 0 ]; then
		[ -z "$level" ] || [ "$level" = pre ] || kdie "a stock kernel is level pre (give --patch for $level)"
		level=pre
	else
		level=${level:-v2}
	fi
}

# boot_staged ARCH IMAGE RUNNER STAGE LOG BATCH LABEL: boots IMAGE with RUNNER
# as /init once per BATCH of STAGE/p's Programs (the console is the only way
# out of the guest) and writes the consoles, one after the other, to LOG.
boot_staged() {
	local arch=$1 image=$2 runner=$3 stage=$4 log=$5 batch=$6 label=$7 staged i b f start
	mapfile -t staged < <(cd "$stage/p" && ls)
	: >"$log"
	for ((i = 0; i < ${#staged[@]}; i += batch)); do
		b=$stage/batch-$i && mkdir -p "$b"
		for f in "${staged[@]:i:batch}"; do ln -sf "$stage/p/$f" "$b/$f"; done
		start=$(date +%s.%N)
		"$KERNELS_DIR/boot.sh" "$arch" "$image" "$runner" "$b" $((120 + batch)) >>"$log" ||
			klog "$arch: qemu exited with $? (batch $i)"
		klog "$label: booted and ran $(ls "$b" | wc -l) Programs in $(echo "$(date +%s.%N) - $start" | bc) s"
	done
}

# A host tool built in the default preset; prints its path. kernels_tool:
# kernels/tool/'s faultline-kernels; faultline_cli: the CLI (repro).
built_tool() {
	local root
	root=$(dirname "$KERNELS_DIR")
	(cd "$root" && cmake --preset default >/dev/null && cmake --build --preset default --target "$1" >/dev/null) ||
		kdie "could not build $1"
	echo "$root/build/default/$2"
}
kernels_tool() { built_tool faultline-kernels kernels/faultline-kernels; }
faultline_cli() { built_tool faultline-cli faultline-cli; }
