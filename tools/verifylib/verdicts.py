# SPDX-License-Identifier: GPL-2.0-only
"""From the techniques' evidence to one verdict per cell.

- anon, regular (front doors mmap(2) really has): `unsound` when any
  technique saw a violation there, else `sound` (if some technique looked).
- direct (any VMA reaches f_op->mmap, the contract of array_map_mmap()
  alone): `unsound` when a real door of the same level and width is
  unsound (direct admits every VMA they admit); else
  `assumption-dependent` when violations exist only here, naming the
  assumption that rules them out (the proofs say which); else `sound`.
- `unknown`: no technique produced evidence for the cell.
- `not run`: no technique that ran can decide the cell (`verify --only`):
  shown, never compared with the expectations.
- search only: a cell judged by none of EXHAUSTIVE (`verify --only props`,
  `--only fuzz`, ...): a search that found less than expected in its share
  has not decided the cell (not finding is not proving), so a verdict below
  the expectation is shown but not compared; one above it (a violation where
  none is expected) is a mismatch as always.
"""
from .evidence import CELLS

RESCUES = {
    "range": "vm_pgoff within what the syscall can pass (mmap(2): < 2^52 on 64-bit; mmap2: 32 bits)",
    "anon": "do_mmap's offset checks (pgoff wrap -> EOVERFLOW, file_mmap_ok)",
    "": "do_mmap's offset checks (the anon and regular doors refuse these VMAs)",
}
RANK = {"sound": 0, "assumption-dependent": 1, "unsound": 2, "unknown": -1}
NOT_RUN = "not run"
# The techniques whose silence decides a cell: the proofs cover every
# obligation, the corpus holds a Program for every expected violation. Every
# full run has both, so this changes nothing there.
EXHAUSTIVE = {"proofs", "corpus"}


def judged_cells(results, decides):
    """The cells the techniques that ran can decide: the union of
    decides[technique] over the results (a skipped technique decides none, a
    technique whose budget ran out before a cell names it in cells_not_run)."""
    return {c for r in results if r.status != "skipped" for c in decides.get(r.technique, [])
            if c not in r.metrics.get("cells_not_run", [])}


def search_only_cells(results, decides):
    """The judged cells that no EXHAUSTIVE technique that ran decides."""
    exhaustive = judged_cells([r for r in results if r.technique in EXHAUSTIVE], decides)
    return judged_cells(results, decides) - exhaustive


def decide(results, judged=CELLS, search_only=frozenset()):
    """One verdict per cell; a cell outside `judged` (and without a violation) is `not run`;
    a cell in `search_only` says so (differs() reads it)."""
    evidence = [e for r in results for e in r.evidence]
    cells = {c: {"cell": c, "violations": [], "proved": [], "checked": set()} for c in CELLS}
    for e in evidence:
        if e.cell not in cells:
            continue
        c = cells[e.cell]
        c["checked"].add(e.technique)
        if e.outcome == "violation":
            c["violations"].append(e)
        elif e.outcome == "proved":
            c["proved"].append(e.what)
    for r in results:  # techniques that ran clean still looked at their cells
        for cell in r.metrics.get("cells_checked", []):
            if cell in cells:
                cells[cell]["checked"].add(r.technique)

    out = {}
    for name in CELLS:
        c = cells[name]
        patch, arch, door = name.split("/")
        v = {"cell": name, "checked_by": sorted(c["checked"]), "proved": sorted(set(c["proved"])),
             "found_by": _found_by(c["violations"]), "smallest": _smallest(c["violations"]), "assumption": "",
             "search_only": name in search_only}
        if name not in judged and not c["violations"]:
            v["verdict"] = NOT_RUN
        elif not c["checked"]:
            v["verdict"] = "unknown"
        elif door != "direct":
            v["verdict"] = "unsound" if c["violations"] else "sound"
        else:
            real = [cells[f"{patch}/{arch}/{d}"]["violations"] for d in ("anon", "regular")]
            if any(real):
                v["verdict"] = "unsound"
            elif c["violations"]:
                v["verdict"] = "assumption-dependent"
                rescues = sorted({e.rescue for e in c["violations"] if e.technique == "proof"})
                v["assumption"] = RESCUES.get(rescues[0] if rescues else "", rescues[0] if rescues else "")
            else:
                v["verdict"] = "sound"
        out[name] = v
    for name, v in out.items():
        patch, arch, door = name.split("/")
        pre = out[f"pre/{arch}/{door}"]["verdict"]
        if patch == "pre" or {"unknown", NOT_RUN} & {pre, v["verdict"]}:
            v["vs_pre"] = ""
        else:
            d = RANK[v["verdict"]] - RANK[pre]
            v["vs_pre"] = "as safe as pre" if d == 0 else ("less safe than pre" if d > 0 else "safer than pre")
    return out


def _found_by(violations):
    """technique -> fastest finding (seconds, what) and how many."""
    by = {}
    for e in violations:
        b = by.setdefault(e.technique, {"seconds": e.seconds, "what": e.what, "count": 0, "detail": e.detail})
        b["count"] += 1
        if e.seconds < b["seconds"]:
            b.update(seconds=e.seconds, what=e.what, detail=e.detail)
    return by


def _smallest(violations):
    with_program = [e for e in violations if e.program]
    if not with_program:
        return None
    e = min(with_program, key=lambda e: (e.ops, len(e.program), e.program))
    return {"program": e.program, "ops": e.ops, "technique": e.technique, "what": e.what}


def load_expected(path):
    """'CELL VERDICT' per line; '#' comments."""
    want = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#")[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2 or parts[0] not in CELLS or parts[1] not in RANK:
                raise ValueError(f"{path}:{n}: expected 'CELL VERDICT', got '{line}'")
            want[parts[0]] = parts[1]
    return want


def differs(got, want, search_only=False):
    """A mismatch: an expectation that a judged cell does not meet (`not run` cells are not judged;
    a search-only cell whose search found less than expected is not decided)."""
    found_less = search_only and got in RANK and got != "unknown" and RANK[got] < RANK.get(want, -1)
    return bool(want) and got not in (want, NOT_RUN) and not found_less


def compare(verdicts, expected):
    """Cells whose verdict differs from the shipped expectation."""
    return [(c, expected[c], verdicts[c]["verdict"]) for c in CELLS
            if differs(verdicts[c]["verdict"], expected.get(c, ""), verdicts[c].get("search_only", False))]
