# SPDX-License-Identifier: GPL-2.0-only
"""The one record every technique reports: what it saw on one cell.

A cell is patch level x width x front door ("v1/arch32/regular"), the grain
of the verdict table. Techniques run on finer configurations (page size,
Spectre-v1 masking); those fold into the cell.
"""
from dataclasses import asdict, dataclass, field

# The patch levels, oldest first: the one Python list (src/base/config.h kPatches is the C++ one);
# verify, the fuzz campaign and the props runner all take theirs from here.
PATCHES = ["pre", "v1", "v2", "v3"]
ARCHES = ["32", "64"]
DOORS = ["anon", "regular", "direct"]
CELLS = [f"{p}/arch{a}/{d}" for p in PATCHES for a in ARCHES for d in DOORS]


def cell_of(patch, arch, door):
    return f"{patch}/arch{str(arch).replace('arch', '')}/{door}"


def cells_of(patches, arches, doors):
    """The cells a technique covers when it runs these levels, widths and doors."""
    return [cell_of(p, a, d) for p in patches for a in arches for d in doors]


@dataclass
class Evidence:
    technique: str        # proof | props | libfuzzer | afl | corpus | oracle
    cell: str             # "v1/arch32/regular"
    outcome: str          # violation | proved | checked (ran, found nothing)
    what: str = ""        # "violation foreign_page", "obligation 1", ...
    seconds: float = 0.0  # time to the finding (or to the proof); -1: hand-written
    program: str = ""     # path of the counterexample Program, if any
    ops: int = 0          # its size, to pick the smallest
    rescue: str = ""      # proofs: the assumption that rules the counterexample out
    reachable: list = field(default_factory=list)  # fuzz: real doors the finding also breaks
    detail: str = ""

    def to_dict(self):
        return asdict(self)


def program_ops(path):
    """Number of op lines in a Program file (its size for 'smallest')."""
    skip = ("#", "map ", "expect", "arch ", "patch ", "page ", "door ", "spec_v1 ", "historic ", "at T")
    try:
        with open(path) as f:
            return sum(1 for line in f if line.strip() and not line.lstrip().startswith(skip))
    except OSError:
        return 0
