#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every reference in the tree resolves inside the repository.

Checks every tracked (and untracked, not ignored) text file:
  - each `docs/PAGE.md` or `docs/PAGE.md#anchor` names a page that exists and,
    with an anchor, a heading (GitHub slug) or <a id="..."> on that page;
  - each relative Markdown link in a .md file points to an existing file/anchor;
  - nothing still cites the notes that lived outside the repository: "ref §N",
    "reference §N", a bare "§N", kernel-fault-path.md, qemu-kernels.md,
    toolchain.md (other than docs/toolchain.md), shared/reference, shared/seeds,
    ../shared, DESIGN.md.

  check_refs.py [SOURCE_DIR]          exit 0: all resolve, 1: dangling, 2: bad input
  check_refs.py --fix [SOURCE_DIR]    first rewrites the old "§N" citations of the
                                      kernel notes to their docs/ pages (LEGACY below),
                                      comment text only, then checks
"""
import os
import re
import subprocess
import sys

SELF = ("tools/check_refs.py", "tests/check_refs_test.sh")  # they spell the patterns out

# Where each section of the old kernel notes now lives.
LEGACY = {
    "1": "docs/arraymap.md",
    "1.1": "docs/arraymap.md#array_map_alloc_check",
    "1.2": "docs/arraymap.md#array_map_alloc",
    "1.3": "docs/arraymap.md#struct-bpf_array",
    "1.4": "docs/arraymap.md#kernel-side-addressing",
    "1.5": "docs/arraymap.md#array_map_direct_value_addr",
    "1.6": "docs/arraymap.md#array_map_mmap-pre",
    "1.7": "docs/arraymap.md#the-lazy-levels",
    "1.8": "docs/arraymap.md#lifetime",
    "2": "docs/bpf-syscall.md",
    "2.1": "docs/bpf-syscall.md#bpf_map_mmap",
    "2.2": "docs/bpf-syscall.md#vma-open-and-close",
    "2.3": "docs/bpf-syscall.md#the-write-active-count",
    "2.4": "docs/bpf-syscall.md#map_freeze",
    "2.5": "docs/bpf-syscall.md#bpf_map_area_mmapable_alloc",
    "2.6": "docs/bpf-syscall.md#the-map-file",
    "3": "docs/vmalloc.md",
    "3.1": "docs/vmalloc.md#remap_vmalloc_range",
    "3.2": "docs/vmalloc.md#vmalloc_to_page",
    "4.1": "docs/fault.md#vm_insert_page",
    "4.2": "docs/fault.md#fault-dispatch",
    "4.3": "docs/fault.md#finish_fault",
    "4.4": "docs/mmap.md#do_mmap",
    "4.5": "docs/mmap.md#map_populate",
    "4.6": "docs/fault.md#fault-around",
    "4.7": "docs/vma.md#fork",
    "4.8": "docs/vma.md#split-munmap-mprotect-mremap",
    "5": "docs/arena.md",
    "8": "docs/invariants.md#what-the-port-must-keep",
    "8 item 1": "docs/invariants.md#mmap-acceptance",
    "8 item 2": "docs/invariants.md#page-choice",
    "8 item 3": "docs/invariants.md#write-count",
    "8 item 4": "docs/invariants.md#refcounts",
    "8 item 5": "docs/differences.md#eager-and-lazy",
}
LEGACY_OTHER = {  # (notes, section) -> page
    ("qemu-kernels.md", "3"): "docs/real-kernels.md#what-the-guest-checks",
    ("qemu-kernels.md", "4"): "docs/real-kernels.md#the-series-on-61",
    ("qemu-kernels.md", "5"): "docs/real-kernels.md#timing",
    ("toolchain.md", "3"): "docs/toolchain.md#rapidcheck-for-i386",
    ("toolchain.md", "4"): "docs/toolchain.md#z3",
    ("toolchain.md", "7"): "docs/toolchain.md#bpf-arena-mmap",
}

DOC_REF = re.compile(r"(?<![\w/.-])(docs/[\w/.-]*?\.md)(#[\w-]+)?")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
STALE = [
    (re.compile(r"\b(?:ref|reference|Reference)\s+§"), "cites the old kernel notes (ref §N)"),
    (re.compile(r"\bReference \d+\.\d"), "cites the old kernel notes (Reference N.M)"),
    (re.compile(r"§\s*\d"), "a section number of notes outside the repository (§N)"),
    (re.compile(r"kernel-fault-path"), "cites kernel-fault-path.md (outside the repository)"),
    (re.compile(r"qemu-kernels"), "cites qemu-kernels.md (outside the repository)"),
    (re.compile(r"(?<!docs/)(?<![\w(\[-])toolchain\.md"), "cites toolchain.md (use docs/toolchain.md)"),
    (re.compile(r"shared/(?:reference|seeds)|\.\./shared\b|/work/shared"), "points at ../shared"),
    (re.compile(r"\bDESIGN\.md"), "cites DESIGN.md (outside the repository; see docs/architecture.md)"),
]
TEXT_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp", ".py", ".sh", ".md", ".txt", ".fl", ".cmake",
                 ".yaml", ".yml", ".json", ".dict", ".options", ".smt2", ".diff", ".patch", ""}


def files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout.split("\n")
        names = [n for n in out if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for d, subdirs, fs in os.walk(root):
            subdirs[:] = [s for s in subdirs if s not in (".git", "build", ".deps", "report")]
            names += [os.path.relpath(os.path.join(d, f), root) for f in fs]
    for n in sorted(set(names)):
        base = os.path.basename(n)
        suffix = os.path.splitext(base)[1]
        if n in SELF or n.startswith(("build/", ".deps/", "report/")):
            continue
        if suffix in TEXT_SUFFIXES or base in ("faultline", "expected", "run", "Dockerfile"):
            yield n


def slug(heading):
    h = re.sub(r"<[^>]+>", "", heading).strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        found, seen, fence = set(), {}, False
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("```"):
                    fence = not fence
                if fence:
                    continue
                for m in re.finditer(r"<a\s+(?:id|name)=\"([^\"]+)\"", line):
                    found.add(m.group(1))
                m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    s = slug(m.group(1))
                    n = seen.get(s, 0)
                    seen[s] = n + 1
                    found.add(s if n == 0 else f"{s}-{n}")
        _anchor_cache[path] = found
    return _anchor_cache[path]


def resolve(root, target, anchor):
    """None when target[#anchor] exists, else why not."""
    path = os.path.normpath(os.path.join(root, target))
    if not os.path.exists(path):
        return f"no such file {target}"
    if anchor and (not path.endswith(".md") or anchor not in anchors(path)):
        return f"no anchor #{anchor} in {target}"
    return None


def legacy_target(notes, sec):
    if notes and notes != "kernel-fault-path.md":
        return LEGACY_OTHER.get((notes, sec.split(".")[0]))
    return LEGACY.get(sec) or LEGACY.get(sec.split(".")[0])


def expand(a, b):
    """§4.2-§4.7 -> 4.2 4.3 ... 4.7 (same chapter only)."""
    if not b:
        return [a]
    ca, _, xa = a.partition(".")
    cb, _, xb = b.partition(".")
    if ca != cb or not xa or not xb:
        return [a, b]
    return [f"{ca}.{i}" for i in range(int(xa), int(xb) + 1)]


SEC = r"(\d+(?:\.\d+)?)"
OLD_CITE = re.compile(r"(?:(kernel-fault-path\.md|qemu-kernels\.md|toolchain\.md|[Rr]ef(?:erence)?)\s+)?"
                      r"§" + SEC + r"(?:\s*-\s*§?" + SEC + r")?( item \d)?")


def fix_line(line):
    notes = None  # which notes the current run of § cites: the last name seen on the line

    def rep(m):
        nonlocal notes
        if m.group(1) and m.group(1).endswith(".md"):
            notes = m.group(1)
        elif m.group(1):
            notes = "kernel-fault-path.md"
        targets, item = [], m.group(4) or ""
        for sec in expand(m.group(2), m.group(3)):
            t = legacy_target(notes, sec + item if sec == "8" else sec)
            if not t:
                return m.group(0)
            if t not in targets:
                targets.append(t)
        return ", ".join(targets) + ("" if m.group(2) == "8" else item)

    line = OLD_CITE.sub(rep, line)
    line = re.sub(r"(docs/[\w/.-]+?\.md#[\w-]+)/(?=docs/)", r"\1, ", line)  # §1.6/§1.7
    # "Reference 4.5, 4.6" in user-facing strings
    line = re.sub(r"Reference (\d\.\d)((?:, \d\.\d)*)",
                  lambda m: "See " + ", ".join(LEGACY[s] for s in [m.group(1)] + re.findall(r"\d\.\d", m.group(2))),
                  line)
    line = re.sub(r"qemu-kernels\.md (\d)\b", lambda m: LEGACY_OTHER[("qemu-kernels.md", m.group(1))], line)
    return line


def fix(root):
    changed = 0
    for name in files(root):
        path = os.path.join(root, name)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        new = "".join(fix_line(l) for l in text.splitlines(keepends=True))
        if new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            changed += 1
    print(f"check_refs: rewrote old citations in {changed} files")


def check(root):
    refs, bad = 0, []
    for name in files(root):
        path = os.path.join(root, name)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        fence = False
        for no, line in enumerate(lines, 1):
            where = f"{name}:{no}"
            for pat, why in STALE:
                if pat.search(line):
                    bad.append(f"{where}: {why}: {line.strip()[:100]}")
            for m in DOC_REF.finditer(line):
                refs += 1
                why = resolve(root, m.group(1), (m.group(2) or "#")[1:])
                if why:
                    bad.append(f"{where}: {why}")
            if name.endswith(".md"):
                if line.startswith("```"):
                    fence = not fence
                if fence:
                    continue
                for m in MD_LINK.finditer(line):
                    target = m.group(1)
                    if re.match(r"[a-z]+:", target):
                        continue
                    refs += 1
                    file_part, _, anchor = target.partition("#")
                    file_part = os.path.join(os.path.dirname(name), file_part) if file_part else name
                    why = resolve(root, file_part, anchor)
                    if why:
                        bad.append(f"{where}: link ({target}): {why}")
    for b in bad:
        print(b)
    print(f"check_refs: {refs} references, {len(bad)} dangling")
    return 1 if bad else 0


def main(argv):
    args = [a for a in argv if a != "--fix"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: check_refs.py [--fix] [SOURCE_DIR]", file=sys.stderr)
        return 2
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.path.isdir(os.path.join(root, "docs")):
        print(f"check_refs: {root} has no docs/ folder", file=sys.stderr)
        return 2
    if "--fix" in argv:
        fix(root)
    return check(root)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
