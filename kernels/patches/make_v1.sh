#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make_v1.sh SEED: rebuilds v2.diff and v1.diff from the v2 series mail
# (as posted to bpf-next: "[PATCH v2 bpf-next 0/2] bpf: Populate mmap-able
# array maps lazily").
#
#   v2.diff  the series' kernel hunks exactly as posted (prepare_series.py
#            drops the tools/ selftest files).
#   v1.diff  v2.diff without v2's u64 casts, i.e. the v1 posting as the v2
#            cover letter describes it ("v1 was the same but without the
#            (u64) casts"). Exactly three lines change, all in
#            kernel/bpf/arraymap.c's new code:
#              - the comment "use u64 math so the offset cannot overflow..." goes;
#              - array_map_mmap's bound: (u64)vma->vm_pgoff * PAGE_SIZE
#                becomes vma->vm_pgoff * PAGE_SIZE (unsigned long, wraps on
#                32-bit);
#              - array_map_mmap_fault's kaddr: ((u64)vmf->pgoff + pgoff)
#                becomes (vmf->pgoff + pgoff).
#            The pre-existing context line PAGE_ALIGN((u64)array->map.max_entries
#            * ...) is 6.1's own code and stays. The hunk header is adjusted
#            for the removed comment line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: make_v1.sh SEED" >&2; exit 2; }
python3 "$here/../prepare_series.py" "$here/v2.diff" "$1" 2>/dev/null
python3 - "$here/v2.diff" "$here/v1.diff" <<'PY'
import sys
src = open(sys.argv[1]).read().split("\n")
edits = {
    "+\t/* use u64 math so the offset cannot overflow on 32-bit archs */": None,
    "+\tif ((u64)vma->vm_pgoff * PAGE_SIZE + (vma->vm_end - vma->vm_start) >":
        "+\tif (vma->vm_pgoff * PAGE_SIZE + (vma->vm_end - vma->vm_start) >",
    "+\t\t(((u64)vmf->pgoff + pgoff) << PAGE_SHIFT);": "+\t\t((vmf->pgoff + pgoff) << PAGE_SHIFT);",
}
out, done = [], 0
for line in src:
    if line in edits:
        done += 1
        if edits[line] is None:
            continue
        line = edits[line]
    out.append(line)
if done != len(edits):
    sys.exit(f"make_v1: expected {len(edits)} edits, made {done}: the seed changed")
# One '+' line fewer in arraymap.c's first hunk.
hdr = "@@ -576,17 +576,51 @@ static int array_map_check_btf(struct bpf_map *map,"
assert out.count(hdr) == 1, "make_v1: arraymap.c hunk header changed"
out[out.index(hdr)] = hdr.replace("+576,51", "+576,50")
open(sys.argv[2], "w").write("\n".join(out))
PY
echo "wrote $here/v2.diff and $here/v1.diff" >&2
