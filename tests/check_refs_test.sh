#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tools/check_refs.py on small trees: it fails on a missing page or anchor and
# on citations of notes outside the repository, passes a clean tree, and
# --fix rewrites an old "ref §N" citation into one that resolves.
# usage: check_refs_test.sh SOURCE_DIR
set -u
src=$1
source "$src/tests/expect.sh"
EXPECT_CMD=(python3 "$src/tools/check_refs.py")
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

mk() {  # mk NAME LINE: a tree with the project's docs/ and one source file
	rm -rf "$t/$1"; mkdir -p "$t/$1/src"
	cp -r "$src/docs" "$t/$1/"
	printf '%s\n' "$2" > "$t/$1/src/a.cpp"
}
mk ok '// see docs/mmap.md#do_mmap and docs/vma.md'
expect 0 ' 0 dangling' "$t/ok"
mk page '// see docs/nope.md'
expect 1 'src/a.cpp:1: no such file docs/nope.md' "$t/page"
mk anchor '// see docs/mmap.md#no-such-section'
expect 1 'no anchor #no-such-section in docs/mmap.md' "$t/anchor"
mk oldref '// ref §4.4: file_mmap_ok'
expect 1 'cites the old kernel notes' "$t/oldref"
mk shared '// from ../shared/reference/kernel-fault-path.md'
expect 1 'points at ../shared' "$t/shared"
mk fix '// ref §4.4, §8 item 2: file_mmap_ok'
expect 0 ' 0 dangling' --fix "$t/fix"
grep -q 'docs/mmap.md#do_mmap, docs/invariants.md#page-choice: file_mmap_ok' "$t/fix/src/a.cpp" ||
	{ echo "FAIL: --fix wrote: $(cat "$t/fix/src/a.cpp")"; fails=$((fails + 1)); }
expect 2 'no docs/ folder' "$t"
expect 2 'usage' --bogus
expect_done
