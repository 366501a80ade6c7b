# SPDX-License-Identifier: GPL-2.0-only
"""faultline verify's reach report: for each technique that ran, what its
inputs reach on the port (faultline-cli reach: op kinds, geometry buckets,
invariant checks) and, when the coverage build exists (cmake --preset
coverage), its line/branch coverage of src/kernel (gcov via gcovr), plus
the port functions no search technique reached.

Each technique's inputs: corpus = the corpus Programs; props = every case
the property tests generated (FL_PROPS_DUMP_DIR); fuzz = the libFuzzer
corpora and AFL++ queues the campaign left, each on its binary's
configuration; oracle = the corpus plus the oracle's seeded random batch,
on the host's configuration (the port side of the comparison)."""
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from html import escape

from . import steps
from .techniques import corpus_files

# The buckets the issue asks every search technique to reach.
WANTED = ["map data > 4 GiB (created)", "value_size x max_entries near 2^32 (created)",
          "map data near INT_MAX (created)", "element offset crosses 2^32: update (accepted)",
          "element offset crosses 2^32: lookup (accepted)", "mmap offset >= 4 GiB (accepted)",
          "mmap len >= 4 GiB (refused)", "mmap len >= 4 GiB (accepted)", "user access at map offset >= 4 GiB (accepted)",
          "spec_v1 mask, non-power-of-two entries, data > 4 GiB (created)", "page 4k (a mapping accepted)",
          "page 16k (a mapping accepted)", "page 64k (a mapping accepted)", "v3 fault-around",
          "v3 fault-around, window partly populated", "v3 fault-around, partly populated, after a partial touch",
          "v3 fault-around, partly populated, after a split", "v3 fault-around, partly populated, after a DONTNEED",
          "v3 fault-around, partly populated, in a forked child", "v3 fault-around at a VMA edge",
          "v3 fault-around at a VMA edge: its start", "v3 fault-around at a VMA edge: its end",
          "v3 fault-around at a PTE-table edge", "v3 fault-around clipped by a PTE table"]
SEARCH = ["props", "libfuzzer", "afl", "oracle"]  # the search techniques (corpus is hand-written)
# The campaign's run folders (tools/fuzz_campaign.py), under the repository.
FUZZ_RUNS = os.path.join("build", "fuzz", "runs")
# Why a port function stays unreached by every search technique (by function name).
_ARENA = ("arena maps: no search technique verify runs generates arena Programs (the properties and the "
          "campaign's program target make array maps; the arena fuzz target is not in verify's campaign)")
ARENA_SOURCE = "src/kernel/kernel/bpf/arena.cpp:"  # every function there: _ARENA unless named below
WHY_UNREACHED = {
    "arena_map_lookup_elem": "bpf(BPF_MAP_LOOKUP_ELEM) on an arena map (always an error); " + _ARENA,
    "arena_map_update_elem": "bpf(BPF_MAP_UPDATE_ELEM) on an arena map (always -EOPNOTSUPP); " + _ARENA,
    "arena_vm_mremap": "mremap of an arena VMA; " + _ARENA,
    "arena_vm_close_mremap_uaf": "the historical arena level mremap_uaf only (an arena fuzz binary built for it)",
    "arena_user_vm_end": "an arena accessor; " + _ARENA,
    "arena_vma_list": "an arena accessor; " + _ARENA,
    "bpf_arena_get_user_vm_start": "an arena accessor; " + _ARENA,
    "bpf_map_mmap_freeze_mutex_2025": "the historical level freeze_mutex_2025 only: the interleaving explorer and "
                                      "the threads fuzzer run it, the reach report replays lockstep Programs",
    # the helpers only the arena map calls (grep src/kernel for their callers)
    "get_vm_area": "arena_map_alloc's kernel VM area only; " + _ARENA,
    "free_vm_area": "arena_map_free only; " + _ARENA,
    "kasan_check_vma": "the arena's zap through its vma_list only; " + _ARENA,
    "kasan_report": "the arena's vma_list use-after-free reports only (its historical levels); " + _ARENA,
    "round_up<unsigned long, unsigned long>": "arena_get_unmapped_area's 4 GiB rounding only; " + _ARENA,
    "vm_fault_to_errno": "a GUP fault that fails (MAP_POPULATE over a page the map cannot back): the BPF mmap "
                         "checks refuse such a mapping before it is populated",
}
# Wanted buckets a technique cannot reach by construction (bucket prefix ->
# (techniques, why)): their empty cells say so instead of showing red.
_PAGE = "the properties run at 4K pages, the fuzz binaries are 4K builds, the oracle runs at the host's 4K"
OUT_OF_REACH = {
    "page 16k": (set(SEARCH), _PAGE), "page 64k": (set(SEARCH), _PAGE),
    "mmap len >= 4 GiB (accepted)": ({"oracle"}, "the oracle runs pre, whose eager remap inserts every page at "
                                     "mmap (on the host too): its decoder cuts a mapping of more than 1100 pages that "
                                     "pre could accept to 32 pages"),
    "v3 ": ({"oracle"}, "the oracle runs the port at pre (the host kernel's level): there is no ->map_pages"),
}


def out_of_reach(bucket, tech):
    """Why `tech` cannot reach `bucket`, or ''."""
    for prefix, (techs, why) in OUT_OF_REACH.items():
        if bucket.startswith(prefix) and tech in techs:
            return why
    return ""


def _fuzz_inputs(root, tasks):
    """(engine, filter args, input dir) for every program-target task of the campaign."""
    for t in tasks:
        if t.get("target") != "program":
            continue
        base = os.path.join(root, FUZZ_RUNS, t["engine"], t["name"])
        d = os.path.join(base, "corpus") if t["engine"] == "libfuzzer" else os.path.join(base, "out", "default", "queue")
        if os.path.isdir(d):
            yield t["engine"], ["--binary", "--patch", t["patch"], "--arch", t["arch"], "--door", t["door"],
                                "--page", "4k", "--spec", "mask"], d


FED_BY = {"corpus", "props", "fuzz", "oracle"}  # the techniques whose inputs inputs() replays


def inputs(run, results):
    """technique -> list of faultline-cli reach argument lists."""
    by = {r.technique: r for r in results if r.status != "skipped"}
    out = {}
    if "corpus" in by:
        out["corpus"] = [corpus_files(run.root)]
    cases = os.path.join(run.report, "props", "cases")
    if "props" in by and os.path.isdir(cases):
        out["props"] = [[cases]]
    if "fuzz" in by:
        for engine, args, d in _fuzz_inputs(run.root, by["fuzz"].metrics.get("tasks", [])):
            out.setdefault(engine, []).append(args + [d])
    if "oracle" in by and by["oracle"].status == "ran":
        count = by["oracle"].metrics["random"]  # what the oracle ran in its share
        out["oracle"] = [["--patch", "pre", "--arch", "64", "--door", "anon", "--page", "4k", "--spec", "mask",
                          "--random", str(count), "--seed", str(run.seed)] + corpus_files(run.root)]
    return out


def _merge(into, part):
    for k in ("programs", "runs", "op_checks", "contents_bytes"):
        into[k] = into.get(k, 0) + part[k]
    for k, (ran, ok) in part["ops"].items():
        a = into.setdefault("ops", {}).setdefault(k, [0, 0])
        a[0] += ran
        a[1] += ok
    for sect in ("buckets", "violations"):
        for k, v in part[sect].items():
            into.setdefault(sect, {})[k] = into.setdefault(sect, {}).get(k, 0) + v


def bare_name(name):
    """'fl::k64::array_map_free(fl::k64::bpf_map*)' -> 'array_map_free' (gcovr's demangled names)."""
    return name.split("(")[0].rsplit("::", 1)[-1].strip()


def _gcovr(root, build, out, seconds=None):
    """Line/branch summary and per-function counts of src/kernel from the .gcda files in `build`
    (None when gcovr fails or takes longer than `seconds`)."""
    # only the port's objects (the two widths' libraries and their slip files'
    # object libraries, CMakeLists.txt): gcov over every .gcda of the build took
    # minutes per technique
    dirs = sorted(glob.glob(os.path.join(build, "CMakeFiles", "fl_kernel*.dir")) +
                  glob.glob(os.path.join(build, "CMakeFiles", "fl_slip_*.dir"))) or [build]
    # when the time is up gcovr's whole group (gcov's processes too) is stopped, and the
    # NAME##HASH.gcov files its gcov runs were writing (in --root and the build folder) removed
    started = time.time()
    with tempfile.TemporaryDirectory() as work:
        # (clang's gcov files: llvm-cov's gcov reads them, gcc's may not)
        p = subprocess.Popen(["gcovr", "--gcov-executable", "llvm-cov-14 gcov", "--root", root,
                              "--filter", os.path.join(root, "src", "kernel") + "/", "-j",
                              "2", "--exclude-unreachable-branches", "--exclude-throw-branches", "--json", out] + dirs,
                             cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = p.wait(timeout=max(1.0, seconds) if seconds is not None else None)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            for left in [f for d in (root, build) for f in glob.glob(os.path.join(glob.escape(d), "*##*.gcov"))]:
                if os.path.getmtime(left) >= started - 1:
                    os.remove(left)
            return None
    if rc or not os.path.exists(out):
        return None
    with open(out) as f:
        data = json.load(f)
    lines = lines_hit = branches = branches_hit = 0
    functions = {}
    for fi in data["files"]:
        for ln in fi["lines"]:
            if ln.get("gcovr/noncode"):
                continue
            lines += 1
            lines_hit += ln["count"] > 0
            for b in ln["branches"]:
                branches += 1
                branches_hit += b["count"] > 0
        for fn in fi.get("functions", []):
            # one row per kernel function: its arch32 and arch64 instances summed
            key = f"{fi['file']}:{bare_name(fn['name'])}"
            functions[key] = functions.get(key, 0) + fn["execution_count"]
    return {"lines": [lines_hit, lines], "branches": [branches_hit, branches], "functions": functions}


def build_coverage(run):
    """Setup, outside the budget: faultline-cli with gcov instrumentation."""
    return steps.build_preset(run.root, "coverage", ["faultline-cli"], run.progress.update)


def reach_one(run, tech, arg_lists, seconds):
    """One technique's reach (its inputs replayed on the port) and, when
    build/coverage exists, its coverage: (reach, coverage or None), inside
    `seconds` (a replay or gcovr the time cuts short counts nothing; the
    replays are quick, gcovr is most of it). Techniques take turns: the
    coverage build's .gcda files hold one technique at a time."""
    deadline = time.monotonic() + seconds
    cli = run.tool("build", "default", "faultline-cli")
    cov_cli = run.tool("build", "coverage", "faultline-cli")
    cov_build = run.tool("build", "coverage")
    have_cov = os.access(cov_cli, os.X_OK) and shutil.which("gcovr")
    keep = GCOVR_SECONDS if have_cov else 0.0  # kept for gcovr while replaying
    total = {}
    for i, args in enumerate(arg_lists):
        text = _replay(run, f"reach-{tech}-{i}", [cli, "reach"] + args, deadline - time.monotonic() - keep)
        try:
            _merge(total, json.loads(text))
        except ValueError:
            continue
    if not have_cov:
        return total, None
    for gcda in glob.glob(os.path.join(cov_build, "**", "*.gcda"), recursive=True):
        os.remove(gcda)
    # every technique's inputs replayed the same way (props: the cases
    # it generated, FL_PROPS_DUMP_DIR), so the rows compare
    for i, args in enumerate(arg_lists):
        _replay(run, f"coverage-{tech}-{i}", [cov_cli, "reach"] + args, deadline - time.monotonic() - keep)
    return total, _gcovr(run.root, cov_build, run.out("reach", f"coverage-{tech}.json"), deadline - time.monotonic())


GCOVR_SECONDS = 20.0  # gcovr over the port's objects (-j 2) took about 20 s here under load; the replays 3 s


def _replay(run, name, argv, seconds):
    """faultline-cli reach's JSON, or '' when it did not finish in `seconds` (it prints at the end)."""
    with open(run.out("logs", f"{name}.log"), "w") as log:
        try:
            r = subprocess.run(argv, cwd=run.root, stdout=subprocess.PIPE, stderr=log, text=True,
                               timeout=max(1.0, seconds))
        except subprocess.TimeoutExpired:
            log.write(f"[verify] stopped after {seconds:.0f} s\n")
            return ""
        log.write(r.stdout)
    return r.stdout


def run_reach(run, results, seconds):
    """Reach and coverage of every technique that ran, one after another, each in its part of `seconds`."""
    todo = inputs(run, results)
    reach, coverage = {}, {}
    t0 = time.monotonic()
    for i, (tech, arg_lists) in enumerate(todo.items()):
        reach[tech], c = reach_one(run, tech, arg_lists, (seconds - (time.monotonic() - t0)) / (len(todo) - i))
        if c:
            coverage[tech] = c
    write_json(run, reach, coverage)
    return reach, coverage


def write_json(run, reach, coverage):
    with open(run.out("reach", "reach.json"), "w") as f:
        json.dump({"reach": reach, "coverage": {t: {k: v for k, v in c.items() if k != "functions"}
                                                for t, c in coverage.items()}}, f, indent=1)


def _pct(pair):
    return f"{100.0 * pair[0] / pair[1]:.1f}% ({pair[0]}/{pair[1]})" if pair[1] else "-"


def unreached_functions(coverage):
    """Port functions no search technique ran (the corpus does not count: it is hand-written)."""
    search = [c for t, c in coverage.items() if t in SEARCH]
    if not search:
        return []
    names = set().union(*(c["functions"] for c in search))
    return sorted(n for n in names if all(c["functions"].get(n, 0) == 0 for c in search))


def add_sections(meta, reach, coverage, why_unreached):
    techs = list(reach)
    if not techs:
        return
    md = ["## Reach per technique", "",
          "Each technique's own inputs replayed on the port (`faultline-cli reach`); counts are runs that hit the "
          "bucket. Coverage: gcov on `src/kernel` in the coverage build.", "",
          "| | " + " | ".join(techs) + " |", "|---|" + "---|" * len(techs)]
    html = ["<table id='reach'><tr><th>bucket</th>" + "".join(f"<th>{escape(t)}</th>" for t in techs) + "</tr>"]

    notes = {}  # why -> footnote number

    def cell(name, t, c, wanted):
        why = out_of_reach(name, t) if c in (0, '0') else ""
        if why:
            return f"n/a [{notes.setdefault(why, len(notes) + 1)}]", ""
        return str(c), "bad" if wanted and c in (0, '0') else ""

    def row(name, cells, wanted=False):
        shown = [cell(name, t, c, wanted) for t, c in zip(techs, cells)]
        md.append(f"| {name} | " + " | ".join(text for text, _ in shown) + " |")
        html.append(f"<tr><td>{escape(name)}</td>" + "".join(
            f"<td class='{cls}'>{escape(text)}</td>" for text, cls in shown) + "</tr>")

    row("Programs / runs", [f"{reach[t].get('programs', 0)} / {reach[t].get('runs', 0)}" for t in techs])
    row("invariant checks (ops × 8 invariants)", [reach[t].get("op_checks", 0) for t in techs])
    row("contents: bytes compared", [reach[t].get("contents_bytes", 0) for t in techs])
    if coverage:
        row("src/kernel lines", [_pct(coverage[t]["lines"]) if t in coverage else "-" for t in techs])
        row("src/kernel branches", [_pct(coverage[t]["branches"]) if t in coverage else "-" for t in techs])
    kinds = sorted({k for t in techs for k in reach[t].get("ops", {})})
    for k in kinds:
        row(f"op {k} (ran / ok)", ["/".join(map(str, reach[t].get("ops", {}).get(k, [0, 0]))) for t in techs])
    buckets = WANTED + sorted({b for t in techs for b in reach[t].get("buckets", {})} - set(WANTED))
    for b in buckets:
        row(b, [reach[t].get("buckets", {}).get(b, 0) for t in techs], wanted=b in WANTED)
    html.append("</table>")
    if notes:
        md += [""] + [f"[{n}] not reachable by that technique by construction: {why}" for why, n in notes.items()]
        html.append("".join(f"<p>[{n}] not reachable by that technique by construction: {escape(why)}</p>"
                            for why, n in notes.items()))
    unreached = unreached_functions(coverage)
    if unreached:
        md += ["", "Port functions no search technique reached:", ""]
        html.append("<p>Port functions no search technique reached:</p><ul>")
        for n in unreached:
            why = why_unreached.get(n.rsplit(":", 1)[-1], "") or (_ARENA if n.startswith(ARENA_SOURCE) else "")
            md.append(f"- `{n}`{' — ' + why if why else ''}")
            html.append(f"<li><code>{escape(n)}</code>{' — ' + escape(why) if why else ''}</li>")
        html.append("</ul>")
    meta.setdefault("extra_md", []).append(md)
    meta.setdefault("extra_html", []).append(("Reach per technique", "".join(html)))
