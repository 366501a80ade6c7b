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
2: bad options. ./faultline verify builds the test tree first; the techniques
that need nothing else start at once while a background lane builds the rest
(verifylib/schedule.py, verifylib/lane.py), and the verdict table is printed
as soon as the proofs, the corpus and the properties have run (provisional).
"""
import argparse
import dataclasses
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verifylib import extra, interleave, libarena, reach, report, steps, techniques, verdicts  # noqa: E402
from verifylib.evidence import CELLS  # noqa: E402
from verifylib.lane import Lane  # noqa: E402
from verifylib.progress import Progress  # noqa: E402
from verifylib.schedule import TableWatch, Technique, run_plan  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPECTED = os.path.join(ROOT, "tools", "verifylib", "expected")

# The plan, in the order the techniques run when their builds are ready:
# (technique, share of the budget it aims for (fuzz takes what is left), the
# verdict-table cells it can decide given --quick, the lane's builds it needs
# (it waits for them; if one fails it runs with the default tree's binary or
# skips) and prefers (used if ready when it starts), whether the first table
# waits for it). The release tools are needed where speed is evidence (the
# ASan faultline-cli explores several times fewer schedules in the same
# time); the proofs run the test tree's faultline-prove, first, while the
# lane builds at nice 10 (64 s of a 60 s share in a fresh-clone run; an
# earlier ASan prover run under a load of 6-7 took 4x its share). A
# technique that needs longer than its share to finish is allowed up to four
# times the share: a proof table cut short decides nothing. bench and libarena
# decide no cell: they have their own report sections.
RELEASE, BUDDY, FUZZ, COVERAGE, CMPLOG = ("release preset", "buddy fuzz targets", "fuzz targets", "coverage preset",
                                          "fuzz targets, AFL++ CmpLog (background)")
ALL_CELLS = lambda quick: CELLS  # noqa: E731
NO_CELLS = lambda quick: []  # noqa: E731
PLAN = [Technique("proofs", techniques.run_proofs, 0.10, ALL_CELLS, decides_table=True),
        Technique("corpus", techniques.run_corpus, 0.05, ALL_CELLS, decides_table=True),
        Technique("props", techniques.run_props, 0.15, ALL_CELLS, decides_table=True),
        Technique("oracle", extra.run_oracle, 0.10, lambda quick: extra.ORACLE_CELLS),
        Technique("bench", extra.run_bench, 0.05, NO_CELLS, needs=(RELEASE,)),
        Technique("interleave", interleave.run_interleave, 0.10, lambda quick: interleave.CELLS, needs=(RELEASE,)),
        Technique("libarena", libarena.run_libarena, 0.18, NO_CELLS, needs=(RELEASE, BUDDY)),
        Technique("fuzz", techniques.run_fuzz, None, techniques.fuzz_cells, needs=(FUZZ,), prefers=(CMPLOG,))]
NAMES = [t.name for t in PLAN]
# The reach report's replays of the fuzz campaign's inputs, at the end: a
# slice of the budget kept from fuzz's share (at e90c56a, --budget 300: 3 s of
# replays and 20 s of gcovr per engine, after the budget). The other
# techniques' replays run in the lane while the later techniques run.
REACH_SHARE = 0.10
REACH_SECONDS = 300  # each other technique's replays (in the lane, beside the later techniques)


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
    plan = {t.name: t.share for t in PLAN if t.name in selected}
    if "fuzz" in plan:
        return plan
    total = sum(plan.values())
    return {name: share / total for name, share in plan.items()}


def lane_builds(run, only, with_reach):
    """(lane job, builder) for the selected techniques, in the order the lane builds them:
    what the earliest techniques wait for first, the coverage build (the reach report's) last."""
    jobs = []
    # (proofs run the test tree's faultline-prove, first: the verdict table waits
    # for them, and Z3's rlimit makes its verdicts the release build's)
    release = [t for t, tech in (("faultline-bench", "bench"), ("faultline-cli", "interleave"),
                                 ("faultline-prove-libarena", "libarena"))
               if tech in only]
    if release:
        jobs.append((RELEASE, lambda: extra.build_release(run, release)))
    if "libarena" in only:
        jobs.append((BUDDY, lambda: libarena.build_fuzzers(run)))
    if "fuzz" in only:
        jobs.append((FUZZ, lambda: techniques.build_fuzzers(run)))
    if with_reach:
        jobs.append((COVERAGE, lambda: reach.build_coverage(run)))
    return jobs


class Cmplog:
    """The AFL++ CmpLog twins (only AFL++ runs long enough to reach CmpLog's
    stages use them): the lane's last build, used by fuzz if ready when it
    starts, else stopped there (run.cmplog.finish())."""

    def __init__(self, run):
        self.run, self.build, self.stopped = run, None, False
        self.lock = threading.Lock()

    def work(self):
        with self.lock:
            if self.stopped:
                return False, "not started: fuzz started first"
            self.build = techniques.start_cmplog_build(self.run)
        self.build.proc.wait()
        return self.build.proc.returncode == 0, "built" if self.build.proc.returncode == 0 else "failed or stopped"

    def finish(self):
        with self.lock:
            self.stopped = True
            if self.build is None:
                return False, f"{CMPLOG}: not started (the lane was busy with the other builds)"
        return self.build.finish()


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
    fractions = shares(a.only)
    plan = [dataclasses.replace(t, share=fractions[t.name]) for t in PLAN if t.name in a.only]
    decides = {t.name: t.cells(a.quick) for t in PLAN}
    expected = verdicts.load_expected(EXPECTED)
    reached, coverage = {}, {}
    reserve = a.budget * REACH_SHARE if with_reach and "fuzz" in a.only else 0.0
    builds = {}  # lane job -> builder

    def built(job):
        if job.name not in builds:  # a reach job, or the CmpLog build (it records its own time)
            progress.note(f"lane: {job.name}: {job.what} in {job.took:.0f} s")
            return
        if job.ok and job.what != steps.UP_TO_DATE:  # "last time" is the last time it built something
            steps.record(job.name, job.took, ROOT)
        done = "up to date, checked" if job.what == steps.UP_TO_DATE else "built" if job.ok else f"FAILED ({job.what})"
        progress.note(f"lane: {job.name} {done} in {job.took:.0f} s")

    lane = Lane(on_done=built)
    builder = dataclasses.replace(run, progress=progress.lane_sink())  # the lane's ninja lines: status line only
    builds.update(lane_builds(builder, a.only, with_reach))
    for name, build in builds.items():
        lane.add(name, build)
    if "fuzz" in a.only and not a.quick:
        run.cmplog = Cmplog(builder)
        lane.add(CMPLOG, run.cmplog.work, priority=2)
    progress.note(f"budget {a.budget:.0f} s, seed {a.seed}, techniques: {', '.join(a.only)}; building in the lane "
                  f"(niced, one at a time): {', '.join(steps.announce(n, root=ROOT) for n in lane.queue())}")

    reach_ends = []  # once the techniques are done: when the reach report's slice ends

    def reach_later(r):
        """The reach report's replays of r's inputs, in the lane behind the builds; the jobs the lane
        has not done when the techniques end share the reach report's slice of the budget."""
        for tech, arg_lists in reach.inputs(run, [r]).items():
            def work(tech=tech, arg_lists=arg_lists):
                seconds = REACH_SECONDS
                if reach_ends:  # this job and the reach jobs still queued share what is left
                    left = reach_ends[0] - time.monotonic()
                    seconds = min(seconds, left / (1 + sum(n.startswith("reach ") for n in lane.queue())))
                reached[tech], c = reach.reach_one(run, tech, arg_lists, seconds)
                if c:
                    coverage[tech] = c
                return True, f"{len(arg_lists)} input sets replayed"
            lane.add(f"reach {tech}", work, priority=1)

    def run_one(t, seconds, fallback):
        missing = [n for n in t.prefers if n in lane.names() and n not in lane.finished()]
        progress.begin(t.name, f"share {seconds:.0f} s" + (f" (without {', '.join(missing)}: not built yet)"
                                                            if fallback and missing else ""))
        t0 = time.monotonic()
        try:
            r = t.runner(run, seconds)
        except Exception as e:  # a broken technique is reported, not fatal to the others
            r = techniques.Result(t.name, "failed", f"{type(e).__name__}: {e}")
        r.share, r.used = seconds, time.monotonic() - t0
        r.seconds = r.seconds or r.used
        progress.note(f"{t.name}: {r.status}, {r.budget_text()}, {len(r.evidence)} evidence records"
                      f"{' — ' + r.reason if r.reason else ''}")
        if with_reach and t.name in reach.FED_BY and r.status != "skipped":
            reach_later(r)
        return r

    def judge(results):
        judged = verdicts.judged_cells(results, decides)
        return verdicts.decide(results, judged, verdicts.search_only_cells(results, decides))

    def show(decided, heading):
        progress.note(f"verdict table, {heading}")
        print_table(decided, expected, heading)

    watch = TableWatch([t.name for t in plan if t.decides_table], judge, show)
    results, ledger = run_plan(plan, lane, a.budget, run_one, watch.update, progress.note, reserve)
    if lane.cancel(CMPLOG):
        progress.note(f"lane: {CMPLOG} dropped (fuzz ran without it)")
    t0 = time.monotonic()
    if reserve:
        reach_ends.append(t0 + reserve)
    if with_reach:
        progress.begin("reach", "the lane's last replays (what each technique reached, its coverage of src/kernel)")
    lane.close()
    reach_used = time.monotonic() - t0
    if with_reach:
        reach.write_json(run, reached, coverage)
        progress.note(f"reach: {len(reached)} techniques replayed; the last {reach_used:.0f} s after the techniques"
                      + (f" (share {reserve:.0f} s)" if reserve else ""))
    progress.close()

    judged = verdicts.judged_cells(results, decides)
    decided = judge(results)
    mismatches = verdicts.compare(decided, expected)
    failed = [r for r in results if r.status == "failed"]  # includes oracle disagreements
    harness = [h for r in results for h in r.metrics.get("harness_problems", [])]
    ok = not mismatches and not failed and not harness
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "commit": git_commit(),
            "budget": a.budget, "elapsed": progress.elapsed(), "seed": a.seed,
            "techniques": ledger.spent, "waited": ledger.waited(), "reach": {"share": reserve, "used": reach_used},
            "order": ledger.order, "lane": lane.summary(),
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
    show(decided, "final")
    for cell, want, got in mismatches:
        print(f"MISMATCH {cell}: expected {want}, got {got}")
    for r in failed:
        print(f"FAILED {r.technique}: {r.reason}")
    for h in harness:
        print(f"HARNESS PROBLEM {h['task']} ({h['engine']}): {h['what']} -> {h['file']}")
    print(f"report: {os.path.join(a.report, 'index.html')} and summary.md; {meta['outcome']}")
    return 0 if ok else 1


def print_table(decided, expected, heading):
    print(f"\nverdict table, {heading}")
    print(f"{'cell':22s} {'verdict':21s} {'vs pre':20s} {'found by (fastest first)':44s} smallest counterexample")
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
