#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""faultline verify's own logic: evidence -> verdicts, the shipped
expectations, and parsing the proof table. Run by ctest (verify.logic)."""
import os
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from verifylib import background, reach, steps, verdicts  # noqa: E402
from verifylib.evidence import CELLS, Evidence  # noqa: E402
from verifylib.techniques import Result, parse_prove_table  # noqa: E402


def checked_everywhere(technique="corpus"):
    return Result(technique, metrics={"cells_checked": CELLS})


def violation(cell, technique="afl", seconds=1.0, program="", ops=0, rescue=""):
    return Evidence(technique, cell, "violation", "violation foreign_page", seconds, program, ops, rescue)


class Verdicts(unittest.TestCase):
    def decide(self, *evidence):
        return verdicts.decide([checked_everywhere(), Result("x", evidence=list(evidence))])

    def test_clean_cells_are_sound_and_unseen_cells_unknown(self):
        v = verdicts.decide([Result("corpus", metrics={"cells_checked": ["v2/arch32/anon"]})])
        self.assertEqual(v["v2/arch32/anon"]["verdict"], "sound")
        self.assertEqual(v["v2/arch32/regular"]["verdict"], "unknown")

    def test_a_violation_at_a_real_door_is_unsound_and_makes_direct_unsound(self):
        v = self.decide(violation("v1/arch32/regular"))
        self.assertEqual(v["v1/arch32/regular"]["verdict"], "unsound")
        self.assertEqual(v["v1/arch32/direct"]["verdict"], "unsound")
        self.assertEqual(v["v1/arch32/anon"]["verdict"], "sound")
        self.assertEqual(v["v1/arch32/regular"]["vs_pre"], "less safe than pre")

    def test_direct_only_violations_are_assumption_dependent_with_the_proofs_rescue(self):
        v = self.decide(violation("v2/arch64/direct", "proof", rescue="range"))
        self.assertEqual(v["v2/arch64/direct"]["verdict"], "assumption-dependent")
        self.assertIn("2^52", v["v2/arch64/direct"]["assumption"])
        v = self.decide(violation("v2/arch64/direct"))
        self.assertIn("do_mmap", v["v2/arch64/direct"]["assumption"])

    def test_fastest_technique_and_smallest_program(self):
        v = self.decide(violation("v1/arch32/regular", "afl", 3.0, "b.fl", 5),
                        violation("v1/arch32/regular", "libfuzzer", 0.5, "a.fl", 2),
                        violation("v1/arch32/regular", "afl", 1.5, "c.fl", 9))
        cell = v["v1/arch32/regular"]
        self.assertEqual(cell["found_by"]["afl"]["seconds"], 1.5)
        self.assertEqual(cell["found_by"]["afl"]["count"], 2)
        self.assertEqual(cell["smallest"]["program"], "a.fl")

    def test_compare_reports_only_differing_cells(self):
        v = self.decide(violation("v1/arch32/regular"))
        self.assertEqual(verdicts.compare(v, {"v1/arch32/regular": "unsound", "v2/arch32/anon": "sound"}), [])
        self.assertEqual(verdicts.compare(v, {"v1/arch32/anon": "unsound"}), [("v1/arch32/anon", "unsound", "sound")])

    def test_a_search_alone_does_not_decide_what_it_did_not_find(self):
        # `verify --only props`: a violation the search did not find in its share is not a
        # mismatch (not finding is not proving); a violation where none is expected still is
        decides = {"props": CELLS, "proofs": CELLS, "corpus": CELLS}
        ran = [Result("props", evidence=[violation("v2/arch32/anon")], metrics={"cells_checked": CELLS})]
        search_only = verdicts.search_only_cells(ran, decides)
        self.assertEqual(search_only, set(CELLS))
        v = verdicts.decide(ran, verdicts.judged_cells(ran, decides), search_only)
        want = {"pre/arch64/direct": "assumption-dependent", "v1/arch32/regular": "unsound",
                "v2/arch32/anon": "sound", "v2/arch64/anon": "sound"}
        self.assertEqual(verdicts.compare(v, want), [("v2/arch32/anon", "sound", "unsound")])
        # with the proofs or the corpus beside it, the same silence is a mismatch (as in every full run)
        ran.append(Result("corpus", metrics={"cells_checked": CELLS}))
        search_only = verdicts.search_only_cells(ran, decides)
        self.assertEqual(search_only, set())
        v = verdicts.decide(ran, verdicts.judged_cells(ran, decides), search_only)
        self.assertEqual(sorted(verdicts.compare(v, want)),
                         [("pre/arch64/direct", "assumption-dependent", "sound"),
                          ("v1/arch32/regular", "unsound", "sound"), ("v2/arch32/anon", "sound", "unsound")])

    def test_only_the_cells_a_selected_technique_decides_are_judged(self):
        # `verify --only oracle,interleave`: the oracle decides pre/arch64/anon, the explorer
        # v2/v3 at anon/regular; the rest of the table is `not run`, never a mismatch
        decides = {"oracle": ["pre/arch64/anon"], "interleave": ["v2/arch32/anon", "v2/arch32/regular"],
                   "props": CELLS}
        ran = [Result("oracle", metrics={"cells_checked": ["pre/arch64/anon"]}),
               Result("interleave", evidence=[violation("v2/arch32/regular", "interleave")],
                      metrics={"cells_checked": ["v2/arch32/anon", "v2/arch32/regular"]}),
               Result("libarena")]
        judged = verdicts.judged_cells(ran, decides)
        self.assertEqual(judged, {"pre/arch64/anon", "v2/arch32/anon", "v2/arch32/regular"})
        v = verdicts.decide(ran, judged)
        self.assertEqual(v["v1/arch32/regular"]["verdict"], verdicts.NOT_RUN)
        self.assertEqual(v["v2/arch32/direct"]["verdict"], verdicts.NOT_RUN)
        self.assertEqual(v["v2/arch32/anon"]["vs_pre"], "")  # pre/arch32/anon was not run
        want = verdicts.load_expected(os.path.join(ROOT, "tools", "verifylib", "expected"))
        # the decided wrong cell is still a mismatch; v1/arch32/regular (expected unsound) is not
        self.assertEqual(verdicts.compare(v, want), [("v2/arch32/regular", "sound", "unsound")])
        # a skipped technique decides nothing; a violation outside the judged cells is still judged
        self.assertEqual(verdicts.judged_cells([Result("props", "skipped")], decides), set())
        v = verdicts.decide([Result("fuzz", evidence=[violation("v2/arch64/anon")])], set())
        self.assertEqual(verdicts.compare(v, want), [("v2/arch64/anon", "sound", "unsound")])

    def test_the_shipped_expectations_cover_every_cell(self):
        want = verdicts.load_expected(os.path.join(ROOT, "tools", "verifylib", "expected"))
        self.assertEqual(sorted(want), sorted(CELLS))
        self.assertEqual(want["v1/arch32/regular"], "unsound")

    def test_a_malformed_expectations_file_is_an_error(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("v1/arch32/regular broken\n")
        with self.assertRaisesRegex(ValueError, ":1: expected"):
            verdicts.load_expected(f.name)
        os.unlink(f.name)


class ProveTable(unittest.TestCase):
    # faultline-prove's output as it prints it (smt/main.cpp), the paths column included
    TABLE = """ob level arch page assume   result                     time  paths  replay / expected
1  v1    32   4k   regular  cex                       29ms     12  reproduced: violation foreign_page at op 2 (v1/...)
      value_size=8 max_entries=4096 bypass_spec_v1=1 vm_pgoff=0x2ffffb len=0xc000 page=0x4
1  v2    64   4k   direct   cex rescue=range          34ms      8  reproduced: violation foreign_page at op 1 (v2/...)
1  v2    32   64k  anon     proved                   255ms     13  
3  v2    32   4k   direct   cex rescue=anon           58ms     18  reproduced: pre: violation foreign_page at op 1 (pre/...)
5  any   64   4k   -        proved                    12ms      8  
5 rows, 0 mismatched; rows 0.39 s, wall 0.30 s on 2 threads; 0 wall-clock-guarded tries
"""

    def test_rows_become_evidence_per_cell(self):
        rows, ev = parse_prove_table(self.TABLE, "/nonexistent")
        self.assertEqual(len(rows), 5)
        by = {(e.cell, e.outcome) for e in ev}
        # the obligation-3 row whose replay breaks pre is pre's evidence, not v2's
        self.assertEqual(by, {("v1/arch32/regular", "violation"), ("v2/arch64/direct", "violation"),
                              ("v2/arch32/anon", "proved"), ("pre/arch32/direct", "violation")})
        self.assertEqual([e.rescue for e in ev if e.cell == "v2/arch64/direct"], ["range"])
        self.assertAlmostEqual([e.seconds for e in ev if e.cell == "v1/arch32/regular"][0], 0.029)


class ReachReport(unittest.TestCase):
    PART = {"programs": 2, "runs": 3, "op_checks": 10, "contents_bytes": 8, "ops": {"mmap": [2, 1]},
            "buckets": {"map data > 4 GiB (created)": 1}, "violations": {}}

    def test_parts_add_up(self):
        total = {}
        reach._merge(total, self.PART)
        reach._merge(total, self.PART)
        self.assertEqual((total["runs"], total["ops"]["mmap"], total["buckets"]["map data > 4 GiB (created)"]),
                         (6, [4, 2], 2))

    def test_unreached_functions_ignore_the_hand_written_corpus(self):
        cov = {"corpus": {"functions": {"a.cpp:f": 3, "a.cpp:g": 1}},
               "props": {"functions": {"a.cpp:f": 1, "a.cpp:g": 0}},
               "afl": {"functions": {"a.cpp:f": 0, "a.cpp:g": 0}}}
        self.assertEqual(reach.unreached_functions(cov), ["a.cpp:g"])

    def test_every_unreached_arena_function_says_why(self):
        cov = {"props": {"lines": [1, 2], "branches": [1, 2],
                         "functions": {"src/kernel/kernel/bpf/arena.cpp:arena_map_alloc": 0,
                                       "src/kernel/mm/vmalloc.cpp:get_vm_area": 0,
                                       "src/kernel/mm/vmalloc.cpp:mystery": 0}}}
        meta = {}
        reach.add_sections(meta, {"props": self.PART}, cov, reach.WHY_UNREACHED)
        md = "\n".join(meta["extra_md"][0])
        self.assertRegex(md, r"arena_map_alloc` — arena maps: ")
        self.assertRegex(md, r"get_vm_area` — arena_map_alloc's kernel VM area only")
        self.assertIn("- `src/kernel/mm/vmalloc.cpp:mystery`\n", md + "\n")

    def test_the_table_marks_a_wanted_bucket_nobody_reached(self):
        meta = {}
        reach.add_sections(meta, {"props": self.PART}, {}, {})
        md = "\n".join(meta["extra_md"][0])
        self.assertIn("| map data > 4 GiB (created) | 1 |", md)
        self.assertIn("| v3 fault-around at a PTE-table edge | 0 |", md)
        self.assertIn("class='bad'", meta["extra_html"][0][1])


class CorpusEvidence(unittest.TestCase):
    """The hand-written corpus alone, through verify's own corpus runner,
    must not make any cell less safe than tools/verifylib/expected says:
    the arena map's Programs (its historical levels, the MADV_DOFORK hole)
    once made pre's 64-bit array map unsound."""

    def test_the_corpus_alone_stays_within_the_expected_verdicts(self):
        cli = os.path.join(ROOT, "build", "default", "faultline-cli")
        if not os.access(cli, os.X_OK):
            self.skipTest(f"{cli} is not built")
        from verifylib.techniques import Run, run_corpus, is_arena_program, corpus_files
        self.assertTrue(any(is_arena_program(f) for f in corpus_files(ROOT)))
        with tempfile.TemporaryDirectory() as tmp:
            progress = type("Quiet", (), {"update": lambda self, line: None})()
            res = run_corpus(Run(ROOT, tmp, 1, progress), 120)
        self.assertEqual(res.status, "ran", res.reason)
        self.assertGreater(res.metrics["arena_runs"], 0)
        got = verdicts.decide([res])
        want = verdicts.load_expected(os.path.join(ROOT, "tools", "verifylib", "expected"))
        worse = [(c, want[c], got[c]["verdict"]) for c in CELLS
                 if verdicts.RANK[got[c]["verdict"]] > verdicts.RANK[want[c]]]
        self.assertEqual(worse, [])


class OracleShare(unittest.TestCase):
    """verify's reading of faultline oracle: a whole-run skip, arena Programs
    skipped beside compared ones (a host that refuses arena maps), a disagreement."""

    def share(self, rc, text):
        from unittest import mock
        from verifylib import extra
        run = type("FakeRun", (), {"quick": True, "root": ROOT, "seed": 1, "tool": lambda self, *p: "cli",
                                   "rel": lambda self, p: p})()
        with mock.patch.object(extra, "corpus_files", lambda root: ["a.fl", "arena_b.fl"]), \
                mock.patch.object(extra, "run_logged", lambda *a, **k: (rc, text, "oracle.log")):
            return extra.run_oracle(run, 10)

    def summary(self, disagree=0, skipped=None):
        tail = "" if skipped is None else f", {skipped} skipped"
        return (f"oracle: 7 programs in 1.0 s: {6 - disagree} agree (0 up to a documented difference), {disagree} "
                f"disagree, 0 unsupported, 0 errors{tail} (seed 1)\n")

    def test_nothing_ran(self):
        res = self.share(0, "skipped: bpf(BPF_MAP_CREATE): Operation not permitted\n")
        self.assertEqual((res.status, res.reason), ("skipped", "bpf(BPF_MAP_CREATE): Operation not permitted"))

    def test_arena_programs_skipped_beside_compared_ones(self):
        why = "1 arena Program: the host refuses BPF_MAP_TYPE_ARENA (-EPERM)"
        res = self.share(0, "oracle: host kernel vs port ...\nskipped: " + why + "\n" + self.summary(skipped=1))
        self.assertEqual(res.status, "ran")
        self.assertEqual(res.metrics["skipped"], 1)
        self.assertIn("skipped: " + why, res.reason)
        self.assertEqual(self.share(0, self.summary()).metrics["skipped"], 0)  # the line before skips were counted

    def test_a_disagreement_fails_whatever_was_skipped(self):
        res = self.share(1, "skipped: 1 arena Program: the host refuses BPF_MAP_TYPE_ARENA (-EPERM)\n" +
                         self.summary(disagree=1, skipped=1))
        self.assertEqual(res.status, "failed")


class BackgroundBuilds(unittest.TestCase):
    """verify's background CmpLog build: used when it finished, stopped (its
    whole process group) when it did not, its time recorded only when built."""

    def test_a_finished_build_is_used_and_its_time_recorded(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = background.BackgroundBuild("cmplog", ["true"], tmp, os.path.join(tmp, "log"))
            b.proc.wait()
            built, what = b.finish()
            self.assertTrue(built, what)
            self.assertIn("cmplog", steps.load(tmp))
            self.assertIn("last time", b.announce())

    def test_an_unfinished_build_is_stopped_with_its_children(self):
        with tempfile.TemporaryDirectory() as tmp:
            pidfile = os.path.join(tmp, "child")
            b = background.BackgroundBuild("cmplog", ["bash", "-c", f"sleep 60 & echo $! >{pidfile}; wait"], tmp,
                                           os.path.join(tmp, "log"))
            read = lambda: open(pidfile).read().strip() if os.path.exists(pidfile) else ""  # noqa: E731
            for _ in range(100):  # until the child has started
                if read():
                    break
                time.sleep(0.05)
            built, what = b.finish()
            self.assertFalse(built)
            self.assertIn("stopped", what)
            self.assertEqual(b.proc.poll(), -15)
            child = int(read())
            for _ in range(100):  # the child got the group's SIGTERM too
                try:
                    os.kill(child, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            else:
                self.fail("the build's child still runs")
            self.assertNotIn("cmplog", steps.load(tmp))

    def test_a_failed_build_is_not_used(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = background.BackgroundBuild("cmplog", ["false"], tmp, os.path.join(tmp, "log"))
            b.proc.wait()
            built, what = b.finish()
            self.assertFalse(built)
            self.assertIn("failed", what)


class IdleBuilds(unittest.TestCase):
    """A build that built nothing is not "how long it took last time"."""

    def test_idle_builds_are_up_to_date_and_real_ones_give_their_last_line(self):
        self.assertEqual(steps.outcome(0, "[0/2] Re-checking\nninja: no work to do.\n"), (True, steps.UP_TO_DATE))
        idle = "[build] libfuzzer: 0 objects compiled, 0 targets linked, 24 configurations named in 11 s\n"
        self.assertEqual(steps.outcome(0, idle + idle.replace("libfuzzer", "afl")), (True, steps.UP_TO_DATE))
        linked = idle.replace("0 targets linked", "1 targets linked")
        self.assertEqual(steps.outcome(0, idle + linked), (True, linked.strip()))
        self.assertEqual(steps.outcome(0, "[3/3] Linking CXX executable faultline-cli\n"),
                         (True, "[3/3] Linking CXX executable faultline-cli"))
        self.assertEqual(steps.outcome(1, "ninja: no work to do.\nFAILED: x\n"), (False, "FAILED: x"))


class FuzzClock(unittest.TestCase):
    """The campaign's slices: the time left in a slot over the runs it still has, less what
    finished runs cost beyond their slice, so that the campaign ends by its --time."""

    def test_slices_share_what_is_left_and_pay_for_the_overhead_seen(self):
        import fuzz_campaign
        from unittest import mock
        now = [1000.0]
        with mock.patch.object(fuzz_campaign.time, "time", lambda: now[0]):
            clock = fuzz_campaign.Clock(100, runs=4, jobs=2)
            self.assertAlmostEqual(clock.slice(start=False), 50)  # two runs per slot
            self.assertAlmostEqual(clock.slice(), 50)
            self.assertAlmostEqual(clock.slice(), 50)
            now[0] += 60  # both ran 10 s past their 50 s (start-up, findings)
            clock.finished(60, 50)
            clock.finished(60, 50)
            self.assertAlmostEqual(clock.slice(), 30)  # 40 s left, one run per slot, less 10 s
            clock = fuzz_campaign.Clock(40, runs=20, jobs=2)
            self.assertEqual(clock.slice(), fuzz_campaign.MIN_SLICE)  # never below the shortest useful run
            now[0] += 36
            self.assertEqual(clock.slice(), 0)  # 4 s left: no room for a useful run, it is skipped


class FuzzMinimiseInTheSlice(unittest.TestCase):
    """A run that has found something stops fuzzing early enough for its minimisation, which
    gets what is left of the run's slice less describing and replaying the result: the last
    wave's findings no longer take the campaign past its --time."""

    def test_the_minimiser_gets_what_is_left_of_the_slice(self):
        import fuzz_campaign
        from unittest import mock
        self.assertEqual(fuzz_campaign.minimise_cut(400), fuzz_campaign.DESCRIBE_SECONDS +
                         fuzz_campaign.MINIMISE_SECONDS + fuzz_campaign.AFTER_MINIMISE)
        self.assertEqual(fuzz_campaign.minimise_cut(20), 10)  # never more than half the slice
        task = fuzz_campaign.Task("program", "v1", "32", "regular", "libfuzzer")
        now = [1000.0]
        limits = []
        with mock.patch.object(fuzz_campaign.time, "time", lambda: now[0]), \
                mock.patch.object(fuzz_campaign, "_run_minimiser", lambda t, c, o, limit: limits.append(limit)), \
                mock.patch.object(fuzz_campaign, "CLOCK", fuzz_campaign.Clock(100, runs=2, jobs=2)), \
                mock.patch.object(fuzz_campaign, "say", lambda msg: None):
            task.deadline = now[0] + 20.5
            fuzz_campaign.minimise(task, "/nonexistent/crash")
            task.deadline = now[0] + 100
            fuzz_campaign.minimise(task, "/nonexistent/crash")
            task.deadline = now[0] + 200
            now[0] += 88  # the campaign's deadline (12 s left) comes first
            fuzz_campaign.minimise(task, "/nonexistent/crash")
            now[0] += 8  # 4 s left: kept as found
            self.assertEqual(fuzz_campaign.minimise(task, "/nonexistent/crash"), "/nonexistent/crash")
        self.assertEqual(limits, [15, fuzz_campaign.MINIMISE_SECONDS, 12 - fuzz_campaign.AFTER_MINIMISE])


class FuzzFailingInputs(unittest.TestCase):
    """A shallow level fails at every restart: a seed that fails is set aside, the same file
    written again is described once, and describing stops at its budget (the rest counted)."""

    def test_a_failing_seed_is_set_aside(self):
        import fuzz_campaign
        with tempfile.TemporaryDirectory() as d:
            seeds, corpus = os.path.join(d, "seeds"), os.path.join(d, "corpus")
            os.makedirs(seeds)
            os.makedirs(corpus)
            for folder, name, data in ((seeds, "seed01", b"ok"), (seeds, "seed02", b"bad"), (corpus, "abc", b"bad"),
                                       (corpus, "def", b"bad!"), (d, "crash-1", b"bad")):
                with open(os.path.join(folder, name), "wb") as f:
                    f.write(data)
            fuzz_campaign.drop_input(os.path.join(d, "crash-1"), [corpus, seeds, None])
            self.assertEqual(sorted(os.listdir(seeds)), ["seed01"])
            self.assertEqual(sorted(os.listdir(corpus)), ["def"])

    def test_each_file_is_described_once_until_the_budget(self):
        import fuzz_campaign
        from unittest import mock
        now = [1000.0]
        described = []

        def describe(task, crash):
            described.append(crash)
            now[0] += 25
            return "violation at op 2: I12: free returned 0", "level ret_overwrite\n"

        task = fuzz_campaign.Task("buddy", None, None, None, "libfuzzer", "ret_overwrite")
        task.crashes = [(1.0, "a"), (2.0, "a"), (3.0, "b"), (4.0, "c"), (5.0, "d"), (6.0, "e")]
        with mock.patch.object(fuzz_campaign.time, "time", lambda: now[0]), \
                mock.patch.object(fuzz_campaign, "describe", describe), \
                mock.patch.object(fuzz_campaign, "minimise", lambda t, crash: crash), \
                mock.patch.object(fuzz_campaign, "buddy_finding", lambda *a: {"replays": True}):
            fuzz_campaign.collect_findings(task)
        # a (written twice; described again once minimised), then b, 50 s in; c, d and e are past 60 s
        self.assertEqual(described, ["a", "a", "b"])
        self.assertEqual(len(task.findings), 1)
        self.assertEqual(task.findings[0]["count"], 3)
        self.assertEqual(task.undescribed, 3)


class FuzzSkippedRuns(unittest.TestCase):
    def test_a_run_the_budget_skipped_checks_no_cell(self):
        import json
        from unittest import mock
        from verifylib import techniques

        def task(door, skipped):
            return {"name": f"program-v2-arch64-{door}", "engine": "afl", "target": "program", "patch": "v2",
                    "arch": "64", "door": door, "findings": [], "skipped": skipped}

        def campaign(run, name, argv, timeout, **kw):
            with open(argv[argv.index("--json") + 1], "w") as f:
                json.dump([task("anon", False), task("regular", True)], f)
            return 0, "", "fuzz.log"

        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(techniques, "run_logged", campaign):
            res = techniques.run_fuzz(techniques.Run(ROOT, tmp, 1, None), 30)
        self.assertEqual(res.metrics["cells_checked"], ["v2/arch64/anon"])
        self.assertIn("1 of 2 runs skipped", res.reason)
        # the skipped cell is `not run` for the judge, the one that ran is judged
        judged = verdicts.judged_cells([res], {"fuzz": ["v2/arch64/anon", "v2/arch64/regular"]})
        self.assertEqual(judged, {"v2/arch64/anon"})


class SwarmRows(unittest.TestCase):
    """The swarm's lines (tools/interleave.cpp swarm_main) become per-cell rows with their finding."""

    def test_a_quiet_cell_and_a_finding_with_its_file(self):
        from verifylib import interleave
        text = ("swarm v2/arch64/4k/anon/mask seed 1: 12 programs (9 exhausted), 900 schedules (210 distinct, "
                "690 repeats, 0 unclassified), 2.00 s, 105 distinct/s: no finding\n"
                "swarm v3/arch32/4k/regular/mask seed 1: 3 programs (1 exhausted), 80 schedules (40 distinct, "
                "40 repeats, 0 unclassified), 0.50 s, 80 distinct/s: FINDING\n"
                "  program 3, found by bounded(1 departures) at schedule 7: violation page_refcount at op 4: x\n"
                "  written to out/swarm-page_refcount-seed1-3.fl\n")
        quiet, found = interleave.parse_swarm(text)
        self.assertEqual((quiet["cell"], quiet["programs"], quiet["distinct"], quiet["finding"]),
                         ("v2/arch64/anon", 12, 210, None))
        self.assertEqual(found["cell"], "v3/arch32/regular")
        self.assertEqual(found["finding"]["what"], "violation page_refcount")
        self.assertEqual(found["finding"]["file"], "out/swarm-page_refcount-seed1-3.fl")


class InterleaveSeed(unittest.TestCase):
    """verify's --seed reaches the explorer's walks and the swarm's Programs: without it every
    verify searched the same generated Programs whatever its seed."""

    def test_the_searching_runs_take_the_seed(self):
        from unittest import mock
        from verifylib import interleave
        calls = []
        run = type("FakeRun", (), {"root": ROOT, "seed": 4242, "folder": lambda self, n: "out",
                                   "rel": lambda self, p: p})()
        with mock.patch.object(interleave, "cli", lambda run: "cli"), \
                mock.patch.object(interleave, "run_logged", lambda run, name, cmd, limit: calls.append((name, cmd))
                                  or (0, "", name + ".log")):
            interleave.run_interleave(run, 1)
        seeded = {name for name, cmd in calls if "--seed" in cmd and cmd[cmd.index("--seed") + 1] == "4242"}
        self.assertEqual(seeded, {"interleave-explore", "interleave-swarm"})


class BuddySwarmRows(unittest.TestCase):
    """`buddy-explore --swarm`'s lines (src/libarena/explore/main.cpp) become counts and a finding."""

    def test_quiet_counts_and_a_finding_with_its_file(self):
        from verifylib import libarena
        counts, found = libarena.parse_buddy_swarm(
            "buddy swarm series seed 1: 48 programs (10 exhausted), 897 schedules (834 distinct, 63 repeats, "
            "0 unclassified), 10.20 s, 82 distinct/s: no finding\n")
        self.assertEqual((counts["programs"], counts["exhausted"], counts["distinct"], counts["repeats"], found),
                         (48, 10, 834, 63, None))
        counts, found = libarena.parse_buddy_swarm(
            "buddy swarm guard_leak seed 1: 1 programs (0 exhausted), 1 schedules (1 distinct, 0 repeats, "
            "0 unclassified), 0.09 s, 11 distinct/s: FINDING\n"
            "  program 1 (generator seed 1), found by default at schedule 1 after 0.09 s: op 6: I10: CPU 0's "
            "cache guard is set between its ops (replays)\n# expect violation I10 at op 6 at guard_leak\n"
            "  written to out/swarm-guard_leak-seed1-1.bl\n")
        self.assertEqual((found["what"], found["strategy"], found["replays"], found["file"]),
                         ("I10", "default", True, "out/swarm-guard_leak-seed1-1.bl"))
        # an invariant at a scheduling point, and a race checker's report, name their checker too
        for report, what in (("op 17: at buddy_xfer_unlock:release on CPU 2: I8: the order-5 transfer cache holds "
                              "0xdead00000000000b, which is not an allocated block (replays)", "I8"),
                             ("op 26: at T3 store32:write#29: I8: the order-4 transfer cache holds", "I8"),
                             ("op 47: schedule: violation: lockset: data race on arena word 0x7ffefffff954: T0 read "
                              "at load32:read (after buddy_cache_refill:count_checked)", "lockset")):
            _, found = libarena.parse_buddy_swarm("  program 569 (generator seed 9), found by pct at schedule 3 "
                                                  "after 5.88 s: " + report + "\n")
            self.assertEqual(found["what"], what)


class TechniqueShares(unittest.TestCase):
    def test_without_fuzz_the_selected_shares_fill_the_budget(self):
        import verify
        self.assertEqual(verify.shares(["libarena"]), {"libarena": 1.0})
        both = verify.shares(["proofs", "corpus"])
        self.assertAlmostEqual(both["proofs"], 2 * both["corpus"])
        self.assertAlmostEqual(sum(both.values()), 1.0)
        whole = verify.shares(verify.NAMES)  # the whole run: each its planned fraction, fuzz what is left
        self.assertIsNone(whole["fuzz"])
        self.assertEqual(whole["proofs"], 0.10)

    def test_budget_text_flags_an_overrun_past_five_percent(self):
        self.assertEqual(Result("fuzz", share=100, used=104).budget_text(), "share 100 s, used 104 s")
        self.assertIn("OVER by 36%", Result("fuzz", share=316, used=429).budget_text())


class BuildSteps(unittest.TestCase):
    """build/.timings.json: the line before a step says how long it took last time and what is left."""

    def test_a_recorded_step_is_announced_with_its_last_time(self):
        from verifylib import steps
        with tempfile.TemporaryDirectory() as root:
            self.assertEqual(steps.announce("build m32", ["ctest m32"], root),
                             "build m32 (no earlier timing here; then: ctest m32)")
            steps.record("build m32", 201.4, root)
            steps.record("ctest m32", 59.6, root)
            self.assertEqual(steps.announce("build m32", ["ctest m32", "report"], root),
                             "build m32 (last time 201 s; then: ctest m32 ~60 s, report)")

    def test_a_failing_step_keeps_its_status_and_is_not_recorded(self):
        import subprocess
        from verifylib import steps
        name = "verify_test failing step"
        cli = [sys.executable, os.path.join(ROOT, "tools", "verifylib", "steps.py")]
        r = subprocess.run(cli + [name, "", "sh", "-c", "exit 3"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 3)
        self.assertIn("FAILED (exit 3)", r.stderr)
        self.assertNotIn(name, steps.load())
        self.assertEqual(subprocess.run(cli + [name], capture_output=True).returncode, 2)


class Options(unittest.TestCase):
    def run_verify(self, *args):
        import subprocess
        return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "verify.py"), *args],
                              capture_output=True, text=True, timeout=60)

    def test_bad_options_exit_2_with_a_message(self):
        for args, msg in ((["--budget", "0"], "--budget"), (["--budget", "ten"], "--budget"),
                          (["--only", "proofs,nope"], "unknown technique 'nope'"), (["--frobnicate"], "unrecognized")):
            r = self.run_verify(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(msg, r.stderr)


class FakeLane:
    """The lane's interface with no threads: a wait ends the next queued job."""

    def __init__(self, *jobs):
        self.jobs, self.over, self.log = list(jobs), set(), []

    def names(self):
        return set(self.jobs)

    def finished(self):
        return set(self.over)

    def wait_change(self):
        job = next(j for j in self.jobs if j not in self.over)
        self.over.add(job)
        self.log.append(job)
        return self.finished()


def technique(name, share, needs=(), prefers=(), decides_table=False):
    from verifylib.schedule import Technique
    return Technique(name, None, share, lambda quick: CELLS, needs, prefers, decides_table)


class Schedule(unittest.TestCase):
    """verify's pipeline (verifylib/schedule.py): the order techniques run in while the
    lane builds, what each is given, and the time they waited (not on the budget)."""

    def plan(self):
        return [technique("proofs", 0.10, prefers=("release",), decides_table=True),
                technique("corpus", 0.05, decides_table=True), technique("bench", 0.05, needs=("release",)),
                technique("fuzz", None, needs=("fuzz targets",), prefers=("cmplog",))]

    def run_plan(self, lane, used, reserve=0.0):
        from verifylib import schedule
        calls = []

        def run_one(t, seconds, fallback):
            calls.append((t.name, round(seconds, 1), fallback, sorted(lane.finished())))
            return Result(t.name, used=used[t.name])
        results, ledger = schedule.run_plan(self.plan(), lane, 100, run_one, reserve=reserve)
        self.assertEqual([r.technique for r in results], [c[0] for c in calls])
        return calls, ledger

    def test_ready_techniques_first_a_fallback_before_waiting_and_waits_off_the_budget(self):
        lane = FakeLane("release", "fuzz targets", "cmplog")
        calls, ledger = self.run_plan(lane, {"proofs": 4, "corpus": 5, "bench": 5, "fuzz": 70}, reserve=5)
        self.assertEqual(calls, [("corpus", 5.0, False, []),              # needs nothing built: at once
                                 ("proofs", 10.0, True, []),              # nothing else can run: its fallback
                                 ("bench", 5.0, False, ["release"]),      # waited for the release build
                                 # waited for its targets, not for CmpLog (only preferred); what is left:
                                 # 100 - (5 + 4 + 5) spent - 5 kept for the reach report
                                 ("fuzz", 81.0, True, ["fuzz targets", "release"])])
        self.assertEqual([w for w, _ in ledger.waits], ["fuzz targets, release", "fuzz targets"])
        self.assertEqual(lane.log, ["release", "fuzz targets"])
        self.assertEqual(ledger.spent, 84)  # the techniques' own time only
        self.assertEqual([o[0] for o in ledger.order], ["corpus", "proofs", "bench", "fuzz"])

    def test_with_every_build_done_the_plan_order_stands(self):
        lane = FakeLane("release", "fuzz targets", "cmplog")
        lane.over = {"release", "fuzz targets", "cmplog"}
        calls, ledger = self.run_plan(lane, {"proofs": 12, "corpus": 1, "bench": 5, "fuzz": 70})
        self.assertEqual([(c[0], c[2]) for c in calls], [("proofs", False), ("corpus", False), ("bench", False),
                                                         ("fuzz", False)])
        self.assertEqual(calls[-1][1], 82.0)  # a technique's overrun comes out of fuzz's share
        self.assertEqual(ledger.waits, [])

    def test_the_techniques_that_decide_the_table_come_first_on_their_fallback(self):
        from verifylib import schedule
        proofs = technique("proofs", 0.10, prefers=("release",), decides_table=True)
        corpus = technique("corpus", 0.05, decides_table=True)
        oracle = technique("oracle", 0.10)  # ready, but decides no table cell
        self.assertEqual(schedule.pick([proofs, corpus, oracle], set(), {"release"}), (corpus, False))
        self.assertEqual(schedule.pick([proofs, oracle], set(), {"release"}), (proofs, True))
        self.assertEqual(schedule.pick([proofs, oracle], {"release"}, {"release"}), (proofs, False))
        self.assertEqual(schedule.pick([oracle], set(), {"release"}), (oracle, False))

    def test_a_build_that_was_never_queued_is_not_waited_for(self):
        from verifylib import schedule
        only_fuzz = [technique("fuzz", None, needs=("fuzz targets",), prefers=("cmplog",))]
        self.assertEqual(schedule.pick(only_fuzz, set(), {"fuzz targets"}), None)
        self.assertEqual(schedule.pick(only_fuzz, {"fuzz targets"}, {"fuzz targets"}), (only_fuzz[0], False))
        self.assertEqual(schedule.pick(only_fuzz, set(), set()), (only_fuzz[0], False))


class VerdictTableWatch(unittest.TestCase):
    """The table is shown once the techniques deciding every cell have run, marked provisional with
    what is still to come, again only when a verdict changes, and final at the end."""

    def test_provisional_then_updated_then_final(self):
        from verifylib.schedule import TableWatch
        shown, sound = [], {"v1/arch32/regular": {"verdict": "sound"}}
        unsound = {"v1/arch32/regular": {"verdict": "unsound"}}
        answer = [sound]
        watch = TableWatch(["proofs", "corpus"], lambda results: answer[0], lambda v, heading: shown.append(heading))
        rest = [technique("oracle", 0.1), technique("fuzz", None)]
        self.assertFalse(watch.update([Result("corpus")], [technique("proofs", 0.1)] + rest))
        self.assertTrue(watch.update([Result("corpus"), Result("proofs")], rest))
        self.assertEqual(shown, ["provisional (after corpus, proofs; still to come: oracle, fuzz)"])
        self.assertFalse(watch.update([Result("corpus"), Result("proofs"), Result("oracle")], rest[1:]))
        answer[0] = unsound
        self.assertTrue(watch.update([Result("corpus"), Result("proofs"), Result("oracle")], rest[1:]))
        self.assertIn("updated", shown[-1])
        self.assertFalse(watch.update([Result("corpus"), Result("proofs"), Result("oracle"), Result("fuzz")], []))
        self.assertIs(watch.final([]), unsound)
        self.assertEqual(shown[-1], "final")

    def test_without_a_deciding_technique_only_the_final_table(self):
        from verifylib.schedule import TableWatch
        shown = []
        watch = TableWatch([], lambda results: {}, lambda v, heading: shown.append(heading))
        self.assertFalse(watch.update([Result("fuzz")], [technique("interleave", 0.1)]))
        self.assertEqual(shown, [])


class BackgroundLane(unittest.TestCase):
    """The lane runs one job at a time, lowest priority number first (queue order among
    equals), niced, and goes on after a job that fails; a queued job can be dropped."""

    def test_one_at_a_time_in_priority_order_niced(self):
        import threading
        from verifylib.lane import NICE, Lane
        gate, ran, running = threading.Event(), [], []
        base = os.getpriority(os.PRIO_PROCESS, 0)

        def job(name, ok=True):
            def work():
                running.append(name)
                gate.wait()
                ran.append((name, len(running), os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
                running.remove(name)
                if not ok:
                    raise RuntimeError("broken")
                return True, "done"
            return work

        lane = Lane()
        lane.add("first", job("first"))  # starts at once, holds the lane until the gate opens
        lane.add("cmplog", job("cmplog"), priority=2)
        lane.add("broken", job("broken", ok=False))
        lane.add("reach", job("reach"), priority=1)
        lane.add("dropped", job("dropped"))
        self.assertTrue(lane.cancel("dropped"))
        gate.set()
        lane.close()
        self.assertEqual([r[0] for r in ran], ["first", "broken", "reach", "cmplog"])
        self.assertTrue(all(n == 1 for _, n, _ in ran))
        self.assertTrue(all(p == min(19, base + NICE) for _, _, p in ran))
        states = {name: (state, ok, what) for name, state, ok, _, what in lane.summary()}
        self.assertEqual(states["broken"], ("done", False, "RuntimeError: broken"))
        self.assertEqual(states["dropped"][0], "cancelled")
        self.assertFalse(lane.cancel("first"))  # over: nothing to drop


class CmplogInTheLane(unittest.TestCase):
    def test_fuzz_starting_first_keeps_the_build_from_starting(self):
        from unittest import mock
        import verify
        c = verify.Cmplog(run=None)
        built, what = c.finish()
        self.assertFalse(built)
        self.assertIn("not started", what)
        with mock.patch.object(verify.techniques, "start_cmplog_build") as start:
            self.assertEqual(c.work()[0], False)
            start.assert_not_called()


if __name__ == "__main__":
    unittest.main()
