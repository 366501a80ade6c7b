# SPDX-License-Identifier: GPL-2.0-only
"""faultline verify's interleaving explorer (faultline-cli interleave).

Three runs in its share of the budget: the historical concurrency levels
from scratch (test targets: each must be found, none decides a verdict),
then the fixed kernel, v2 and v3, both widths, anon and regular: half of
what is left over the concurrent Programs of corpora/interleavings/explore
(2-3 threads, every page size, Spectre-v1 masking) and the historical
Programs' ops, the time split evenly, and what is then left of the share to the swarm (generated
Programs, `interleave --swarm`, 4k pages). A finding on the fixed kernel is
evidence for its cell, with its replay file; every schedule explored is
counted per level, and the swarm's Programs and distinct schedules too.
The fixed kernel's walks and the swarm's Programs draw from verify's
--seed (the swarm's i-th of 8 cells from seed x 8 + i), so two verify runs of
different seeds search different Programs."""
import glob
import os
import re
import time

from .evidence import Evidence, cell_of, cells_of, program_ops
from .techniques import Result, run_logged

LINE = re.compile(r"^(\S+) (\w+)/arch(32|64)/\w+/(\w+)/\w+(?:/(\w+))?: \w+, (\d+) schedules: (\d+) distinct, "
                  r"(\d+) repeats.*\(bounded \d+: \d+ new(, exhausted)?.* "
                  r"([\d.]+) s, (\d+) schedules/s, max \d+ steps: (FINDING|no finding)$")
SWARM = re.compile(r"^swarm (\w+)/arch(32|64)/\w+/(\w+)/\w+ seed \d+: (\d+) programs \((\d+) exhausted\), "
                   r"(\d+) schedules \((\d+) distinct, (\d+) repeats.*, ([\d.]+) s, .*: (FINDING|no finding)$")
SWARM_FOUND = re.compile(r"^  program (\d+), found by (.*) at schedule (\d+): (violation \w+)")
FOUND = re.compile(r"^  found by (.*) at schedule (\d+) after ([\d.]+) s: (violation \w+)")
WRITTEN = re.compile(r"^  written to (\S+)$")
PATCHES, ARCHES, DOORS = "v2,v3", "32,64", "anon,regular"
MIN_RUN = 0.05  # seconds: the explorer's shortest useful run (about a thousand schedules)
CELLS = cells_of(PATCHES.split(","), ARCHES.split(","), DOORS.split(","))  # the fixed kernel's cells it decides


def cli(run):
    """The release faultline-cli when verify built it (several times faster), else the test build's."""
    for preset in ("release", "default"):
        path = run.tool("build", preset, "faultline-cli")
        if os.access(path, os.X_OK):
            return path
    return ""


def parse(text):
    """Rows per (file, config) and the findings, in output order."""
    rows = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            f, patch, arch, door, historic, n, distinct, repeats, exhausted, secs, rate, found = m.groups()
            rows.append({"file": f, "cell": cell_of(patch, arch, door), "historic": historic or "none",
                         "schedules": int(n), "distinct": int(distinct), "repeats": int(repeats),
                         "exhausted": bool(exhausted), "seconds": float(secs), "rate": int(rate), "finding": None})
            continue
        m = FOUND.match(line)
        if m and rows:
            rows[-1]["finding"] = {"strategy": m[1], "schedule": int(m[2]), "seconds": float(m[3]), "what": m[4]}
        m = WRITTEN.match(line)
        if m and rows and rows[-1]["finding"]:
            rows[-1]["finding"]["file"] = m[1]
    return rows


def parse_swarm(text):
    """Rows per configuration of `interleave --swarm`, with the finding and its file."""
    rows = []
    for line in text.splitlines():
        m = SWARM.match(line)
        if m:
            patch, arch, door, progs, exhausted, n, distinct, repeats, secs, _ = m.groups()
            rows.append({"cell": cell_of(patch, arch, door), "programs": int(progs), "exhausted": int(exhausted),
                         "schedules": int(n), "distinct": int(distinct), "repeats": int(repeats),
                         "seconds": float(secs), "finding": None})
            continue
        m = SWARM_FOUND.match(line)
        if m and rows:
            rows[-1]["finding"] = {"strategy": m[2], "schedule": int(m[3]), "what": m[4], "program": int(m[1])}
        m = WRITTEN.match(line)
        if m and rows and rows[-1]["finding"]:
            rows[-1]["finding"]["file"] = m[1]
    return rows


def run_interleave(run, seconds):
    binary = cli(run)
    if not binary:
        return Result("interleave", "skipped", "faultline-cli was not built")
    historic = sorted(glob.glob(os.path.join(run.root, "corpora", "interleavings", "*.fl")))
    explore = sorted(glob.glob(os.path.join(run.root, "corpora", "interleavings", "explore", "*.fl")))
    out = run.folder("interleave")
    t0 = time.monotonic()
    left = lambda: max(0.0, seconds - (time.monotonic() - t0))  # noqa: E731  (the share's wall time left)
    # 1. the historical levels from scratch (each well under a second)
    rc1, text1, log1 = run_logged(run, "interleave-historic", [binary, "interleave", "--quiet", "--seconds", "10"]
                                  + historic, seconds * 2)
    levels = parse(text1)
    # 2. the fixed kernel: the rest of the share, split over every (Program, configuration)
    files = explore + historic
    runs = len(explore) * 2 * 2 * 2 * 3 + len(historic)  # x 3 page sizes (spec_v1 mask only)
    # (each run costs its time and a few ms of start-up: the share's wall clock decides, not the runs' own)
    per = max(MIN_RUN, left() / 2 / runs)
    rc2, text2, log2 = run_logged(run, "interleave-explore",
                                  [binary, "interleave", "--quiet", "--historic", "none", "--seconds", f"{per:.2f}",
                                   "--seed", str(run.seed), "--patch", PATCHES, "--arch", ARCHES, "--door", DOORS,
                                   "--spec", "mask", "--out", out]
                                  + files,
                                  seconds * 2 + 60)
    fixed = parse(text2)
    # 3. the swarm: generated Programs, what is left, over the same cells at 4k pages
    per_swarm = max(MIN_RUN, left() / len(CELLS))
    rc3, text3, log3 = run_logged(run, "interleave-swarm",
                                  [binary, "interleave", "--swarm", "--quiet", "--historic", "none", "--seconds",
                                   f"{per_swarm:.2f}", "--seed", str(run.seed), "--patch", PATCHES, "--arch", ARCHES,
                                   "--door", DOORS, "--page", "4k", "--spec", "mask", "--out", out],
                                  per_swarm * len(CELLS) * 2 + 60)
    swarm = parse_swarm(text3)

    def evidence_of(r, seconds, detail):
        f = r["finding"]
        path = f.get("file", "")
        return Evidence("interleave", r["cell"], "violation", f["what"], seconds, run.rel(path) if path else "",
                        program_ops(path) if path else 0, detail=detail)

    evidence = [evidence_of(r, r["seconds"], f"swarm program {r['finding']['program']}, {r['finding']['strategy']}, "
                                             f"schedule {r['finding']['schedule']}")
                for r in swarm if r["finding"]]
    evidence += [evidence_of(r, r["finding"]["seconds"], f"{r['finding']['strategy']}, schedule "
                                                         f"{r['finding']['schedule']}, from {run.rel(r['file'])}")
                 for r in fixed if r["finding"]]
    per_level, distinct_per_level = {}, {}
    for r in fixed:
        patch = r["cell"].split("/")[0]
        per_level[patch] = per_level.get(patch, 0) + r["schedules"]
        distinct_per_level[patch] = distinct_per_level.get(patch, 0) + r["distinct"]
    missed = [os.path.basename(r["file"]) for r in levels if not r["finding"]]
    res = Result("interleave", "ran", evidence=evidence, log=run.rel(log2),
                 metrics={"historic": [{"file": run.rel(r["file"]), "level": r["historic"],
                                        "schedules": r["finding"]["schedule"] if r["finding"] else r["schedules"],
                                        "seconds": r["finding"]["seconds"] if r["finding"] else r["seconds"],
                                        "found": bool(r["finding"]),
                                        "strategy": r["finding"]["strategy"] if r["finding"] else ""}
                                       for r in levels],
                          "schedules_per_level": per_level, "schedules": sum(per_level.values()),
                          "distinct_per_level": distinct_per_level, "distinct": sum(distinct_per_level.values()),
                          "repeats": sum(r["repeats"] for r in fixed),
                          "exhausted": sum(r["exhausted"] for r in fixed),
                          "seconds_per_run": per, "runs": len(fixed),
                          "swarm": {"programs": sum(r["programs"] for r in swarm),
                                    "exhausted": sum(r["exhausted"] for r in swarm),
                                    "schedules": sum(r["schedules"] for r in swarm),
                                    "distinct": sum(r["distinct"] for r in swarm),
                                    "repeats": sum(r["repeats"] for r in swarm),
                                    "seconds_per_cell": per_swarm, "cells": len(swarm)},
                          "cells_checked": sorted({r["cell"] for r in fixed})})
    if not levels or not fixed or not swarm or rc1 not in (0, 1) or rc2 not in (0, 1) or rc3 not in (0, 1):
        res.status, res.reason = "failed", f"faultline-cli interleave exited {rc1}/{rc2}/{rc3} (see {run.rel(log1)})"
    elif "did not replay" in text1 + text2 or "faultline: swarm:" in text3:
        res.status, res.reason = "failed", "a finding's schedule did not replay (see the logs)"
    elif missed:
        res.status, res.reason = "failed", f"historical levels not found from scratch: {', '.join(missed)}"
    else:
        res.reason = (f"{len(levels)} historical levels found; fixed kernel: {res.metrics['schedules']} schedules, "
                      f"{res.metrics['distinct']} distinct "
                      f"({', '.join(f'{k} {v}' for k, v in sorted(distinct_per_level.items()))}), "
                      f"swarm: {res.metrics['swarm']['programs']} generated Programs, "
                      f"{res.metrics['swarm']['distinct']} distinct schedules; {len(evidence)} findings")
    return res


def add_sections(results, meta):
    """Schedules explored per level, the historical levels, and every finding with its replay file."""
    r = next((r for r in results if r.technique == "interleave" and r.status != "skipped"), None)
    if not r or "historic" not in r.metrics:
        return
    m = r.metrics
    md = ["## Interleavings (deterministic scheduler)", "",
          f"Fixed kernel, v2 and v3 x arch32/64 x anon/regular, 2-3 threads: {m['schedules']} schedules "
          f"in {m['runs']} runs of {m['seconds_per_run']:.2f} s, of which {m['distinct']} distinct (by trace hash; "
          + ", ".join(f"{k}: {v}" for k, v in sorted(m["distinct_per_level"].items()))
          + f") and {m['repeats']} repeats; the bounded search was exhausted in {m['exhausted']} of "
          f"{m['runs']} runs."
          + (f" The swarm: {m['swarm']['programs']} generated Programs ({m['swarm']['seconds_per_cell']:.1f} s per "
             f"cell, 4k pages), {m['swarm']['schedules']} schedules, {m['swarm']['distinct']} distinct, "
             f"{m['swarm']['repeats']} repeats; the bounded search was exhausted in {m['swarm']['exhausted']} "
             f"Programs." if "swarm" in m else ""), "",
          "| historical level | found | strategy | schedules to the finding | seconds |", "|---|---|---|---|---|"]
    md += [f"| {h['level']} | {'yes' if h['found'] else 'NO'} | {h['strategy']} | {h['schedules']} | "
           f"{h['seconds']:.3f} |" for h in m["historic"]]
    findings = [e for e in r.evidence if e.outcome == "violation"]
    md += ["", "Findings on the fixed kernel: " + (", ".join(f"{e.cell} {e.what} ({e.program}; replay with "
                                                           f"`./faultline interleave --replay {e.program}`)"
                                                           for e in findings) or "none") + "."]
    html = "".join(f"<p>{line}</p>" if not line.startswith("|") else "" for line in md[2:3])
    html += "<table><tr><th>historical level</th><th>found</th><th>strategy</th><th>schedules</th><th>s</th></tr>"
    html += "".join(f"<tr><td>{h['level']}</td><td>{'yes' if h['found'] else 'NO'}</td><td>{h['strategy']}</td>"
                    f"<td>{h['schedules']}</td><td>{h['seconds']:.3f}</td></tr>" for h in m["historic"])
    html += f"</table><p>{md[-1]}</p>"
    meta.setdefault("extra_md", []).append(md)
    meta.setdefault("extra_html", []).append(("Interleavings", html))
