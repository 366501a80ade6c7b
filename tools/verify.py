#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""faultline verify [--budget SECONDS] [--quick] [--only TECHNIQUE,...] [--seed S] [--report DIR]

The main job: runs every technique inside one time budget (the proofs, the
corpus replay, the property tests, the host-kernel oracle when bpf(2) is
permitted, a short bench, the interleaving explorer, libarena's buddy allocator per
level (verifylib/libarena.py), and fuzz campaigns with both engines, time-sliced
across configurations, with whatever budget is left), then decides one
verdict per patch level x width x front door, compares the verdicts with
tools/verifylib/expected, and writes report/summary.md and report/index.html.
Exit 0: every verdict is as expected; 1: some differ (or a technique broke);
2: bad options. ./faultline verify builds what it needs first.
"""
import argparse
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verifylib import extra, interleave, libarena, reach, report, steps, techniques, verdicts  # noqa: E402
from verifylib.evidence import CELLS  # noqa: E402
from verifylib.progress import Progress  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPECTED = os.path.join(ROOT, "tools", "verifylib", "expected")

# (name, runner, share of the budget it aims for (fuzz takes what is left),
# the verdict-table cells it can decide given --quick). A technique that needs
# longer than its share to finish is allowed up to four times the share: a
# proof table cut short decides nothing. bench and libarena decide no cell:
# they have their own report sections.
ALL_CELLS = lambda quick: CELLS  # noqa: E731
NO_CELLS = lambda quick: []  # noqa: E731
PLAN = [("proofs", techniques.run_proofs, 0.10, ALL_CELLS), ("corpus", techniques.run_corpus, 0.05, ALL_CELLS),
        ("props", techniques.run_props, 0.15, ALL_CELLS), ("oracle", extra.run_oracle, 0.10, lambda quick: extra.ORACLE_CELLS),
        ("bench", extra.run_bench, 0.05, NO_CELLS),
        ("interleave", interleave.run_interleave, 0.10, lambda quick: interleave.CELLS),
        ("libarena", libarena.run_libarena, 0.08, NO_CELLS),
        ("fuzz", techniques.run_fuzz, None, techniques.fuzz_cells)]
NAMES = [p[0] for p in PLAN]


class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"faultline verify: {message}\n{__doc__.splitlines()[0]}\n")
        sys.exit(2)


def parse_args(argv):
    ap = Parser(prog="faultline verify", add_help=True)
    ap.add_argument("--budget", type=float, help="seconds for all techniques (default 600; --quick: 150)")
    ap.add_argument("--quick", action="store_true", help="a short run: small budget, fewer property cases")
    ap.add_argument("--only", help=f"comma list of techniques: {', '.join(NAMES)}")
    ap.add_argument("--seed", type=int, help="seed for the property tests and the oracle (default: random, printed)")
    ap.add_argument("--report", default=os.path.join(ROOT, "report"), help="report folder (default report/)")
    a = ap.parse_args(argv)
    a.budget = a.budget if a.budget is not None else (150.0 if a.quick else 600.0)
    if not a.budget > 0:
        ap.error("--budget must be a positive number of seconds")
    a.only = [t.strip() for t in a.only.split(",") if t.strip()] if a.only else NAMES
    bad = [t for t in a.only if t not in NAMES]
    if bad or not a.only:
        ap.error(f"--only: unknown technique '{','.join(bad)}' (choose from {', '.join(NAMES)})")
    a.seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1, 2**31)
    return a


def shares(selected):
    """technique -> its fraction of the budget (None: what is left). Without
    fuzz, the selected techniques' fractions are scaled to fill the budget."""
    plan = {name: share for name, _, share, _ in PLAN if name in selected}
    if "fuzz" in plan:
        return plan
    total = sum(plan.values())
    return {name: share / total for name, share in plan.items()}


def setup_steps(run, only, with_reach):
    """(step, builder, what happens if it fails: None stops verify) for the selected techniques."""
    steps_ = []
    if "fuzz" in only:
        steps_.append(("fuzz targets" + (" (--quick)" if run.quick else ""), lambda: techniques.build_fuzzers(run), None))
    if "libarena" in only:
        steps_.append(("buddy fuzz targets", lambda: libarena.build_fuzzers(run), "libarena runs without them"))
    release = [t for t, tech in (("faultline-bench", "bench"), ("faultline-prove", "proofs"),
                                 ("faultline-cli", "interleave"), ("faultline-prove-libarena", "libarena"))
               if tech in only]
    if release:
        steps_.append((f"release preset ({', '.join(release)})", lambda: extra.build_release(run, release),
                       "those techniques fall back or skip"))
    if with_reach:
        steps_.append(("coverage preset (faultline-cli)", lambda: reach.build_coverage(run),
                       "the reach report has no coverage"))
    return steps_


def run_setup(progress, setup, after):
    """Builds each step, saying before it how long it took last time and what is left (then `after`);
    False: a fatal failure."""
    for i, (step, build, fallback) in enumerate(setup):
        progress.begin("setup", "building " + steps.announce(step, [s for s, _, _ in setup[i + 1:]] + [after], ROOT))
        t0 = time.monotonic()
        built, last = build()
        took = time.monotonic() - t0
        if built and last != steps.UP_TO_DATE:  # "last time" is the last time it built something
            steps.record(step, took, ROOT)
        done = "up to date, checked" if last == steps.UP_TO_DATE else "built"
        progress.note(f"setup: {step} {done if built else f'FAILED ({last})'} in {took:.0f} s"
                      f"{'' if built or not fallback else '; ' + fallback}")
        if not built and fallback is None:
            return False
    return True


def git_commit():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def main(argv):
    a = parse_args(argv)
    shutil.rmtree(a.report, ignore_errors=True)
    os.makedirs(a.report)
    progress = Progress(a.budget)
    run = techniques.Run(ROOT, os.path.abspath(a.report), a.seed, progress, a.quick)
    with_reach = bool(reach.FED_BY & set(a.only))
    if not run_setup(progress, setup_steps(run, a.only, with_reach), f"the techniques ({a.budget:.0f} s)"):
        return 1
    setup_seconds = progress.restart()
    progress.note(f"budget {a.budget:.0f} s, seed {a.seed}, techniques: {', '.join(a.only)}")
    if "fuzz" in a.only and not a.quick:
        # CmpLog helps only AFL++ runs long enough to reach its stages: built
        # while the other techniques run, used if ready when fuzz starts
        run.cmplog = techniques.start_cmplog_build(run)
        progress.note("building in the background: " + run.cmplog.announce(["used by fuzz if ready"]))
    results = []
    fractions = shares(a.only)
    for name, runner, _, _ in PLAN:
        if name not in a.only:
            continue
        # fuzz: all that is left (the campaign fits its findings' minimising and replays into it)
        left = a.budget - progress.elapsed()
        allowance = max(10.0, left if fractions[name] is None else a.budget * fractions[name])
        progress.begin(name, f"share {allowance:.0f} s")
        t0 = time.monotonic()
        try:
            r = runner(run, allowance)
        except Exception as e:  # a broken technique is reported, not fatal to the others
            r = techniques.Result(name, "failed", f"{type(e).__name__}: {e}")
        r.share, r.used = allowance, time.monotonic() - t0
        r.seconds = r.seconds or r.used
        progress.note(f"{name}: {r.status}, {r.budget_text()}, {len(r.evidence)} evidence records"
                      f"{' — ' + r.reason if r.reason else ''}")
        results.append(r)
    reached, coverage = {}, {}
    if with_reach:
        progress.begin("reach", "what each technique reached (and its coverage of src/kernel)")
        reached, coverage = reach.run_reach(run, results, 300)
    progress.close()

    decides = {name: cells(a.quick) for name, _, _, cells in PLAN}
    judged = verdicts.judged_cells(results, decides)
    decided = verdicts.decide(results, judged, verdicts.search_only_cells(results, decides))
    expected = verdicts.load_expected(EXPECTED)
    mismatches = verdicts.compare(decided, expected)
    failed = [r for r in results if r.status == "failed"]  # includes oracle disagreements
    harness = [h for r in results for h in r.metrics.get("harness_problems", [])]
    ok = not mismatches and not failed and not harness
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "commit": git_commit(),
            "budget": a.budget, "elapsed": progress.elapsed(), "setup": setup_seconds, "seed": a.seed,
            "outcome": ("verdicts as expected" if ok else
                        f"{len(mismatches)} verdicts differ, {len(failed)} techniques failed, "
                        f"{len(harness)} harness problems") +
            ("" if len(judged) == len(CELLS) else f" ({len(judged)} of {len(CELLS)} cells judged, the rest not run)"),
            "report_dir": run.report,
            "differences": next((r.metrics.get("differences", {}) for r in results if r.technique == "corpus"), {})}
    plots = [("Fuzz coverage over time", report.fuzz_coverage_plots(
        next((r.metrics["tasks"] for r in results if r.technique == "fuzz" and "tasks" in r.metrics), [])))]
    extra.add_sections(results, meta, plots)
    interleave.add_sections(results, meta)
    libarena.add_sections(results, meta)
    reach.add_sections(meta, reached, coverage, reach.WHY_UNREACHED)
    with open(os.path.join(a.report, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": [r.to_dict() for r in results], "verdicts": decided}, f, indent=1,
                  default=str)
    report.write_summary_md(os.path.join(a.report, "summary.md"), meta, decided, expected, results)
    report.write_index_html(os.path.join(a.report, "index.html"), meta, decided, expected, results, plots)
    print_table(decided, expected)
    for cell, want, got in mismatches:
        print(f"MISMATCH {cell}: expected {want}, got {got}")
    for r in failed:
        print(f"FAILED {r.technique}: {r.reason}")
    for h in harness:
        print(f"HARNESS PROBLEM {h['task']} ({h['engine']}): {h['what']} -> {h['file']}")
    print(f"report: {os.path.join(a.report, 'index.html')} and summary.md; {meta['outcome']}")
    return 0 if ok else 1


def print_table(decided, expected):
    print(f"\n{'cell':22s} {'verdict':21s} {'vs pre':20s} {'found by (fastest first)':44s} smallest counterexample")
    for cell, patch, arch, door, v, want in report.verdict_rows(decided, expected):
        small = v["smallest"]
        mark = f"  <- expected {want}" if want else ""
        if not want and v["search_only"] and expected.get(cell, v["verdict"]) != v["verdict"] \
                and v["verdict"] != verdicts.NOT_RUN:
            mark = f"  (expected {expected[cell]}: not found by this run's search, which alone decides nothing here)"
        print(f"{cell:22s} {v['verdict']:21s} {v['vs_pre']:20s} {report.found_by_text(v, short=True)[:44]:44s} "
              f"{small['program'] + ' (' + str(small['ops']) + ' ops)' if small else ''}{mark}")
        if v["assumption"]:
            print(f"{'':22s} holds only given: {v['assumption']}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
