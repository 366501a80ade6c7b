#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""faultline props [--patch P] [--arch 32|64] [--door D] [--tests N] [--seed S]

Runs the RapidCheck properties (build/default/props/fl_props) on the chosen
configurations with RC_PARAMS="seed=S max_success=N". RapidCheck's output is
passed through: its configuration line (the seed), each failure shrunk, and
the RC_PARAMS="reproduce=..." string. Failing counterexamples are written to
corpora/findings/ (the path is printed). Failures on configurations the issue
already names as broken are classified but still count here (strict mode).
Exit 0: all held; 1: a property failed; 2: bad options.

FL_PLANT=update_stride|update_u32|linear_index_u32 runs the test-only build/plant instead (a
planted slip in the port, to see the properties find it); its
counterexamples go to build/plant/findings/, not corpora/findings/.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLANT = os.environ.get("FL_PLANT", "")
BINARY = os.path.join(ROOT, "build", "plant" if PLANT else "default", "props", "fl_props")
sys.path.insert(0, os.path.join(ROOT, "tools"))
from verifylib.evidence import PATCHES  # noqa: E402 (the one list of levels)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"faultline props: {message}\n{__doc__.splitlines()[0]}\n")
        sys.exit(2)


def main():
    ap = Parser(prog="faultline props", add_help=True)
    ap.add_argument("--patch", choices=PATCHES)
    ap.add_argument("--arch", choices=["32", "64"])
    ap.add_argument("--door", choices=["anon", "regular", "direct"])
    ap.add_argument("--tests", type=int, default=100, help="max_success per property (default 100)")
    ap.add_argument("--seed", type=int, help="RapidCheck seed (default: random, printed)")
    a = ap.parse_args()
    if a.tests <= 0:
        ap.error("--tests must be a positive number")
    if not os.access(BINARY, os.X_OK):
        sys.stderr.write(f"faultline props: {BINARY} is missing (is librapidcheck-dev installed?)\n")
        return 2
    patches = [a.patch] if a.patch else PATCHES
    arches = [a.arch] if a.arch else ["32", "64"]
    door = a.door or "*"
    filt = ":".join(f"Props/*.*/{p}_arch{w}_{door}" for p in patches for w in arches)
    params = f"max_success={a.tests}"
    if a.seed is not None:
        params = f"seed={a.seed} " + params
    env = dict(os.environ, RC_PARAMS=params, FL_PROPS_STRICT="1")
    if PLANT:
        env.setdefault("FL_FINDINGS_DIR", os.path.join(ROOT, "build", "plant", "findings"))
        print(f"[faultline] FL_PLANT={PLANT}: build/plant, a planted slip (test-only)", file=sys.stderr, flush=True)
    print(f"[faultline] RC_PARAMS=\"{params}\" --gtest_filter={filt}", file=sys.stderr, flush=True)
    rc = subprocess.call([BINARY, f"--gtest_filter={filt}"], env=env)
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
