#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kernels/build.sh's cache logic on a tiny fake kernel tree (no real kernel is
# built): for each of the four builds {x86_64, i386} x {stock, series} after
# every set of the others, each patched kernel must contain the series and
# each stock kernel must not.
# It also shows that series_check catches the historical bug (a stock build
# dir copied into the patched tree after a later stock build: make rebuilds
# nothing), and that a stale cached build is rebuilt instead of reused.
# Usage: build_order_test.sh [KERNELS_DIR]
set -euo pipefail
kdir=$(readlink -f "${1:-$(dirname "$0")/..}")
work=${FL_TEST_KEEP:-$(mktemp -d)}
[ -n "${FL_TEST_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
fails=0 passes=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { passes=$((passes + 1)); }

# The fake tree: make -C TREE O=OUT ARCH=A tinyconfig|olddefconfig|bzImage.
# An "object" is its source and the headers it includes, plus the arch; the
# System.map lists every function defined in column 0 of the objects.
src=$work/linux-fake
mkdir -p "$src/include/linux" "$src/kernel/bpf" "$src/mm" "$src/scripts"
printf 'struct bpf_map_ops { int (*map_mmap)(void); };\n' >"$src/include/linux/bpf.h"
printf '#include <linux/bpf.h>\nint array_map_mmap(void)\n{\n\treturn remap_vmalloc_range();\n}\n' \
	>"$src/kernel/bpf/arraymap.c"
printf '#include <linux/bpf.h>\nint bpf_map_mmap(void)\n{\n\treturn 0;\n}\n' >"$src/kernel/bpf/syscall.c"
printf 'int handle_mm_fault(void)\n{\n\treturn 0;\n}\n' >"$src/mm/memory.c"
printf '#!/bin/sh\nexit 0\n' >"$src/scripts/config" && chmod +x "$src/scripts/config"
cat >"$src/Makefile" <<'EOF'
OBJS := $(O)/kernel/bpf/arraymap.o $(O)/kernel/bpf/syscall.o $(O)/mm/memory.o
tinyconfig:
	mkdir -p $(O) && echo "CONFIG_ARCH=$(ARCH)" >$(O)/.config
olddefconfig:
	touch $(O)/.config
$(O)/kernel/bpf/%.o: kernel/bpf/%.c include/linux/bpf.h
	mkdir -p $(@D) && cat $^ >$@ && echo "arch $(ARCH)" >>$@
$(O)/mm/%.o: mm/%.c
	mkdir -p $(@D) && cat $^ >$@ && echo "arch $(ARCH)" >>$@
$(O)/System.map: $(OBJS)
	sed -n 's/^[a-z].* \([a-z_]*\)(.*/0 T \1/p' $^ >$@
$(O)/arch/x86/boot/bzImage: $(OBJS) $(O)/System.map
	mkdir -p $(@D) && cat $(OBJS) >$@
bzImage: $(O)/arch/x86/boot/bzImage
EOF
tar cf "$work/linux-fake.tar" -C "$work" linux-fake
mkdir "$work/compat"

# The series: a new fault handler in arraymap.c and a new op in bpf.h.
cp -r "$src" "$work/a" && cp -r "$src" "$work/b"
printf 'struct bpf_map_ops { int (*map_mmap)(void); int (*map_mmap_fault)(void); };\n' >"$work/b/include/linux/bpf.h"
printf '#include <linux/bpf.h>\nint array_map_mmap(void)\n{\n\treturn 0;\n}\n\nstatic int array_map_mmap_fault(void)\n{\n\treturn vmf_insert_page();\n}\n' \
	>"$work/b/kernel/bpf/arraymap.c"
for f in include/linux/bpf.h kernel/bpf/arraymap.c; do
	echo "diff --git a/$f b/$f"
	diff -u --label "a/$f" --label "b/$f" "$work/a/$f" "$work/b/$f" || true
done >"$work/series.diff"

export FAULTLINE_KSRC_TARBALL=$work/linux-fake.tar FAULTLINE_KVERSION=0.0-fake FAULTLINE_KCOMPAT_DIR=$work/compat
build() {  # build CACHE ARCH stock|series: prints the bzImage path
	local args=(--arch "$2")
	[ "$3" = series ] && args+=(--patch "$work/series.diff")
	FAULTLINE_CACHE=$1 "$kdir/build.sh" "${args[@]}" 2>>"$1.log" | tail -1 || true
}
check_image() {  # check_image ORDER IMAGE ARCH stock|series
	local want=absent
	[ "$4" = series ] && want=present
	if [ ! -f "$2" ]; then fail "$1: $3 $4: no image"; return; fi
	local got=absent
	grep -q array_map_mmap_fault "$2" && got=present
	local arch_ok=1
	grep "arch " "$2" | grep -qv "arch $3" && arch_ok=0
	if [ $got = $want ] && [ $arch_ok = 1 ]; then pass; else fail "$1: $3 $4 kernel: series $got, want $want (arch ok: $arch_ok)"; fi
}

# Each build from every set of builds before it, each order from an empty
# cache: a build's cache state is the set of builds already in it, so the 12
# orders that start with each ordered pair (a, b) and go on with the other two
# (ascending after a < b, descending after a > b) run each of the four builds
# after each of the 8 sets of the other three (4 x 8 = 32 cases, 48 builds),
# which all 24 orders (96 builds, twice the time) covered no better.
builds=("x86_64 stock" "x86_64 series" "i386 stock" "i386 series")
n=0
declare -A seen=()
for a in 0 1 2 3; do
	for b in 0 1 2 3; do
		[ $a = $b ] && continue
		rest=() done="$a $b"
		for i in 0 1 2 3; do [ $i != $a ] && [ $i != $b ] && rest+=($i); done
		if [ $a -lt $b ]; then done+=" ${rest[0]} ${rest[1]}"; else done+=" ${rest[1]} ${rest[0]}"; fi
		cache=$work/cache-$n order="" before=""
		n=$((n + 1))
		for i in $done; do order+="${builds[$i]/ /-} "; seen["$i:$(tr ' ' '\n' <<<"$before" | sort | tr -d '\n')"]=1; before+=" $i"; done
		declare -A image=()
		for i in $done; do image[$i]=$(build "$cache" ${builds[$i]}); done
		for i in $done; do check_image "$order" "${image[$i]}" ${builds[$i]}; done
		echo "order: $order-> $( [ $fails = 0 ] && echo ok || echo "failing so far: $fails")"
	done
done
[ $n = 12 ] || fail "ran $n orders, not 12"
[ ${#seen[@]} = 32 ] || fail "covered ${#seen[@]} (build, builds before it) cases, not 32"

# series_check catches the historical bug: in the last cache, redo i386's
# patched build the old way (copy the stock build dir, no touch) after the
# stock one was rebuilt later, and make rebuilds nothing.
source "$kdir/series_check.sh"
cache=$work/cache-$((n - 1))/kernels/0.0-fake
stock=$(ls -d "$cache"/stock-*) tree=$(ls -d "$cache"/*-* | grep -v /stock- | head -1)
rm -rf "$stock/out-i386" && make -s -C "$stock" O=out-i386 ARCH=i386 bzImage
touch -d '1 minute ago' "$tree/kernel/bpf/arraymap.c" "$tree/include/linux/bpf.h"
touch "$stock/out-i386"/kernel/bpf/*.o
rm -rf "$tree/out-i386" && cp -a "$stock/out-i386" "$tree/out-i386"
make -s -C "$tree" O=out-i386 ARCH=i386 bzImage
if why=$(series_check "$tree" "$stock" out-i386 "$tree/faultline-series.diff"); then
	fail "series_check passed a stale build"
else
	pass
	echo "series_check on the stale build: $(echo "$why" | tr '\n' ';')"
fi
# ... and build.sh does not reuse it from the cache: it rebuilds it.
echo "kernel 0.0-fake arch i386 patch stale" >"$tree/out-i386/.faultline-built"
check_image stale-cache "$(build "$work/cache-$((n - 1))" i386 series)" i386 series
grep -q "does not contain the series, rebuilding" "$work/cache-$((n - 1)).log" && pass ||
	fail "build.sh did not say why it rebuilt the stale cached kernel"

echo "$passes passed, $fails failed"
[ $fails = 0 ]
