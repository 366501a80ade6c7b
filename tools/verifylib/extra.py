# SPDX-License-Identifier: GPL-2.0-only
"""faultline verify's host-kernel oracle and bench (which need privileges and
skip cleanly without), and the release build of the tools they and the proofs use."""
import json
import os
import re

from . import steps
from .techniques import Result, run_logged, corpus_files

BENCH = ("build", "release", "src", "real", "bench", "faultline-bench")
# the matrix in timed points of (warmup + duration): it took 32 s at -d 0.4 -w 0.1 here (verify
# --budget 300 at e90c56a; 96 points ran, the model's are quicker than the real backends')
BENCH_POINTS, BENCH_WARMUP = 64, 0.1
ORACLE_CELLS = ["pre/arch64/anon"]  # the host kernel's level, width and door: the one cell the oracle decides


ORACLE_LINE = re.compile(r"^oracle: (\d+) programs in ([\d.]+) s: (\d+) agree \((\d+) up to a documented "
                         r"difference\), (\d+) disagree, (\d+) unsupported, (\d+) errors(?:, (\d+) skipped)?")


def run_oracle(run, seconds):
    """The host kernel (pre, 64-bit, anon door) against the port: every corpus
    Program plus a seeded random batch. A disagreement is a port bug (or an
    undocumented host difference): it fails verify, whatever the verdicts."""
    count = 500 if run.quick else 3000
    files = corpus_files(run.root)
    # --time: the random batch stops when its share is up (under load 3000
    # Programs outran four times the share and were killed)
    rc, text, log = run_logged(run, "oracle", [run.tool("build", "default", "faultline-cli"), "oracle",
                                                "--allow-skip", "--count", str(count), "--seed", str(run.seed),
                                                "--time", str(max(1, int(seconds)))]
                                + files, seconds * 4)
    m = next((ORACLE_LINE.match(line) for line in text.splitlines() if ORACLE_LINE.match(line)), None)
    # "skipped: REASON" alone: nothing ran (no bpf(2)); "skipped: N arena Programs: REASON" beside the
    # summary: those were not compared (a host that refuses arena maps), the rest were
    skipped = re.findall(r"^skipped: (.*)$", text, re.M)
    if skipped and not m:
        return Result("oracle", "skipped", skipped[0], log=run.rel(log))
    if not m or rc not in (0, 1):
        return Result("oracle", "failed", f"faultline-cli oracle exited {rc}", log=run.rel(log))
    n, secs, agree, documented, disagree, unsupported, errors, not_run = m.groups()
    res = Result("oracle", "ran", log=run.rel(log),
                 metrics={"programs": int(n), "random": int(n) - len(files), "agree": int(agree), "documented": int(documented),
                          "disagree": int(disagree), "unsupported": int(unsupported), "errors": int(errors),
                          "skipped": int(not_run or 0),
                          "seconds": float(secs), "cells_checked": ORACLE_CELLS})
    if int(disagree) or int(errors):
        res.status, res.reason = "failed", f"{disagree} Programs disagree with the host kernel, {errors} errors"
    else:
        res.reason = (f"{agree}/{n} Programs agree with the host kernel ({documented} up to a documented "
                      f"difference, {unsupported} unsupported)" + "".join(f"; skipped: {s}" for s in skipped))
    return res


def build_release(run, targets):
    """Setup, outside the budget: tools in the optimised build (sanitizers
    would distort the bench's timings and triple the Z3 table's time)."""
    return steps.build_preset(run.root, "release", targets, run.progress.update)


def run_bench(run, seconds):
    """A short matrix: one producer, 1/8/64 MiB, the four access patterns,
    every backend (real ones skip themselves without privileges)."""
    binary = run.tool(*BENCH)
    if not os.access(binary, os.X_OK):
        return Result("bench", "skipped", "faultline-bench was not built")
    out = run.out("bench", "matrix.json")
    # a duration that fits
    # the share (0.4 s at most: the default run's 30 s), 0.05 s at least (one op of the slowest point)
    duration = min(0.2 if run.quick else 0.4, max(0.05, 0.9 * seconds / BENCH_POINTS - BENCH_WARMUP))
    rc, text, log = run_logged(run, "bench", [binary, "--matrix", "-d", f"{duration:.2f}", "-w", str(BENCH_WARMUP),
                                               "--threads", "1",
                                               "--out", os.path.dirname(out)], seconds * 4,
                                on_line=lambda line: run.progress.update(line[:100]))
    if rc != 0 or not os.path.exists(out):
        return Result("bench", "failed", f"faultline-bench exited {rc}", log=run.rel(log))
    with open(out) as f:
        points = json.load(f)["points"]
    skipped = sorted({p["backend"] + ": " + p.get("reason", "skipped") for p in points if p["status"] != "ok"})
    return Result("bench", "ran", "; ".join(skipped)[:300], log=run.rel(log),
                  metrics={"points": points, "svgs": sorted(f for f in os.listdir(os.path.dirname(out))
                                                            if f.endswith(".svg"))})


def add_sections(results, meta, plots):
    """The bench's plots and cost tables, when it ran."""
    bench = next((r for r in results if r.technique == "bench" and r.status == "ran"), None)
    if not bench:
        return
    svgs = []
    for name in bench.metrics["svgs"]:
        with open(os.path.join(meta["report_dir"], "bench", name)) as f:
            svgs.append(f.read())
    plots.append(("Cost: mmap+munmap latency against map size (log-log, one producer)", svgs))
    points = bench.metrics["points"]
    timed = [p for p in points if p["backend"] != "model" and p["status"] == "ok"]
    sizes = sorted({p["map_bytes"] for p in timed})
    rows = ["<table><tr><th>backend</th><th>pattern</th>" +
            "".join(f"<th>{s >> 20} MiB (µs)</th>" for s in sizes) + "<th>64/1 MiB</th></tr>"]
    md = ["## Cost (bench, one producer, µs per op)", "",
          "| backend | pattern | " + " | ".join(f"{s >> 20} MiB" for s in sizes) + " |",
          "|---|---|" + "---|" * len(sizes)]
    for backend in dict.fromkeys(p["backend"] for p in timed):
        for pattern in dict.fromkeys(p["pattern"] for p in timed):
            lat = {p["map_bytes"]: p["latency_ns"] / 1000 for p in timed
                   if p["backend"] == backend and p["pattern"] == pattern}
            if not lat:
                continue
            ratio = f"{lat[sizes[-1]] / lat[sizes[0]]:.1f}x" if sizes[0] in lat and sizes[-1] in lat else ""
            rows.append(f"<tr><td>{backend}</td><td>{pattern}</td>" +
                        "".join(f"<td>{lat.get(s, float('nan')):.1f}</td>" for s in sizes) + f"<td>{ratio}</td></tr>")
            md.append(f"| {backend} | {pattern} | " + " | ".join(f"{lat.get(s, float('nan')):.1f}" for s in sizes) + " |")
    rows.append("</table>")
    model = [p for p in points if p["backend"] == "model" and p["status"] == "ok" and p["map_bytes"] == 8 << 20]
    if model:
        keys = list(model[0]["counts"])
        rows.append("<p>The model (the port), 8 MiB, counts per op:</p><table><tr><th>level</th><th>pattern</th>" +
                    "".join(f"<th>{k}</th>" for k in keys) + "</tr>")
        rows += [f"<tr><td>{p['level']}</td><td>{p['pattern']}</td>" +
                 "".join(f"<td>{p['counts'][k]}</td>" for k in keys) + "</tr>" for p in model]
        rows.append("</table>")
    meta.setdefault("extra_html", []).append(("Cost figures", "".join(rows)))
    meta.setdefault("extra_md", []).append(md)
