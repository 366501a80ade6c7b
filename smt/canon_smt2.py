#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Compares the .smt2 files of GENERATED with those of SHIPPED, with Z3's
# let-bound names (?x71, $x59), which depend on internal ids, renumbered by
# order of appearance. --all: a shipped file the generator no longer writes
# is stale too. Prints each stale file and a summary; exit 1 if any.
# usage: canon_smt2.py GENERATED SHIPPED [--all]
import os
import re
import sys


def canon(path):
    ids = {}
    with open(path) as f:
        return re.sub(r"[?$]x\d+", lambda m: m.group(0)[:2] + str(ids.setdefault(m.group(0), len(ids) + 1)),
                      f.read())


gen, shipped = sys.argv[1], sys.argv[2]
names = sorted(n for n in os.listdir(gen) if n.endswith(".smt2"))
stale = 0
for n in names:
    other = os.path.join(shipped, n)
    if not os.path.exists(other) or canon(os.path.join(gen, n)) != canon(other):
        print("stale or missing:", n)
        stale += 1
if "--all" in sys.argv[3:]:
    for n in sorted(os.listdir(shipped)):
        if n.endswith(".smt2") and n not in names:
            print("no longer generated:", n)
            stale += 1
print(f"{len(names)} generated, {stale} differ from {shipped}")
sys.exit(1 if stale or not names else 0)
