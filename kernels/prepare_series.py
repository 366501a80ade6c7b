#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn a user's patch series (mbox, `git format-patch` output or plain diffs)
into one unified diff that applies to Debian's linux-source-6.1.

Usage: prepare_series.py OUT.diff FILE...

What it does, and nothing else (the 6.1 compatibility layer, part 1):
  * extracts every `diff --git` file section, hunk by hunk (hunk sizes come
    from the @@ headers, so mail text around the diffs is ignored);
  * drops sections under tools/ (selftests and benchmarks: the guest kernel
    does not build them, and 6.1's tools/ lacks their context) and says so;
  * leaves the kernel hunks byte-for-byte as the author wrote them.
The API difference (vm_flags_set() is 6.3+) is bridged by compat/*.patch,
applied to every tree including stock, so the user's code is never rewritten.
Exit 2 with one line on stderr if a file holds no diff at all.
"""
import re
import sys

HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
HEADER_PREFIXES = ("index ", "new file mode", "deleted file mode", "old mode",
                   "new mode", "similarity index", "rename from", "rename to",
                   "--- ", "+++ ")


def sections(lines):
    """Yield (path, [lines]) for every file section of a diff or mbox."""
    i = 0
    while i < len(lines):
        if not lines[i].startswith("diff --git "):
            i += 1
            continue
        path = lines[i].split()[-1][2:]  # b/PATH
        out = [lines[i]]
        i += 1
        while i < len(lines) and lines[i].startswith(HEADER_PREFIXES):
            out.append(lines[i])
            i += 1
        while i < len(lines):
            m = HUNK.match(lines[i])
            if not m:
                break
            old = int(m.group(1) or 1)
            new = int(m.group(2) or 1)
            out.append(lines[i])
            i += 1
            while (old > 0 or new > 0) and i < len(lines):
                l = lines[i]
                out.append(l)
                i += 1
                if l.startswith("\\"):
                    continue
                if l.startswith("-"):
                    old -= 1
                elif l.startswith("+"):
                    new -= 1
                else:  # context (a blank line is context whose space was eaten)
                    old -= 1
                    new -= 1
            while i < len(lines) and lines[i].startswith("\\"):
                out.append(lines[i])
                i += 1
        yield path, out


def main(argv):
    if len(argv) < 3:
        print("usage: prepare_series.py OUT.diff FILE...", file=sys.stderr)
        return 2
    kept = []
    for name in argv[2:]:
        try:
            with open(name, encoding="utf-8", errors="surrogateescape") as f:
                lines = f.read().splitlines()
        except OSError as e:
            print(f"cannot read patch {name}: {e.strerror}", file=sys.stderr)
            return 2
        found = list(sections(lines))
        if not found:
            print(f"no diff found in {name}", file=sys.stderr)
            return 2
        for path, body in found:
            if path.startswith("tools/"):
                print(f"  skipped {path} (tools/ is not built for the guest)", file=sys.stderr)
                continue
            print(f"  kept    {path}", file=sys.stderr)
            kept.extend(body)
    with open(argv[1], "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("\n".join(kept) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
