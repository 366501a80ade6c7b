#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Build steps that say what they build, how long the same step took last
time (build/.timings.json) and what is left after them, then record how long
they took. verify.py uses announce()/record(); ./faultline runs its builds
and ctest through the command line:

    python3 tools/verifylib/steps.py NAME "NEXT, STEPS" COMMAND...

runs COMMAND and exits with its status (a step that fails is not recorded).
No dependency beyond the standard library: it runs before anything is built."""
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _path(root):
    return os.path.join(root, "build", ".timings.json")


def load(root=ROOT):
    try:
        with open(_path(root)) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def record(name, seconds, root=ROOT):
    data = load(root)
    data[name] = round(seconds, 1)
    os.makedirs(os.path.dirname(_path(root)), exist_ok=True)
    tmp = _path(root) + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, _path(root))


def announce(name, left=(), root=ROOT):
    """'building X (last time 95 s; then: A ~30 s, B)': the line before a step."""
    known = load(root)
    last = f"last time {known[name]:.0f} s" if name in known else "no earlier timing here"
    then = ", ".join(f"{s} ~{known[s]:.0f} s" if s in known else s for s in left)
    return f"{name} ({last}{'; then: ' + then if then else ''})"


UP_TO_DATE = "up to date"  # a step that built nothing: its time is not "how long it took"


def outcome(rc, text):
    """(built, what) from a build's exit code and output: UP_TO_DATE when ninja had no work and
    fuzz/build.sh compiled and linked nothing, else the output's last line."""
    counts = re.findall(r"(\d+) objects compiled, (\d+) targets linked", text)
    idle = "no work to do" in text or (counts and all(c == ("0", "0") for c in counts))
    lines = text.strip().splitlines()
    return rc == 0, UP_TO_DATE if rc == 0 and idle else (lines[-1] if lines else "")


def build_preset(root, preset, targets, on_line=None):
    """Configures and builds a CMake preset's targets, passing each of ninja's
    "[N/M] ..." lines to on_line (what is building and what is left);
    returns (built, the last line of the output on failure)."""
    for argv in (["cmake", "--preset", preset], ["cmake", "--build", "--preset", preset, "--target"] + targets):
        p = subprocess.Popen(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             errors="replace")
        lines = []
        for line in p.stdout:
            lines.append(line)
            if on_line and line.startswith("["):
                on_line(f"{preset}: {line.rstrip()[:120]}")
        built, what = outcome(p.wait(), "".join(lines))
        if not built:
            return built, what
    return built, what


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: steps.py NAME 'NEXT, STEPS' COMMAND...\n")
        return 2
    name, left, cmd = argv[0], [s.strip() for s in argv[1].split(",") if s.strip()], argv[2:]
    sys.stderr.write(f"[faultline] {announce(name, left)}\n")
    t0 = time.monotonic()
    rc = subprocess.call(cmd)
    took = time.monotonic() - t0
    if rc == 0:
        record(name, took)
    sys.stderr.write(f"[faultline] {name}: {'done' if rc == 0 else f'FAILED (exit {rc})'} in {took:.0f} s\n")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
