#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Builds the fuzz targets, OSS-Fuzz style: honours $CXX, $CXXFLAGS,
# $LIB_FUZZING_ENGINE and $OUT (and $WORK for intermediates). Bare, it
# builds libFuzzer+ASan+UBSan binaries into build/fuzz/libfuzzer.
#
#   FL_FUZZ_TARGETS   which binaries, as "target:config" words (default: all;
#                     e.g. "program:v1/arch32/4k/direct bounds:v2/arch64")
#
# One name per configuration: program-<patch>-arch<NN>-<door>[-threads|-<historic>]
# (page 4k, spec mask) and bounds-<patch>-arch<NN> (door/page/spec come from the
# input); arena-pre-arch64-anon-<arena level> and buddy-<libarena level> (issue 14),
# built only when named in FL_FUZZ_TARGETS ("arena:pre/arch64/4k/anon/mask/fork_uaf",
# "buddy:ret_overwrite"). Each target is compiled and linked once; its
# configurations are hard links to that binary (a copy where $OUT is on another
# file system), and the binary reads its configuration from its name
# (fuzz/fuzz_config.h; FL_FUZZ_CONFIG in the environment overrides it).
#
#   FL_FUZZ_COVERAGE  "scoped" (default): coverage instrumentation only where
#                     fuzz/coverage.allowlist says (the port and the machine);
#                     "all": every file, as before. Sanitizers are everywhere.
set -euo pipefail
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
: "${CXX:=clang++-14}"
# UBSan without its alignment check, as OSS-Fuzz's UBSan builds: clang 14's
# trace-cmp instruments the check's "(address & (align - 1)) == 0" like a
# comparison of the program, one libFuzzer callback per pointer
# dereference in the port and the machine (a third of an execution, all of
# it noise to the fuzzer). ctest's ASan+UBSan and -m32 builds keep the
# check, and every corpus Program replays there.
: "${CXXFLAGS:=-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize=alignment -fno-sanitize-recover=all -fsanitize=fuzzer-no-link}"
: "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer}"
: "${OUT:=$SRC_DIR/build/fuzz/libfuzzer}"
: "${WORK:=$OUT/.work}"
JOBS=$(nproc)
: "${FL_FUZZ_COVERAGE:=scoped}"

all_targets() {
	for patch in pre v1 v2 v3; do
		for arch in 32 64; do
			for door in anon regular direct; do echo "program:$patch/arch$arch/4k/$door/mask"; done
			echo "bounds:$patch/arch$arch"
		done
	done
}
TARGETS=${FL_FUZZ_TARGETS:-$(all_targets)}

mkdir -p "$OUT" "$WORK"
# Coverage only where it guides the search (fuzz/coverage.allowlist): clang's
# sanitizer coverage takes the list as it is; AFL++'s pass reads it from
# AFL_LLVM_ALLOWLIST, where a fun: line would match every function.
if [ "$FL_FUZZ_COVERAGE" = scoped ]; then
	case "$(basename "$CXX")" in
	afl-*)
		grep -v '^fun:' "$SRC_DIR/fuzz/coverage.allowlist" >"$WORK/afl.allowlist"
		export AFL_LLVM_ALLOWLIST="$WORK/afl.allowlist" ;;
	*) CXXFLAGS="$CXXFLAGS -fsanitize-coverage-allowlist=$SRC_DIR/fuzz/coverage.allowlist" ;;
	esac
fi
# Objects are reused only if built with the same compiler, flags and list.
stamp="$CXX $CXXFLAGS ${AFL_LLVM_CMPLOG:-} ${AFL_LLVM_ALLOWLIST:+$(cksum <"$AFL_LLVM_ALLOWLIST")} $(cksum <"$SRC_DIR/fuzz/coverage.allowlist")"
if [ "$(cat "$WORK/flags" 2>/dev/null)" != "$stamp" ]; then
	rm -f "$WORK"/*.o "$WORK/libfaultline.a"
	printf '%s\n' "$stamp" >"$WORK/flags"
fi
# The interleaving scheduler's fibers: Boost.Context when installed (as the
# CMake build does), glibc ucontext otherwise.
FIBER_FLAGS="" FIBER_LIBS=""
if [ -f /usr/include/boost/context/detail/fcontext.hpp ] && ls /usr/lib/*/libboost_context.* >/dev/null 2>&1; then
	FIBER_FLAGS="-DFL_FIBER_BOOST" FIBER_LIBS="-lboost_context"
fi
# The library: the port twice (FL_BITS=32/64), the machine and the vocabulary.
compile() {  # compile SRC OBJ EXTRA_FLAGS...
	local src=$1 obj=$2; shift 2
	if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find "$SRC_DIR/src" -name '*.h' -newer "$obj" -print -quit)" ]; then
		$CXX $CXXFLAGS -std=c++20 -I"$SRC_DIR/src" "$@" -c "$src" -o "$obj"
	fi
}
export -f compile
touch "$WORK/.started"  # what is newer than this was compiled or linked by this run
export CXX CXXFLAGS SRC_DIR FIBER_FLAGS
{
	for bits in 32 64; do
		for f in $(cd "$SRC_DIR" && find src/kernel src/sim/arch -name '*.cpp'); do
			echo "$SRC_DIR/$f $WORK/k${bits}_$(echo "$f" | tr / _).o -DFL_BITS=$bits -I$SRC_DIR/src/kernel/include"
		done
	done
	for f in $(cd "$SRC_DIR" && ls src/base/*.cpp src/sim/*.cpp src/check/*.cpp src/check/interleave/*.cpp \
		src/base/sched/*.cpp src/libarena/*.cpp); do
		echo "$SRC_DIR/$f $WORK/$(echo "$f" | tr / _).o $FIBER_FLAGS"
	done
} | xargs -P "$JOBS" -L 1 bash -c 'compile "$@"' _
# Re-archive and re-link only what changed: a campaign calls this before
# every run, and relinking dozens of sanitizer binaries costs minutes.
if [ ! -f "$WORK/libfaultline.a" ] || [ -n "$(find "$WORK" -name '*.o' -newer "$WORK/libfaultline.a" -print -quit)" ]; then
	# into a temporary first: an archive cut short (verify stops a background
	# CmpLog build it no longer needs) must not look up to date next time
	rm -f "$WORK/libfaultline.a" "$WORK/libfaultline.a.tmp"
	ar rcs "$WORK/libfaultline.a.tmp" "$WORK"/*.o
	mv -f "$WORK/libfaultline.a.tmp" "$WORK/libfaultline.a"
fi

# One binary per target source (program, bounds, arena, buddy), relinked only
# when the library or a source changed: a campaign calls this before every run.
link_source() {  # link_source SOURCE
	local source=$1 bin="$WORK/$1-fuzzer"
	if [ -x "$bin" ] && [ -z "$(find "$WORK/libfaultline.a" "$SRC_DIR/fuzz" "$SRC_DIR/src" -newer "$bin" -print -quit)" ]; then
		return 0
	fi
	$CXX $CXXFLAGS -std=c++20 -I"$SRC_DIR/src" "$SRC_DIR/fuzz/${source}_fuzzer.cpp" "$WORK/libfaultline.a" \
		$FIBER_LIBS $LIB_FUZZING_ENGINE -o "$bin.tmp"
	mv -f "$bin.tmp" "$bin"
}
export -f link_source
export WORK OUT LIB_FUZZING_ENGINE FIBER_LIBS
for t in $TARGETS; do echo "${t%%:*}"; done | sort -u | xargs -P "$JOBS" -L 1 bash -c 'link_source "$@"' _

# Each configuration: the target's binary under the configuration's name, with
# its dictionary, options and seed corpus (what OSS-Fuzz looks for beside it).
name_target() {  # name_target TARGET CONFIG
	local target=$1 config=$2 name
	IFS=/ read -r patch arch page door spec level <<<"$config"
	name="$target-$patch-$arch${door:+-$door}${level:+-$level}"
	[ "$target" = buddy ] && name="buddy-$config"  # config = the libarena level
	ln -f "$WORK/$target-fuzzer" "$OUT/$name" 2>/dev/null || cp -f "$WORK/$target-fuzzer" "$OUT/$name"
	cp "$SRC_DIR/fuzz/$target.dict" "$OUT/$name.dict"
	sed "s/@TARGET@/$name/" "$SRC_DIR/fuzz/$target.options" >"$OUT/$name.options"
	if [ -d "$SRC_DIR/corpora/$target/seeds" ]; then
		rm -f "$OUT/${name}_seed_corpus.zip"
		(cd "$SRC_DIR/corpora/$target/seeds" && zip -q -j -r "$OUT/${name}_seed_corpus.zip" . 2>/dev/null || true)
	fi
	echo "$OUT/$name"
}
for t in $TARGETS; do name_target "${t%%:*}" "${t#*:}"; done
# The last line, for tools/fuzz_campaign.py's progress and timings.
echo "fuzz/build.sh: $(find "$WORK" -name '*.o' -newer "$WORK/.started" | wc -l) objects compiled," \
	"$(find "$WORK" -name '*-fuzzer' -newer "$WORK/.started" | wc -l) targets linked," \
	"$(wc -w <<<"$TARGETS") configurations named"
