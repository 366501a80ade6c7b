# SPDX-License-Identifier: GPL-2.0-only
"""faultline verify's libarena section: libarena's buddy allocator
(src/libarena) at every level, one verdict per level.

In its share of the budget: the Z3 proofs of the index arithmetic
(faultline-prove-libarena), then per level the schedule explorer
(buddy-explore over corpora/buddy/explore, and its swarm of generated concurrent Programs),
RapidCheck's stateful model and its concurrent property (fl_buddy_props) and the
`buddy` fuzz target under libFuzzer and AFL++ from an empty corpus
(tools/fuzz_campaign.py --target buddy). `before`, `nmi_deferred` and
`series` must stay quiet; each historical level (`ret_overwrite`,
`guard_leak`) must be found, and every finding must replay from its text.
A level's verdict: "found" (by whom, fastest first) or "quiet" (what ran)."""
import glob
import json
import os
import re
import time

from . import steps
from .techniques import Result, run_logged

# (level, historical: must be found)
LEVELS = [("before", False), ("nmi_deferred", False), ("series", False), ("ret_overwrite", True),
          ("guard_leak", True)]
HISTORICAL = dict(LEVELS)
# How the explorer's, the swarm's and RapidCheck's time is shared among the
# levels that must stay quiet: a slip in the allocator shows there, and most
# likely at series (the per-CPU and transfer caches, NMI reentrancy and bulk
# allocation are its code). Measured on the planted cache slips
# (src/libarena/README.md): the swarm at series finds the slowest of them in
# 3-21 s (release), where an even split over five levels gave it 1.8 s. A
# historical level is searched first, each technique stopping at its finding
# (guard_leak: the swarm's first Program), and leaves what it did not use.
QUIET_WEIGHT = {"before": 1, "nmi_deferred": 1, "series": 3}
# The explorer's concurrent Programs: every level but ret_overwrite, whose bug
# is sequential (concurrent runs free only live objects, so no schedule of
# them finds it; the nmi levels are explored since their drains are predicted
# at the point they take the list).
EXPLORE_LEVELS = ["guard_leak", "before", "nmi_deferred", "series"]
# the least share left worth a buddy fuzz campaign: two waves of its shortest runs (5 s) and its start
FUZZ_MIN_SECONDS = 15
FUZZ_RUN_SECONDS = 5  # fuzz_campaign.py's shortest run
FUZZ_SLACK_SECONDS = 1  # the campaign's start and its findings' replays, on top of --time
FUZZ_ORDER = ["guard_leak", "ret_overwrite", "series", "before", "nmi_deferred"]
RC_TESTS = {"before": "BeforeKeepsEveryInvariant", "nmi_deferred": "NmiDeferredKeepsEveryInvariant",
            "series": "SeriesKeepsEveryInvariant", "ret_overwrite": "FindsRetOverwriteDoubleFree",
            "guard_leak": "FindsGuardLeftSet"}
# the concurrent property (generated CPUs 0-3, NMIs, schedules); ret_overwrite has none (sequential bug)
RC_CONCURRENT_TESTS = {"before": "BeforeQuiet", "nmi_deferred": "NmiDeferredQuiet", "series": "SeriesQuiet",
                       "guard_leak": "FindsGuardLeakAndReplays"}
SWARM_LINE = re.compile(r"^buddy swarm (\w+) seed \d+: (\d+) programs \((\d+) exhausted\), (\d+) schedules \((\d+) distinct, "
                        r"(\d+) repeats, (\d+) unclassified\), ([\d.]+) s")
SWARM_FOUND = re.compile(r"^  program (\d+) \(generator seed (\d+)\), found by (.*) at schedule (\d+) after ([\d.]+) s: "
                         r"op \d+: (.*)")
SWARM_FILE = re.compile(r"^  written to (\S+)")
EXPLORE_LINE = re.compile(r"^(\S+) at (\w+): (\d+) schedules in ([\d.]+) s \((\d+) distinct, (\d+) repeats[^)]*\)"
                          r"(?:, finding at schedule (\d+) \(([^)]*)\) after ([\d.]+) s: op (\d+): (I\d+))?")


def _binary(run, *parts):
    """The release build's binary when verify built it, else the test build's."""
    for preset in ("release", "default"):
        path = run.tool("build", preset, *parts)
        if os.access(path, os.X_OK):
            return path
    return ""


def _proofs(run, seconds):
    binary = _binary(run, "src", "libarena", "smt", "faultline-prove-libarena")
    if not binary:
        return {"status": "skipped", "reason": "faultline-prove-libarena was not built (libz3-dev?)"}
    rc, text, log = run_logged(run, "libarena-prove", [binary], max(30, seconds))
    m = re.search(r"(\d+) proved, (\d+) counterexamples, (\d+) undecided in ([\d.]+) ms", text)
    rows = re.findall(r"^(\w+) +(proved|counterexample|undecided) ", text, re.M)
    return {"status": "ran" if rc in (0, 1) and m else "failed", "rc": rc, "log": run.rel(log),
            "proved": int(m[1]) if m else 0, "counterexamples": int(m[2]) if m else 0,
            "ms": float(m[4]) if m else 0.0, "rows": rows}


def _explore(run, level, seconds, out):
    files = sorted(glob.glob(os.path.join(run.root, "corpora", "buddy", "explore", "*.bl")))
    binary = _binary(run, "src", "libarena", "buddy-explore")
    if not binary or not files:
        return None
    per = max(0.2, seconds / len(files))
    rc, text, log = run_logged(run, f"libarena-explore-{level}",
                               [binary, "--level", level, "--seconds", f"{per:.2f}", "--seed", str(run.seed),
                                "--out", out] + files, seconds * 2 + 30)
    rows = [m for m in (EXPLORE_LINE.match(line) for line in text.splitlines()) if m]
    found = next((r for r in rows if r[7]), None)
    distinct, repeats = sum(int(r[5]) for r in rows), sum(int(r[6]) for r in rows)
    return {"technique": "explorer", "ran": rc in (0, 1) and bool(rows), "runs": sum(int(r[3]) for r in rows),
            "unit": f"schedules ({distinct:,} distinct, {repeats:,} repeats)", "distinct": distinct,
            "seconds": sum(float(r[4]) for r in rows), "log": run.rel(log),
            "found": bool(found), "what": found[11] if found else "", "time": float(found[9]) if found else 0.0,
            "replays": bool(found and found.string.endswith("(replays)")),
            "file": run.rel(os.path.join(out, os.path.basename(found[1])[:-3] + f"-{level}.bl")) if found else ""}


def _what(report):
    """The checker a finding's report names: "lockset" in "schedule: violation:
    lockset: ...", "I8" in "at buddy_xfer_unlock:release on CPU 2: I8: ..."."""
    m = re.search(r"violation: (\w+)", report) or re.search(r"\b(I\d+): ", report) or re.match(r"(\w+)", report)
    return m[1] if m else ""


def parse_buddy_swarm(text):
    """`buddy-explore --swarm`'s counts, and its finding (strategy, time, what, file, replays) if any."""
    counts, found, path = None, None, ""
    for line in text.splitlines():
        m = SWARM_LINE.match(line) or SWARM_FOUND.match(line) or SWARM_FILE.match(line)
        if not m:
            continue
        if m.re is SWARM_LINE:
            counts = {"programs": int(m[2]), "exhausted": int(m[3]), "schedules": int(m[4]), "distinct": int(m[5]),
                      "repeats": int(m[6]), "unclassified": int(m[7]), "seconds": float(m[8])}
        elif m.re is SWARM_FOUND:
            found = {"program": int(m[1]), "strategy": m[3], "time": float(m[5]), "what": _what(m[6]),
                     "replays": line.endswith("(replays)")}
        else:
            path = m[1]
    if found:
        found["file"] = path
    return counts, found


def _swarm(run, level, seconds, out):
    binary = _binary(run, "src", "libarena", "buddy-explore")
    if not binary:
        return None
    rc, text, log = run_logged(run, f"libarena-swarm-{level}",
                               [binary, "--swarm", "--level", level, "--seconds", f"{max(0.5, seconds):.2f}", "--seed",
                                str(run.seed), "--out", out], seconds * 2 + 30)
    counts, found = parse_buddy_swarm(text)
    if not counts:
        return None
    return {"technique": "swarm", "ran": rc in (0, 1), "runs": counts["schedules"],
            "unit": (f"schedules of {counts['programs']:,} generated Programs ({counts['distinct']:,} distinct, "
                     f"{counts['repeats']:,} repeats, {counts['exhausted']:,} exhausted)"),
            "distinct": counts["distinct"], "seconds": counts["seconds"], "log": run.rel(log), "found": bool(found),
            "what": found["what"] if found else "", "time": found["time"] if found else 0.0,
            "replays": bool(found and found["replays"]), "file": run.rel(found["file"]) if found else ""}


def _rapidcheck(run, level, seconds, test=None):
    binary = run.tool("build", "default", "props", "fl_buddy_props")
    if not os.access(binary, os.X_OK):
        return None
    # a count the slice can finish: 1,400-4,500 cases/s under ASan at load 1
    # (max_size 40; series' stateful model the slowest), 1,000 leaves room for
    # a loaded machine; a historical level stops at its finding
    cases = max(20, min(10000, int(seconds * 1000)))
    # On a level that must stay quiet a finding is news whatever its size, and
    # shrinking it under ASan took 40-130 s of a 10 s slice (a planted cache
    # slip), which the swarm after it would have had: it is not shrunk here
    # (re-run with the printed seed to shrink it). A historical level's is.
    params = f"seed={run.seed} max_success={cases} max_size=40" + ("" if HISTORICAL[level] else " noshrink=1")
    t0 = time.monotonic()
    rc, text, log = run_logged(run, f"libarena-props-{level}" + ("-concurrent" if test else ""),
                               [binary, f"--gtest_filter={test or 'BuddyModel.' + RC_TESTS[level]}"], seconds * 4 + 30,
                               env={"RC_PARAMS": params, "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"})
    took = time.monotonic() - t0
    ok = re.search(r"OK, passed (\d+) tests", text)
    bad = re.search(r"Falsifiable after (\d+) tests?(?: and (\d+) shrinks?)?", text)
    failed = re.search(r"\nRC_FAIL.*\n\n(.*)", text[bad.end():]) if bad else None  # the property's message
    what = _what(failed[1]) if failed else ""
    found_in = re.search(r"found in ([\d.]+) s", text)
    return {"technique": "rapidcheck" + (" (concurrent)" if test else ""), "ran": bool(ok or bad), "runs": int((ok or bad)[1]) if (ok or bad) else 0,
            "unit": "cases", "seconds": took, "log": run.rel(log), "found": bool(bad),
            "what": what or ("falsified" if bad else ""),
            "time": float(found_in[1]) if found_in else took, "replays": bool(bad),  # RapidCheck re-runs its shrunk case
            "file": run.rel(log) if bad else "", "params": params}


def _fuzz(run, levels, engines, seconds):
    out = run.out("libarena-fuzz.json")
    findings = run.folder("libarena-findings")
    rc, text, log = run_logged(run, "libarena-fuzz",
                               ["python3", run.tool("tools", "fuzz_campaign.py"), "--target", "buddy", "--level",
                                ",".join(levels), "--engine", engines, "--from-scratch", "--no-minimise",
                                "--no-cmplog", "--first-finding", "--no-build", "--time", str(max(1, int(seconds))), "--jobs",
                                str(os.cpu_count() or 1), "--json", out, "--buddy-findings", findings],
                               seconds * 2 + 120)
    if not os.path.exists(out):
        return [], f"the buddy fuzz campaign exited {rc} (see {run.rel(log)})"
    with open(out) as f:
        tasks = json.load(f)
    rows = []
    for t in tasks:
        fi = min(t["findings"], key=lambda x: x["time"], default=None)
        rows.append({"technique": "libFuzzer" if t["engine"] == "libfuzzer" else "AFL++", "level": t["historic"],
                     "ran": t["execs"] > 0, "runs": t["execs"], "unit": "execs", "seconds": t["seconds"],
                     "exec_per_s": t["exec_per_s"], "stability": t.get("stability", ""), "log": run.rel(log),
                     "found": bool(fi), "what": fi["replayed"] if fi else "", "time": fi["time"] if fi else 0.0,
                     "replays": bool(fi and fi["replays"]),
                     "file": run.rel(os.path.join(run.root, fi["file"])) if fi else ""})
    return rows, ""


def build_fuzzers(run):
    """Setup, outside the budget: the buddy target under both engines (AFL++
    without CmpLog: the program targets' build already holds the library)."""
    rc, text, log = run_logged(run, "libarena-fuzz-build",
                               ["python3", run.tool("tools", "fuzz_campaign.py"), "--target", "buddy", "--level",
                                ",".join(lv for lv, _ in LEVELS), "--engine", "both", "--no-cmplog", "--build-only"],
                               3600, on_line=run.progress.update)
    return steps.outcome(rc, text)


def _by_level(levels, seconds, run_level):
    """run_level(level, seconds) -> rows, for each level in `seconds` of wall
    time: the historical levels first, each with an even share at most (each
    technique stops at its finding), then the quiet ones, which share what is
    left by QUIET_WEIGHT. Each row is tagged with its level."""
    t0 = time.monotonic()
    rows = []
    historical = [lv for lv in levels if HISTORICAL[lv]]
    quiet = [lv for lv in levels if not HISTORICAL[lv]]
    for lv in historical:
        rows += [dict(r, level=lv) for r in run_level(lv, seconds / len(levels)) if r]
    for i, lv in enumerate(quiet):
        left = max(0.5, seconds - (time.monotonic() - t0))
        mine = left * QUIET_WEIGHT[lv] / sum(QUIET_WEIGHT[q] for q in quiet[i:])
        rows += [dict(r, level=lv) for r in run_level(lv, mine) if r]
    return rows


def run_libarena(run, seconds):
    t0 = time.monotonic()
    proofs = _proofs(run, seconds * 0.1)
    left = lambda: max(1.0, seconds - (time.monotonic() - t0))  # noqa: E731
    engines = [e for e in ("libfuzzer", "afl") if os.access(run.tool("build", "fuzz", e, "buddy-guard_leak"), os.X_OK)]
    # the rest: a quarter to the fuzz campaign (it finds the sequential slips; the
    # cache races took libFuzzer 100-160 s, far past its slice), the other three
    # to the explorer over the corpus (a tenth), RapidCheck (a quarter: it stops at
    # 10,000 cases, in a few seconds per level, and leaves the rest) and then the
    # swarm (what is left but the fuzz campaign's); without fuzz binaries, all of it
    fuzz_reserve = left() * 0.25 if engines else 0.0
    rest = left() - fuzz_reserve
    rows = []
    ex_out = run.folder("libarena-explore")
    rows += _by_level(EXPLORE_LEVELS, rest * 0.1, lambda lv, secs: [_explore(run, lv, secs, ex_out)])

    def rapidcheck(lv, secs):  # the stateful model, and the concurrent property with two thirds of the time
        if lv not in RC_CONCURRENT_TESTS:
            return [_rapidcheck(run, lv, secs)]
        t0 = time.monotonic()
        model = _rapidcheck(run, lv, secs / 3)
        return [model, _rapidcheck(run, lv, max(1.0, secs - (time.monotonic() - t0)),
                                   f"BuddyConcurrent.{RC_CONCURRENT_TESTS[lv]}")]
    rows += _by_level([lv for lv, _ in LEVELS], rest * 0.25, rapidcheck)
    rows += _by_level(EXPLORE_LEVELS, max(1.0, left() - fuzz_reserve),
                      lambda lv, secs: [_swarm(run, lv, secs, ex_out)])
    fuzz_note = "" if engines else "no buddy fuzz binaries (fuzz/build.sh)"
    if engines and left() < FUZZ_MIN_SECONDS:
        fuzz_note = f"{left():.0f} s of the share left: too little for the buddy fuzz campaign"
    elif engines:
        # the campaign's own start, AFL++'s calibration and the replays of
        # its findings come on top of --time (verify built the binaries: no
        # build check, --no-build, which took 14 s): under 2 s over a --time
        # of 38-40 s in two default runs (ef67fa7 idle, 068c997 at load 10),
        # where asking for three quarters of what was left ended the share
        # 14 s early, and 4 s less than what was left 4 s early. Ask for what is
        # left but FUZZ_SLACK_SECONDS, and as many levels (most telling first) as get >= 5 s per
        # engine (the campaign's shortest run) and ~1 s to start, in rounds of
        # one run per core (at 5 s a run, a fresh-clone verify planned four
        # levels in 23 s and the fourth got none)
        budget = max(1.0, left() - FUZZ_SLACK_SECONDS)
        rounds = int(budget // (FUZZ_RUN_SECONDS + 1))
        n = max(2, min(len(FUZZ_ORDER), rounds * (os.cpu_count() or 1) // len(engines)))
        frows, fuzz_note = _fuzz(run, FUZZ_ORDER[:n], "both" if len(engines) == 2 else engines[0], budget)
        rows += frows
    verdicts, problems = [], []
    for lv, historical in LEVELS:
        mine = [r for r in rows if r["level"] == lv and r["ran"]]
        found = sorted((r for r in mine if r["found"]), key=lambda r: r["time"])
        verdict = "found" if found else "quiet"
        want = "found" if historical else "quiet"
        if verdict != want:
            problems.append(f"{lv}: {verdict}, expected {want}")
        problems += [f"{lv}: the {r['technique']} finding {r['file']} does not replay" for r in found
                     if not r["replays"]]
        verdicts.append({"level": lv, "historical": historical, "verdict": verdict, "expected": want,
                         "found_by": [f"{r['technique']} ({r['what']}, {r['time']:.2f} s)" for r in found],
                         "smallest": found[0]["file"] if found else "",
                         "ran": [f"{r['technique']} {r['runs']:,} {r['unit']} in {r['seconds']:.1f} s" for r in mine]})
    if proofs["status"] == "ran" and proofs["counterexamples"]:
        problems.append(f"{proofs['counterexamples']} libarena proof obligations have counterexamples")
    if proofs["status"] == "failed":
        problems.append(f"faultline-prove-libarena exited {proofs['rc']}")
    res = Result("libarena", "ran", metrics={"proofs": proofs, "levels": verdicts, "rows": rows,
                                             "fuzz_note": fuzz_note})
    if problems:
        res.status, res.reason = "failed", "; ".join(problems)
    else:
        res.reason = (f"{proofs.get('proved', 0)} obligations proved; "
                      + ", ".join(f"{v['level']} {v['verdict']}" for v in verdicts))
    return res


def add_sections(results, meta):
    """The per-level verdict table, the proofs, and what each technique ran."""
    r = next((r for r in results if r.technique == "libarena" and "levels" in r.metrics), None)
    if not r:
        return
    m = r.metrics
    p = m["proofs"]
    proofs = (f"Z3: {p['proved']} of {len(p['rows'])} obligations proved in {p['ms']:.0f} ms "
              f"({', '.join(n for n, v in p['rows'] if v == 'proved')})" if p["status"] == "ran"
              else f"Z3: {p['status']} ({p.get('reason', p.get('rc'))})")
    md = ["## libarena's buddy allocator (src/libarena)", "", proofs + ".", "",
          "| level | verdict | expected | found by (fastest first) | finding | ran |", "|---|---|---|---|---|---|"]
    md += [f"| {v['level']} | {v['verdict']} | {v['expected']} | {', '.join(v['found_by']) or '-'} | "
           f"{v['smallest'] or '-'} | {'; '.join(v['ran'])} |" for v in m["levels"]]
    fuzz = [x for x in m["rows"] if x["technique"] in ("libFuzzer", "AFL++")]
    if fuzz:
        md += ["", "| fuzzer | level | execs | exec/s | stability | first finding (s) |", "|---|---|---|---|---|---|"]
        md += [f"| {x['technique']} | {x['level']} | {x['runs']:,} | {x['exec_per_s']:,} | {x['stability'] or '-'} | "
               f"{('%.2f' % x['time']) if x['found'] else '-'} |" for x in fuzz]
    if m["fuzz_note"]:
        md += ["", f"Fuzzing: {m['fuzz_note']}."]
    html = f"<p>{proofs}.</p><table><tr><th>level</th><th>verdict</th><th>expected</th><th>found by</th>" \
           "<th>finding</th><th>ran</th></tr>"
    html += "".join(f"<tr><td>{v['level']}</td><td>{v['verdict']}</td><td>{v['expected']}</td>"
                    f"<td>{', '.join(v['found_by']) or '-'}</td><td>{v['smallest'] or '-'}</td>"
                    f"<td>{'; '.join(v['ran'])}</td></tr>" for v in m["levels"])
    html += "</table>"
    meta.setdefault("extra_md", []).append(md)
    meta.setdefault("extra_html", []).append(("libarena", html))
