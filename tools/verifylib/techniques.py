# SPDX-License-Identifier: GPL-2.0-only
"""Each technique faultline verify runs, as a function that runs the
project's own tool for it and turns the tool's output into Evidence.

Every runner gets the Run (paths, seed, progress) and a time allowance in
seconds, writes its raw output under the report folder, and returns a
Result. None of them decides verdicts: that is verdicts.py's job."""
import glob
import json
import os
import re
import subprocess
import time
from dataclasses import dataclass, field

from . import background, steps
from .evidence import ARCHES, CELLS, PATCHES, Evidence, cell_of, cells_of, program_ops


@dataclass
class Run:
    root: str       # the repository
    report: str     # the report folder
    seed: int
    progress: object
    quick: bool = False
    cmplog: object = None  # verify's CmpLog build (verify.Cmplog: finish() -> (built, what)), if queued

    def tool(self, *parts):
        return os.path.join(self.root, *parts)

    def out(self, *parts):
        path = os.path.join(self.report, *parts)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return path

    def folder(self, *parts):
        """A folder under the report, created."""
        path = os.path.join(self.report, *parts)
        os.makedirs(path, exist_ok=True)
        return path

    def rel(self, path):
        """Paths in the report are relative to the report folder (links work)."""
        return os.path.relpath(os.path.abspath(path), self.report)


@dataclass
class Result:
    technique: str
    status: str = "ran"        # ran | skipped | failed
    reason: str = ""           # for skipped/failed
    seconds: float = 0.0
    evidence: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    log: str = ""
    share: float = 0.0         # verify: seconds of the budget it was given
    used: float = 0.0          # verify: its wall time, start-up and findings included

    def budget_text(self):
        """'share 60 s, used 58 s' (and by how much it overran, past 5 %)."""
        over = self.used / self.share - 1 if self.share else 0
        return f"share {self.share:.0f} s, used {self.used:.0f} s" + (f" (OVER by {over:.0%})" if over > 0.05 else "")

    def to_dict(self):
        d = dict(self.__dict__)
        d["evidence"] = [e.to_dict() for e in self.evidence]
        return d


def run_logged(run, name, argv, timeout, env=None, on_line=None):
    """Runs argv with output to report/logs/NAME.log; returns (rc, text)."""
    log = run.out("logs", f"{name}.log")
    lines = []
    with open(log, "w") as f:
        p = subprocess.Popen(argv, cwd=run.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=dict(os.environ, **(env or {})), errors="replace")
        deadline = time.monotonic() + timeout
        for line in p.stdout:
            f.write(line)
            lines.append(line)
            if on_line:
                on_line(line.rstrip())
            if time.monotonic() > deadline:
                p.kill()
                lines.append(f"[verify] killed after {timeout:.0f} s\n")
                break
        rc = p.wait()
    return rc, "".join(lines), log


# --- proofs -----------------------------------------------------------------

LEVEL = "|".join(PATCHES)
# faultline-prove's row: ob level arch page assume result [rescue=R] time paths replay/expected
PROVE_ROW = re.compile(rf"^(\d)\s+({LEVEL}|any)\s+(32|64)\s+(4k|64k)\s+(\S+)\s+"
                       r"(proved|cex|unknown)(?: rescue=(\w+))?\s+([\d.]+)ms(?:\s+(\d+))?\s*(.*)$")


def parse_prove_table(text, emit_dir):
    rows, evidence = [], []
    for line in text.splitlines():
        m = PROVE_ROW.match(line)
        if not m:
            continue
        ob, level, bits, page, assume, result, rescue, ms, _paths, rest = m.groups()
        rows.append({"obligation": int(ob), "level": level, "bits": bits, "page": page, "assume": assume,
                     "result": result + (f" rescue={rescue}" if rescue else ""), "ms": float(ms),
                     "mismatch": "MISMATCH" in rest, "reproduced": rest.startswith("reproduced")})
        if level == "any" or assume not in ("anon", "regular", "direct"):
            continue
        cell = cell_of(level, bits, assume)
        if rest.startswith("reproduced: pre:"):
            # Obligation 3 (eager == lazy) broken on the eager side: the
            # replay shows the violation in pre, so it is pre's evidence.
            cell = cell_of("pre", bits, assume)
        if result == "cex":
            fl = os.path.join(emit_dir, f"o{ob}-{level}-arch{bits}-{page}-{assume}.fl")
            evidence.append(Evidence("proof", cell, "violation", f"obligation {ob} ({page})", float(ms) / 1000,
                                     fl if os.path.exists(fl) else "", program_ops(fl), rescue or "",
                                     detail=rest.strip()))
        elif result == "proved":
            evidence.append(Evidence("proof", cell, "proved", f"obligation {ob} ({page})", float(ms) / 1000))
    return rows, evidence


def run_proofs(run, seconds):
    """The test tree's faultline-prove (ASan+UBSan; ~20 s for the whole table, so the
    verdict table does not wait for a release build: the verdicts are the same)."""
    binary = run.tool("build", "default", "smt", "faultline-prove")
    binary = binary if os.access(binary, os.X_OK) else ""
    if not binary:
        return Result("proofs", "skipped", "faultline-prove was not built (libz3-dev missing?)")
    emit = run.folder("proofs")
    rc, text, log = run_logged(run, "proofs", [binary, "--emit", emit], seconds * 4,
                                env={"ASAN_OPTIONS": "malloc_context_size=0:max_malloc_fill_size=0:quarantine_size_mb=0:thread_local_quarantine_size_kb=0"})
    rows, evidence = parse_prove_table(text, emit)
    for e in evidence:
        e.program = run.rel(e.program) if e.program else ""
    tail = text.strip().splitlines()[-1] if text.strip() else ""
    res = Result("proofs", "ran" if rows else "failed", "" if rows else "no table rows", evidence=evidence,
                 metrics={"rows": rows, "summary": tail, "exit": rc}, log=run.rel(log))
    if rc not in (0, 1) or not rows:
        res.status, res.reason = "failed", f"faultline-prove exited {rc}"
    elif rc == 1:
        res.reason = "rows differ from smt/expected (see the log)"
    return res


# --- corpus replay -----------------------------------------------------------

def corpus_files(root):
    pats = ["corpora/programs/*.fl", "corpora/*/regression/*.fl", "corpora/findings/*.fl"]
    return sorted(f for p in pats for f in glob.glob(os.path.join(root, p)))


def is_arena_program(path):
    """Whether a Program file creates an arena map (`map ... type=arena`)."""
    with open(path) as f:
        return any(line.startswith("map ") and "type=arena" in line.split() for line in f)


def run_corpus(run, seconds):
    files = corpus_files(run.root)
    out = run.out("corpus.json")
    rc, text, log = run_logged(run, "corpus", [run.tool("build", "default", "faultline-cli"), "summary",
                                                "--json", out] + files, seconds * 4)
    if rc not in (0, 1) or not os.path.exists(out):
        return Result("corpus", "failed", f"faultline-cli summary exited {rc}", log=run.rel(log))
    with open(out) as f:
        runs = json.load(f)
    evidence, differences = [], {}
    # The arena map's Programs (type=arena) share the cell names but are not
    # evidence about array_map_mmap: their historical levels and the
    # MADV_DOFORK finding would mark pre's array map unsound.
    arena = {f for f in files if is_arena_program(f)}
    arena_runs = [r for r in runs if r["file"] in arena]
    runs = [r for r in runs if r["file"] not in arena]
    for r in runs:
        if r["verdict"].startswith("violation") or r["verdict"].startswith("difference"):
            evidence.append(Evidence("corpus", r["cell"], "violation", r["verdict"].split(" at ")[0], -1.0,
                                     program=run.rel(r["file"]), ops=r["ops"], detail=r["config"]))
        for d in r["differences"]:
            differences.setdefault(r["cell"], {}).setdefault(d, set()).add(run.rel(r["file"]))
    mismatched = [r for r in runs + arena_runs if not r["matches_expect"]]
    arena_note = (f"{len(arena)} arena-map Programs ({len(arena_runs)} runs, "
                  f"{sum(r['verdict'].startswith('violation') for r in arena_runs)} violations) kept out of the "
                  "array-map verdicts")
    return Result("corpus", "ran", arena_note if not mismatched else
                  f"{len(mismatched)} runs differ from their expect lines; {arena_note}",
                  evidence=evidence, log=run.rel(log),
                  metrics={"programs": len(files), "runs": len(runs) + len(arena_runs), "mismatched": len(mismatched),
                           "arena_programs": len(arena), "arena_runs": len(arena_runs),
                           "cells_checked": sorted({r["cell"] for r in runs}),
                           "differences": {c: {k: sorted(v) for k, v in d.items()} for c, d in differences.items()}})


# --- property tests ------------------------------------------------------------

PROPS_NAME = re.compile(rf"Props/(\w+)\.(\w+)/({LEVEL})_arch(32|64)_(anon|regular|direct)")


def run_props(run, seconds):
    binary = run.tool("build", "default", "props", "fl_props")
    if not os.access(binary, os.X_OK):
        return Result("props", "skipped", "fl_props was not built (librapidcheck-dev missing?)")
    # The arithmetic and differential properties are cheap; the stateful
    # model walks whole programs, so it gets fewer cases.
    fast, slow = (100, 5) if run.quick else (200, 15)
    evidence, tests = [], []
    total = 0.0
    for label, filt, n in (("fast", "Props/Arith.*:Props/Differential.*", fast), ("stateful", "Props/Model_.*", slow)):
        out = run.out("props", f"{label}.json")
        params = f"seed={run.seed} max_success={n}"
        run.progress.update(f"{label} properties, RC_PARAMS=\"{params}\"")
        t0 = time.monotonic()
        rc, text, log = run_logged(run, f"props-{label}", [binary, f"--gtest_filter={filt}",
                                                            f"--gtest_output=json:{out}"],
                                    seconds * 4, env={"RC_PARAMS": params, "FL_PROPS_STRICT": "1",
                                         "FL_FINDINGS_DIR": run.folder("props", "findings"),
                                         "FL_PROPS_DUMP_DIR": run.folder("props", "cases")})
        total += time.monotonic() - t0
        if not os.path.exists(out):
            return Result("props", "failed", f"fl_props exited {rc} without results", log=run.rel(log))
        with open(out) as f:
            data = json.load(f)
        for suite in data["testsuites"]:
            for t in suite["testsuite"]:
                m = PROPS_NAME.match(f"{suite['name']}.{t['name']}")
                if not m:
                    continue
                prop, cell = f"{m[1]}.{m[2]}", cell_of(m[3], m[4], m[5])
                secs = float(str(t.get("time", "0")).rstrip("s"))
                tests.append({"property": prop, "cell": cell, "seconds": secs, "failed": bool(t.get("failures"))})
                if t.get("failures"):
                    evidence.append(_props_failure(run, prop, cell, secs, t["failures"][0]["failure"]))
    return Result("props", "ran", evidence=evidence, seconds=total,
                  metrics={"seed": run.seed, "max_success": {"fast": fast, "stateful": slow}, "tests": tests,
                           "cells_checked": sorted({t["cell"] for t in tests})})


def _props_failure(run, prop, cell, secs, message):
    after = re.search(r"Falsifiable after (\d+) tests?", message)
    prog = re.search(r"fl::Program:\n\n(.*?)\n\n", message, re.S)
    path, ops = "", 0
    if prog:
        p, a, d = cell.split("/")
        path = run.out("props", f"{prop}-{p}-{a}-{d}.fl")
        pins = {"patch": p, "arch": a[4:], "door": d, "page": "4k", "spec_v1": "mask"}
        given = {line.split()[0] for line in prog[1].splitlines() if line.strip()}
        with open(path, "w") as f:
            f.write(f"# RapidCheck counterexample of {prop} on {cell} (seed {run.seed})\n")
            f.write("".join(f"{k} {v}\n" for k, v in pins.items() if k not in given) + prog[1] + "\n")
        ops = program_ops(path)
        path = run.rel(path)
    what = re.search(r"\n([\w-]+ falsified) on", message)
    return Evidence("props", cell, "violation", what[1] if what else prop, secs, path, ops,
                    detail=f"falsifiable after {after[1]} tests" if after else message.splitlines()[0])


# --- fuzzing ---------------------------------------------------------------------

# --quick's fuzz campaign: the lazy levels at the doors where they can differ from pre
FUZZ_QUICK = (PATCHES[1:], ["regular", "direct"])


def fuzz_selection(quick):
    """Which configurations the campaign covers: everything but the bounds
    target (the proofs decide that arithmetic exhaustively); --quick: FUZZ_QUICK."""
    if quick:
        return ["--target", "program", "--patch", ",".join(FUZZ_QUICK[0]), "--door", ",".join(FUZZ_QUICK[1])]
    return ["--target", "program"]


def fuzz_cells(quick):
    """The cells the campaign can decide (its program-target configurations)."""
    return cells_of(FUZZ_QUICK[0], ARCHES, FUZZ_QUICK[1]) if quick else list(CELLS)


def build_fuzzers(run):
    """Setup, outside the budget: the fuzz binaries for fuzz_selection()."""
    rc, text, log = run_logged(run, "fuzz-build", ["python3", run.tool("tools", "fuzz_campaign.py"), "--engine",
                                                    "both", "--build-only"] + fuzz_selection(run.quick), 3600,
                                on_line=run.progress.update)
    return steps.outcome(rc, text)


def start_cmplog_build(run):
    """The AFL++ CmpLog twins of fuzz_selection(), built while the other techniques run."""
    return background.BackgroundBuild("fuzz targets, AFL++ CmpLog (background)",
                                      ["python3", run.tool("tools", "fuzz_campaign.py"), "--engine", "afl", "--cmplog",
                                       "--build-only"] + fuzz_selection(run.quick), run.root,
                                      run.out("logs", "fuzz-cmplog-build.log"))


def run_fuzz(run, seconds):
    out = run.out("fuzz.json")
    findings = run.folder("findings")

    def show(line):
        if line.startswith("[fuzz]") or line.startswith("[build]"):
            run.progress.update(line)

    # AFL++ runs with CmpLog only if its background build finished before now
    cmplog = False
    if run.cmplog:
        cmplog, what = run.cmplog.finish()
        run.progress.note(f"fuzz: {what}{'' if cmplog else '; AFL++ runs without CmpLog'}")
    rc, text, log = run_logged(run, "fuzz", ["python3", run.tool("tools", "fuzz_campaign.py"), "--engine", "both",
                                              "--time", str(max(1, int(seconds))),
                                              "--jobs", str(os.cpu_count() or 1), "--json", out,
                                              "--findings", findings, "--no-build"] +
                                (["--cmplog"] if cmplog else []) +
                                fuzz_selection(run.quick),
                                seconds * 2 + 600, on_line=show)
    if not os.path.exists(out):
        return Result("fuzz", "failed", f"the fuzz campaign exited {rc}", log=run.rel(log))
    with open(out) as f:
        tasks = json.load(f)
    evidence, harness = [], []
    for t in tasks:
        for fi in t["findings"]:
            sig = re.match(r"(violation \w+|difference|crash[^(]*)", fi["verdict"])
            what = sig.group(1).strip() if sig else fi["verdict"]
            path = os.path.join(run.root, fi["file"])
            if what.startswith("crash") or not fi["replays"]:
                harness.append({"task": t["name"], "engine": t["engine"], "what": fi["verdict"], "file": run.rel(path)})
                continue
            door = t["door"] or _header(path, "door") or "direct"
            for d in dict.fromkeys([door] + fi["reachable"]):
                evidence.append(Evidence(t["engine"], cell_of(t["patch"], t["arch"], d), "violation", what,
                                         fi["time"], run.rel(path), program_ops(path), reachable=fi["reachable"],
                                         detail=f"{t['target']} target on {t['name']}"))
    res = Result("fuzz", "ran", evidence=evidence, log=run.rel(log),
                 metrics={"tasks": tasks, "harness_problems": harness, "exit": rc, "cmplog": cmplog,
                          "cells_checked": sorted({cell_of(t["patch"], t["arch"], t["door"]) for t in tasks
                                                  if t["door"] and not t.get("skipped")})})
    skipped = [t["name"] + "/" + t["engine"] for t in tasks if t.get("skipped")]
    # a cell whose every run was skipped was not decided by the campaign: `not run`, not `unknown`
    ran = set(res.metrics["cells_checked"])
    res.metrics["cells_not_run"] = sorted({cell_of(t["patch"], t["arch"], t["door"]) for t in tasks
                                           if t.get("skipped") and t["door"]} - ran)
    if harness:
        res.reason = f"{len(harness)} findings are harness problems (crashes or non-replaying)"
    if skipped:
        res.reason += f"{'; ' if res.reason else ''}{len(skipped)} of {len(tasks)} runs skipped: the share ran out"
    return res


def _header(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + " "):
                    return line.split()[1]
    except OSError:
        pass
    return None
