#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""faultline verify's reach report on a small fixed input (ctest verify.reach,
about a second): faultline-cli reach must count every bucket the report wants
on tests/reach/*.fl (hand-written to hit each one), and the report must keep
one column per search technique and one row per wanted bucket.

    tests/reach_test.py path/to/faultline-cli"""
import json
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from verifylib import reach  # noqa: E402
from verifylib.techniques import Result  # noqa: E402

CLI = None
# The buckets issue 18 names (data past 4 GiB, the u32/INT_MAX limits, element
# offsets across 2^32, mmap offsets/lengths past 4 GiB, the spec_v1 mask at
# those sizes, v3 fault-around over partly populated windows and at VMA and
# PTE-table edges): the report may add buckets, never drop one of these.
ISSUE_BUCKETS = [
    "map data > 4 GiB (created)", "value_size x max_entries near 2^32 (created)", "map data near INT_MAX (created)",
    "element offset crosses 2^32: update (accepted)", "element offset crosses 2^32: lookup (accepted)",
    "mmap offset >= 4 GiB (accepted)", "mmap len >= 4 GiB (accepted)", "mmap len >= 4 GiB (refused)",
    "user access at map offset >= 4 GiB (accepted)", "spec_v1 mask, non-power-of-two entries, data > 4 GiB (created)",
    "v3 fault-around, window partly populated", "v3 fault-around, partly populated, after a partial touch",
    "v3 fault-around, partly populated, after a split", "v3 fault-around, partly populated, after a DONTNEED",
    "v3 fault-around, partly populated, in a forked child", "v3 fault-around at a VMA edge",
    "v3 fault-around at a PTE-table edge"]


class FixedInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        r = subprocess.run([CLI, "reach", os.path.join(ROOT, "tests", "reach")], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        cls.part = json.loads(r.stdout)

    def test_the_report_wants_every_bucket_the_issue_names(self):
        self.assertEqual([b for b in ISSUE_BUCKETS if b not in reach.WANTED], [])

    def test_every_wanted_bucket_is_counted(self):
        missing = [b for b in reach.WANTED if not self.part["buckets"].get(b)]
        self.assertEqual(missing, [])

    def test_invariant_and_contents_checks_are_counted(self):
        self.assertEqual(self.part["programs"], len([f for f in os.listdir(os.path.join(ROOT, "tests", "reach"))
                                                     if f.endswith(".fl")]))
        self.assertGreater(self.part["op_checks"], 0)
        self.assertGreater(self.part["contents_bytes"], 0)
        self.assertEqual(self.part["violations"], {})

    def test_the_report_has_a_column_per_technique_and_a_row_per_bucket(self):
        techs = ["corpus", "props", "libfuzzer", "afl", "oracle"]
        coverage = {t: {"lines": [1, 2], "branches": [1, 4], "functions": {"f.cpp:f": 1}} for t in techs}
        meta = {}
        reach.add_sections(meta, {t: self.part for t in techs}, coverage, {})
        md = meta["extra_md"][0]
        self.assertEqual(md[4], "| | " + " | ".join(techs) + " |")
        for b in reach.WANTED:
            row = next((line for line in md if line.startswith(f"| {b} |")), None)
            self.assertIsNotNone(row, b)
            self.assertEqual(len(row.split(" | ")), len(techs) + 1, row)
        for what in ("src/kernel lines", "src/kernel branches", "contents: bytes compared"):
            self.assertTrue(any(line.startswith(f"| {what} |") for line in md), what)
        self.assertNotIn("class='bad'", meta["extra_html"][0][1])  # every wanted bucket reached

    def test_a_bucket_out_of_reach_by_construction_is_not_red_and_says_why(self):
        import copy
        props = copy.deepcopy(self.part)
        del props["buckets"]["page 16k (a mapping accepted)"]
        meta = {}
        reach.add_sections(meta, {"props": props}, {}, {})
        md = meta["extra_md"][0]
        row = next(line for line in md if line.startswith("| page 16k (a mapping accepted) |"))
        self.assertIn("n/a [1]", row)
        self.assertTrue(any(line.startswith("[1] not reachable") and "4K" in line for line in md))
        self.assertNotIn("class='bad'", meta["extra_html"][0][1])
        del props["buckets"]["v3 fault-around at a PTE-table edge"]  # reachable: red
        meta = {}
        reach.add_sections(meta, {"props": props}, {}, {})
        self.assertIn("class='bad'", meta["extra_html"][0][1])


class Inputs(unittest.TestCase):
    """Every technique verify ran gets its own row of inputs to replay."""

    def test_each_technique_that_ran_has_inputs(self):
        import tempfile

        class Run:
            root, seed, quick = ROOT, 7, False

        with tempfile.TemporaryDirectory() as report:
            Run.report = report
            os.makedirs(os.path.join(report, "props", "cases"))
            tasks = []
            for engine in ("libfuzzer", "afl"):
                name = "program-v2-arch64-anon"
                sub = "corpus" if engine == "libfuzzer" else os.path.join("out", "default", "queue")
                tasks.append({"target": "program", "engine": engine, "name": name, "patch": "v2", "arch": "64",
                              "door": "anon"})
                os.makedirs(os.path.join(report, "fuzz-runs", engine, name, sub))
            results = [Result("corpus"), Result("props"), Result("oracle", metrics={"random": 12}), Result("fuzz", metrics={"tasks": tasks})]
            old = reach.FUZZ_RUNS
            reach.FUZZ_RUNS = os.path.join(report, "fuzz-runs")
            try:
                got = reach.inputs(Run, results)
            finally:
                reach.FUZZ_RUNS = old
        self.assertEqual(sorted(got), ["afl", "corpus", "libfuzzer", "oracle", "props"])
        self.assertIn("--binary", got["afl"][0])
        # the oracle's inputs: the random Programs it ran in its share, not a fixed count
        self.assertEqual(got["oracle"][0][got["oracle"][0].index("--random") + 1], "12")


if __name__ == "__main__":
    CLI = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "default", "faultline-cli")
    unittest.main()
