#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Prints an .smt2 file with Z3's let-bound names (?x71, $x59), which depend
# on internal ids, renumbered by order of appearance.
import re
import sys

ids = {}
with open(sys.argv[1]) as f:
    sys.stdout.write(re.sub(r"[?$]x\d+", lambda m: m.group(0)[:2] + str(ids.setdefault(m.group(0), len(ids) + 1)),
                            f.read()))
