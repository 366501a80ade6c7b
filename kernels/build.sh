#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultline kernels build [--kernel 6.12|6.1] [--arch x86_64|i386|both] [--patch FILE]...
#
# Builds Debian's linux-source-6.12 (or, with --kernel 6.1, linux-source-6.1)
# for the guest, stock or with a patch series, and prints the bzImage path of
# each requested arch on stdout.
# Cache: $FAULTLINE_CACHE/kernels/<debian version>/<key>/out-<arch>, where
# key is "stock" or the patch hash, each suffixed with a hash of the config
# and the compat layer. Trees for patched kernels are hard-linked copies of the
# stock tree (only the patched files are real copies), and their build dirs
# start as copies of the stock build dir, so a patched build is incremental.
# Whatever the order of the builds, the files the series writes are touched
# after that copy (so make rebuilds everything they reach), and every patched
# build, cached or new, must pass series_check (series_check.sh).
# Test-only overrides (tests/kernels_build_order_test.sh): FAULTLINE_KSRC_TARBALL,
# FAULTLINE_KVERSION, FAULTLINE_KCOMPAT_DIR.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$KERNELS_DIR/config.sh"
source "$KERNELS_DIR/series_check.sh"
arches=(x86_64)
patches=()
while [ $# -gt 0 ]; do
	case "$1" in
	--arch) [ $# -ge 2 ] || kdie "--arch needs a value"
		if [ "$2" = both ]; then arches=(x86_64 i386); else check_arch "$2"; arches=("$2"); fi
		shift 2;;
	--patch) [ $# -ge 2 ] || kdie "--patch needs a file"
		[ -r "$2" ] || kdie "cannot read patch file '$2'"
		patches+=("$(readlink -f "$2")"); shift 2;;
	--kernel) [ $# -ge 2 ] || kdie "--kernel needs a value"; kernel_series "$2"; shift 2;;
	*) kdie "unknown build option '$1'";;
	esac
done
tarball=${FAULTLINE_KSRC_TARBALL:-/usr/src/$KSRC_PKG.tar.xz}
compat=${FAULTLINE_KCOMPAT_DIR:-$KCOMPAT_DIR}

ver=$(kernel_version)
[ -n "$ver" ] || kdie "$KSRC_PKG is not installed"
base=$KCACHE/$ver
mkdir -p "$base"
export CCACHE_DIR=$KCACHE/ccache
MAKE=(nice -n 10 make -s CC="ccache gcc" HOSTCC="ccache gcc")

# Everything that changes the produced kernel, other than the patch itself
# (config.sh without its comment lines: editing a comment must not rebuild).
recipe_hash=$({ grep -v '^[[:space:]]*#' "$KERNELS_DIR/config.sh"; cat "$compat"/*.patch 2>/dev/null || true; } |
	sha256sum | cut -c1-8)

series=$base/series-$$.diff
trap 'rm -f "$series"' EXIT
key=stock
if [ ${#patches[@]} -gt 0 ]; then
	klog "series: ${patches[*]}"
	python3 "$KERNELS_DIR/prepare_series.py" "$series" "${patches[@]}" || exit 2
	key=$(sha256sum "$series" | cut -c1-12)
fi
stock=$base/stock-$recipe_hash
tree=$base/$key-$recipe_hash

# The pristine tree with the compat layer: unpacked once per Debian version.
if [ ! -f "$stock/.faultline-tree" ]; then
	klog "unpacking $tarball into $stock"
	rm -rf "$stock.tmp" && mkdir -p "$stock.tmp"
	tar xf "$tarball" -C "$stock.tmp" --strip-components=1
	for c in "$compat"/*.patch; do
		[ -f "$c" ] || continue
		klog "compat: $(basename "$c")"
		patch -d "$stock.tmp" -p1 -F0 -s --no-backup-if-mismatch <"$c"
	done
	touch "$stock.tmp/.faultline-tree"
	rm -rf "$stock" && mv "$stock.tmp" "$stock"
fi

if [ "$key" != stock ] && [ ! -f "$tree/.faultline-tree" ]; then
	klog "patched tree $tree (hard links to the stock tree)"
	rm -rf "$tree.tmp" && mkdir -p "$tree.tmp"
	for e in "$stock"/* "$stock"/.[!.]*; do
		case "$(basename "$e")" in out-*|.faultline-tree) continue;; esac
		cp -al "$e" "$tree.tmp/"
	done
	# Break the links of the files the series touches before patching them.
	grep '^+++ b/' "$series" | cut -c7- | while read -r f; do
		[ -e "$tree.tmp/$f" ] && cp --remove-destination "$stock/$f" "$tree.tmp/$f"
	done
	cp "$series" "$tree.tmp/faultline-series.diff"
	patch -d "$tree.tmp" -p1 -F"$KPATCH_FUZZ" --no-backup-if-mismatch <"$series" >&2 ||
		kdie "the series does not apply to $KSRC_PKG $ver (see above)"
	touch "$tree.tmp/.faultline-tree"
	rm -rf "$tree" && mv "$tree.tmp" "$tree"
fi

for arch in "${arches[@]}"; do
	out=out-$arch
	image=$tree/$out/arch/x86/boot/bzImage
	if [ -f "$tree/$out/.faultline-built" ]; then
		if [ "$key" = stock ] || why=$(series_check "$tree" "$stock" "$out" "$tree/faultline-series.diff"); then
			klog "$arch $key: cached ($(cat "$tree/$out/.faultline-built"))"
			echo "$image"
			continue
		fi
		klog "$arch $key: the cached build does not contain the series, rebuilding: $why"
	fi
	start=$SECONDS
	mode=cold
	rm -rf "${tree:?}/$out"
	if [ "$key" != stock ] && [ -f "$stock/$out/.faultline-built" ]; then
		cp -a "$stock/$out" "$tree/$out"
		rm -f "$tree/$out/.faultline-built"
		# The copied objects keep the stock build's mtimes, which are newer
		# than the patched sources when the stock build ran after the patched
		# tree was made: make the series' files the newest thing in the tree.
		(cd "$tree" && series_files faultline-series.diff | while read -r f; do [ ! -e "$f" ] || touch "$f"; done)
		mode=incremental
	else
		make_config "$tree" "$out" "$arch" "${MAKE[@]}"
	fi
	klog "building $arch $key ($mode) in $tree/$out"
	"${MAKE[@]}" -C "$tree" O="$out" ARCH="$arch" -j"$(nproc)" bzImage >"$tree/$out.log" 2>&1 ||
		{ tail -20 "$tree/$out.log" >&2; kdie "$arch $key build failed (log: $tree/$out.log)"; }
	if [ "$key" != stock ] && ! why=$(series_check "$tree" "$stock" "$out" "$tree/faultline-series.diff"); then
		printf '%s\n' "$why" >&2
		kdie "$arch $key: the build does not contain the series (above); not cached"
	fi
	echo "kernel $ver arch $arch patch $key built $mode in $((SECONDS - start)) s" >"$tree/$out/.faultline-built"
	klog "$(cat "$tree/$out/.faultline-built")"
	echo "$image"
done
