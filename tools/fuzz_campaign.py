#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""faultline fuzz: libFuzzer and AFL++ campaigns over the fuzz targets.

Builds what it needs (fuzz/build.sh), runs every selected configuration
with each selected engine inside one wall-clock budget, shows progress,
then minimises every finding, turns it into a Program text file under
corpora/findings/, replays it with faultline-cli, classifies whether the
front doors mmap(2) really has (anon, regular) reach it, and prints a
summary table. Bad options exit 2.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

# Fuzzing throughput: allocation stacks are only needed to diagnose memory
# errors, which are replayed with full options.
os.environ.setdefault("ASAN_OPTIONS", "malloc_context_size=0:detect_leaks=0")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from verifylib.evidence import ARCHES, DOORS, PATCHES  # noqa: E402 (the one list of levels)
from verifylib import steps  # noqa: E402 (build steps' last timings, build/.timings.json)
# FL_PLANT=update_stride|update_u32|NAME of smt/mutants/: the test-only planted slip (CMakeLists.txt)
# compiled into the targets, in their own build folder, replayed by
# build/plant's faultline-cli, findings under that folder (corpora/ stays clean).
PLANT = os.environ.get("FL_PLANT", "")
BUILD = os.path.join(ROOT, "build", f"fuzz-plant-{PLANT}" if PLANT else "fuzz")
CLI = os.path.join(ROOT, "build", "plant" if PLANT else "default", "faultline-cli")
PLANTS = ["update_stride", "update_u32"] + sorted(os.listdir(os.path.join(ROOT, "smt", "mutants")))
TARGETS, ENGINES = ["program", "bounds", "threads", "buddy"], ["libfuzzer", "afl"]
# threads: the program target's interleaving form (concurrent ops and a
# schedule from one byte string), on the fixed kernel or a historical level.
HISTORICS = ["none", "toctou_2021", "freeze_mutex_2025", "finish_fault_put"]
# libFuzzer 14 (bookworm's clang) keeps the entropic schedule's rare features
# in a vector that it scans for every feature of every run. With a mature
# corpus (a campaign restarted after a finding, or resumed) the scan took 60 %
# of the time: program-v2-arch64-anon, 90 s from a 1,000-input corpus, ran
# 4.6k exec/s, and 10.0k with features above 16 hits counted abundant (32:
# 9.4k, 64: 5.6k). From an empty corpus, 10 minutes: 8.3k and 7.9k, coverage
# equal within 3 edges. LLVM 18 replaced the scan with a bitset
# (llvm-project #65288).
LIBFUZZER_FLAGS = ["-entropic_feature_frequency_threshold=16"]
# buddy: libarena's allocator Programs (fuzz/buddy_fuzzer.cpp; ops and, at the
# series levels, a schedule from one byte string) at one libarena level each.
BUDDY_LEVELS = ["before", "nmi_deferred", "ret_overwrite", "series", "guard_leak"]
BUDDY_REPLAY = os.path.join(ROOT, "build", "default", "src", "libarena", "buddy-explore")
FINDINGS = os.path.join(ROOT, "corpora", "findings")
BUDDY_FINDINGS = os.path.join(ROOT, "corpora", "buddy", "findings")
print_lock = threading.Lock()


def say(msg):
    with print_lock:
        print(msg, flush=True)


def die(msg):
    print(f"faultline fuzz: {msg}", file=sys.stderr)
    sys.exit(2)


def read_max_len(binary):
    """The longest input, from the options file fuzz/build.sh writes beside the binary."""
    try:
        with open(binary + ".options") as f:
            for line in f:
                key, _, value = line.partition("=")
                if key.strip() == "max_len" and value.strip().isdigit():
                    return int(value)
    except OSError as e:
        die(f"{e.filename}: {e.strerror} (fuzz/build.sh writes it beside the target)")
    die(f"no max_len = N in {binary}.options")


class Task:
    """One binary (target x configuration) under one engine."""

    def __init__(self, target, patch, arch, door, engine, historic="none"):
        self.target, self.patch, self.arch, self.door, self.engine = target, patch, arch, door, engine
        self.source, self.historic = "bounds" if target == "bounds" else "program", historic
        if target == "buddy":
            self.source, self.name, self.config = "buddy", f"buddy-{historic}", historic
        elif target == "threads":
            level = "threads" if historic == "none" else historic
            self.name = f"program-{patch}-arch{arch}-{door}-{level}"
            self.config = f"{patch}/arch{arch}/4k/{door}/mask/{level}"
        elif target == "program":
            self.name = f"program-{patch}-arch{arch}-{door}"
            self.config = f"{patch}/arch{arch}/4k/{door}/mask"
        else:
            self.name = f"bounds-{patch}-arch{arch}"
            self.config = f"{patch}/arch{arch}"
        self.workdir = os.path.join(BUILD, "runs", engine, self.name)
        self.execs = self.exec_per_s = self.cov = 0
        self.max_len = 0           # the binary's own (read_max_len), once it is built
        self.stability = ""        # AFL++: the share of runs of an input that take the same path
        self.crashes = []          # (seconds since start, path)
        self.deadline = None       # time.time() when its slice ends (minimising included)
        self.coverage_curve = []   # (seconds, coverage)
        self.findings = []         # dicts, filled after the run
        self.seconds = 0.0
        self.skipped = False       # the budget ran out before this run could start
        self.undescribed = 0       # failing inputs left undescribed (DESCRIBE_SECONDS ran out)

    def binary(self, flavour=None):
        return os.path.join(BUILD, flavour or self.engine, self.name)



def parse_args(argv):
    p = argparse.ArgumentParser(prog="faultline fuzz", description=__doc__.splitlines()[0])
    p.add_argument("--engine", default="both", help="libfuzzer | afl | both")
    p.add_argument("--target", default="program", help="program | bounds | threads | all (program and bounds)")
    p.add_argument("--historic", default="none", help="threads target: comma list of " + ",".join(HISTORICS))
    p.add_argument("--level", default="before,series", help="buddy target: comma list of " + ",".join(BUDDY_LEVELS))
    p.add_argument("--from-scratch", action="store_true", help="start from an empty corpus, not the seeds")
    p.add_argument("--cmplog", action="store_true",
                   help="AFL++ with a CmpLog binary beside each run: a third build of the whole library, "
                        "so built only when asked (with --build-only: only the CmpLog binaries)")
    p.add_argument("--no-cmplog", action="store_true", help="the default (kept for older scripts)")
    p.add_argument("--first-finding", action="store_true",
                   help="describe and keep only each run's first crash (short runs: saves re-running dozens)")
    p.add_argument("--no-minimise", action="store_true", help="keep each finding's input as found (short runs)")
    p.add_argument("--patch", default=",".join(PATCHES), help="comma list of " + ",".join(PATCHES))
    p.add_argument("--arch", default=",".join(ARCHES), help="comma list of 32,64")
    p.add_argument("--door", default=",".join(DOORS), help="comma list of anon,regular,direct (program target)")
    p.add_argument("--time", default="120", help="wall-clock budget for the whole campaign, seconds")
    p.add_argument("--jobs", default=str(os.cpu_count() or 1), help="fuzzers running at once")
    p.add_argument("--json", help="also write the results as JSON to this file")
    p.add_argument("--keep-corpus", action="store_true", help="reuse corpora from an earlier run")
    p.add_argument("--build-only", action="store_true", help="build the selected binaries and stop")
    p.add_argument("--no-build", action="store_true",
                   help="run the binaries as they are, without the up-to-date check (verify: its setup just built "
                        "them, and the check costs seconds of the budget)")
    p.add_argument("--findings", default=os.path.join(BUILD, "findings") if PLANT else FINDINGS,
                   help="folder for the finding Programs (default corpora/findings)")
    p.add_argument("--buddy-findings", default=BUDDY_FINDINGS,
                   help="folder for the buddy target's findings (default corpora/buddy/findings)")
    a = p.parse_args(argv)
    if PLANT and PLANT not in PLANTS:
        die(f"FL_PLANT must be one of {', '.join(PLANTS)}, not '{PLANT}'")

    def pick(value, allowed, what):
        items = [v.strip() for v in value.split(",") if v.strip()]
        bad = [v for v in items if v not in allowed]
        if bad or not items:
            die(f"bad {what} '{value}' (choose from {', '.join(allowed)})")
        return items

    a.engines = ENGINES if a.engine == "both" else pick(a.engine, ENGINES + ["both"], "--engine")
    a.targets = TARGETS[:2] if a.target == "all" else pick(a.target, TARGETS, "--target")
    a.historics = pick(a.historic, HISTORICS, "--historic")
    a.levels = pick(a.level, BUDDY_LEVELS, "--level")
    a.patches = pick(a.patch, PATCHES, "--patch")
    a.arches = pick(a.arch.replace("arch", ""), ARCHES, "--arch")
    a.doors = pick(a.door, DOORS, "--door")
    if a.build_only and a.no_build:
        die("--build-only and --no-build contradict each other")
    if a.cmplog and a.no_cmplog:
        die("--cmplog and --no-cmplog contradict each other")
    if a.cmplog and "afl" not in a.engines:
        die("--cmplog is AFL++'s: use it with --engine afl or both")
    for opt in ("time", "jobs"):
        v = getattr(a, opt)
        if not v.isdigit() or int(v) < 1:
            die(f"--{opt} must be a positive whole number, not '{v}'")
        setattr(a, opt, int(v))
    return a


def build(engines, tasks, cmplog=False, only_cmplog=False):
    names = sorted({(t.source, t.config) for t in tasks})
    targets = " ".join(f"{t}:{c}" for t, c in names)
    # fuzz/build.sh's default flags (UBSan without alignment: it says why)
    base = "-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize=alignment -fno-sanitize-recover=all"
    if PLANT:
        base += f" -DFL_PLANT_{PLANT.upper()}"
        say(f"[build] FL_PLANT={PLANT}: a planted slip in the port (test-only), into {os.path.relpath(BUILD, ROOT)}")
    flavours = []
    if only_cmplog:
        engines = ["afl"]
    if "libfuzzer" in engines and not only_cmplog:
        flavours.append(("libfuzzer", {"CXX": "clang++-14", "CXXFLAGS": base + " -fsanitize=fuzzer-no-link"}))
    if "afl" in engines:
        if not only_cmplog:
            flavours.append(("afl", {"CXX": "afl-clang-fast++", "CXXFLAGS": base}))
        if cmplog or only_cmplog:
            flavours.append(("afl-cmplog", {"CXX": "afl-clang-fast++", "CXXFLAGS": base, "AFL_LLVM_CMPLOG": "1"}))
    sources = sorted({t.source for t in tasks})
    for i, (flavour, env) in enumerate(flavours):
        # what builds, how long it took last time, what is left (a check that
        # found everything up to date is not recorded as the build's time)
        step = f"fuzz build {flavour}"
        say(f"[build] {steps.announce(step, [f'fuzz build {f}' for f, _ in flavours[i + 1:]])}: "
            f"{', '.join(sources)} linked once, named for {len(names)} configurations")
        t0 = time.monotonic()
        e = dict(os.environ, **env, OUT=os.path.join(BUILD, flavour), FL_FUZZ_TARGETS=targets,
                 LIB_FUZZING_ENGINE="-fsanitize=fuzzer", AFL_QUIET="1")
        r = subprocess.run([os.path.join(ROOT, "fuzz", "build.sh")], env=e, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode:
            sys.stderr.write(r.stderr[-4000:])
            die(f"building the {flavour} fuzz targets failed")
        summary = (r.stdout.strip().splitlines() or [""])[-1]
        took = time.monotonic() - t0
        if not re.search(r": 0 objects compiled, 0 targets linked", summary):
            steps.record(step, took)
        say(f"[build] {flavour}: {summary.replace('fuzz/build.sh: ', '')} in {took:.0f} s")


FROM_SCRATCH = NO_MINIMISE = FIRST_FINDING = False
USE_CMPLOG = False
MIN_SLICE = 5.0  # seconds: a shorter run spends most of its time starting (ASan, seeds, AFL++'s calibration)
MINIMISE_SECONDS = 30  # the most one finding's minimisation may take
DESCRIBE_SECONDS = 60  # the most a run's describing of its failing inputs may take (past the first), within its slice
AFTER_MINIMISE = 5  # then: describing the smaller input, classifying its doors, replaying its Program


def minimise_cut(slice_s):
    """How long before its slice ends a run that has found something stops fuzzing, so that
    describing its failing inputs, minimising and replaying the findings fit in the slice (at
    most half of it)."""
    return min(DESCRIBE_SECONDS + (0.0 if NO_MINIMISE else MINIMISE_SECONDS + AFTER_MINIMISE), slice_s / 2)


class Clock:
    """The campaign's one wall-clock budget, started before its build check.
    Each run's slice is set when it starts: the time left in its slot, shared
    among the runs that slot still has to run, less what a finished run cost
    beyond its slice (start-up, calibration, describing and minimising its
    findings, replays), so that the last run ends by the deadline."""

    def __init__(self, seconds, runs, jobs):
        self.deadline = time.time() + seconds
        self.not_started, self.jobs = runs, jobs
        self.overheads = []  # per finished run: its wall time less its slice
        self.lock = threading.Lock()

    def left(self):
        return self.deadline - time.time()

    def overhead(self):
        return sum(self.overheads) / len(self.overheads) if self.overheads else 0.0

    def slice(self, start=True):
        """The next run's slice (start=False: only what it would be); 0: no time left for a
        useful run (MIN_SLICE and the overhead seen), the run is skipped."""
        with self.lock:
            waves = -(-self.not_started // self.jobs)  # the runs this slot still has, the next one included
            self.not_started -= 1 if start else 0
            if self.left() < MIN_SLICE + self.overhead():
                return 0.0
            return max(MIN_SLICE, self.left() / waves - self.overhead())

    def finished(self, wall, slice_s):
        with self.lock:
            self.overheads.append(max(0.0, wall - slice_s))


CLOCK = None


def seeds_dir(target):
    if FROM_SCRATCH:
        return None
    d = os.path.join(ROOT, "corpora", target, "seeds")
    return d if os.path.isdir(d) and os.listdir(d) else None


def run_libfuzzer(task, seconds, start_all):
    corpus = os.path.join(task.workdir, "corpus")
    arts = os.path.join(task.workdir, "artifacts") + "/"
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(arts, exist_ok=True)
    seeds = private_seeds(task)
    t0 = time.time()
    total_execs = 0
    while True:
        left = int(seconds - (time.time() - t0) - (minimise_cut(seconds) if task.crashes else 0))
        if left < 1:
            break
        cmd = [task.binary(), f"-max_total_time={left}", "-print_final_stats=1", f"-artifact_prefix={arts}",
               f"-dict={task.binary()}.dict", f"-max_len={task.max_len}", "-timeout=10"] + LIBFUZZER_FLAGS + [corpus]
        if seeds:
            cmd.append(seeds)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                errors="replace")
        # -max_total_time is checked between inputs: a slow one must not overrun the slice
        watchdog = threading.Timer(left + 5, proc.kill)
        watchdog.start()
        run_execs = 0
        last_report = time.time()
        for line in proc.stderr:
            m = re.match(r"#(\d+)\s+\S+\s+cov: (\d+).*?exec/s: (\d+)", line)
            if m:
                run_execs, task.cov, task.exec_per_s = int(m[1]), int(m[2]), int(m[3])
                task.execs = total_execs + run_execs
                task.coverage_curve.append((round(time.time() - t0, 1), task.cov))
            m = re.match(r"stat::number_of_executed_units: (\d+)", line)
            if m:
                run_execs = int(m[1])
            if "Test unit written to" in line:
                path = line.split("Test unit written to")[1].strip()
                task.crashes.append((round(time.time() - t0, 2), path))
            if time.time() - last_report > 10:
                last_report = time.time()
                progress(task, start_all)
        proc.wait()
        watchdog.cancel()
        total_execs += run_execs
        task.execs = total_execs
        if proc.returncode == 0:
            break  # time is up; a crash (rc != 0) restarts with what is left
        if task.crashes:
            # a seed or corpus input that fails would fail again first thing after every restart
            drop_input(task.crashes[-1][1], [corpus, seeds])
    task.seconds = time.time() - t0
    if task.seconds:
        task.exec_per_s = int(task.execs / task.seconds)


def private_seeds(task):
    """A copy of the target's seeds for this run, so that a seed that fails can be set aside."""
    if not seeds_dir(task.target):
        return None
    copy = os.path.join(task.workdir, "seeds")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(seeds_dir(task.target), copy)
    return copy


def drop_input(crash, dirs):
    """Removes the inputs of dirs whose bytes are the crash's."""
    try:
        with open(crash, "rb") as f:
            data = f.read()
    except OSError:
        return
    for d in filter(None, dirs):
        for name in os.listdir(d):
            path = os.path.join(d, name)
            if os.path.getsize(path) == len(data):
                with open(path, "rb") as f:
                    if f.read() == data:
                        os.remove(path)


def run_afl(task, seconds, start_all):
    out = os.path.join(task.workdir, "out")
    seeds = seeds_dir(task.target)
    if not seeds:
        seeds = os.path.join(task.workdir, "seed")
        os.makedirs(seeds, exist_ok=True)
        with open(os.path.join(seeds, "empty"), "wb") as f:
            f.write(b"\0")
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, AFL_NO_UI="1", AFL_SKIP_CPUFREQ="1", AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES="1",
               AFL_NO_AFFINITY="1", AFL_FAST_CAL="1", AFL_CMPLOG_ONLY_NEW="1",
               ASAN_OPTIONS="abort_on_error=1:symbolize=0:malloc_context_size=0:detect_leaks=0")
    cmplog = ["-c", task.binary("afl-cmplog")] if USE_CMPLOG and os.access(task.binary("afl-cmplog"), os.X_OK) else []
    cmd = ["afl-fuzz", "-i", seeds, "-o", out, "-V", str(int(seconds)), "-x", task.binary() + ".dict"] + cmplog + \
          ["-t", "10000", "-G", str(task.max_len), "--", task.binary()]
    t0 = time.time()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stats = os.path.join(out, "default", "fuzzer_stats")
    crashes = os.path.join(out, "default", "crashes")
    while proc.poll() is None:
        time.sleep(2)
        read_afl_stats(task, stats)
        task.coverage_curve.append((round(time.time() - t0, 1), task.cov))
        if int(time.time() - t0) % 10 < 2:
            progress(task, start_all)
        # -V counts from after the seeds' calibration: stop at the slice, or earlier by the time
        # minimising needs once there is a crash to minimise
        stop = seconds - (minimise_cut(seconds) if _has_crash(crashes) else 0)
        if time.time() - t0 > stop:
            proc.send_signal(signal.SIGINT if time.time() - t0 < stop + 10 else signal.SIGKILL)
    err = proc.stderr.read()
    reap_strays({task.binary(), task.binary("afl-cmplog")})
    read_afl_stats(task, stats)
    if not os.path.exists(stats):
        say(f"[afl] {task.name}: afl-fuzz did not start: {err.strip()[-300:]}")
    task.seconds = time.time() - t0
    if os.path.isdir(crashes):
        for f in sorted(os.listdir(crashes)):
            if f.startswith("id:"):
                path = os.path.join(crashes, f)
                task.crashes.append((round(os.path.getmtime(path) - t0, 2), path))


def _has_crash(folder):
    try:
        return any(f.startswith("id:") for f in os.listdir(folder))
    except OSError:
        return False


def reap_strays(binaries):
    """afl-fuzz -V can leave forkserver children behind (stopped, in their
    own session, cmplog's argv but either binary): kill whatever still runs
    one of this task's binaries once its afl-fuzz has exited."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/exe") in binaries:
                os.kill(int(pid), 9)
        except OSError:
            pass


def read_afl_stats(task, path):
    try:
        with open(path) as f:
            kv = {k.strip(): v for k, v in (line.split(":", 1) for line in f if ":" in line)}
    except OSError:
        return
    task.execs = int(kv.get("execs_done", "0").strip())
    rate = float(kv.get("execs_per_sec", "0").strip())  # "inf" in the first second
    task.exec_per_s = int(rate) if rate != float("inf") else 0
    task.cov = float(kv.get("bitmap_cvg", "0%").strip().rstrip("%"))
    task.stability = kv.get("stability", "").strip()


def progress(task, start_all):
    say(f"[{int(time.time() - start_all):4d}s] {task.name:28s} {task.engine:9s} execs {task.execs:>10,} "
        f"{task.exec_per_s:>8,}/s cov {task.cov:<7} findings {len(task.crashes)}")


def minimise(task, crash):
    out = crash + ".min"
    # what is left of the run's slice (and of the campaign), less describing and replaying the result
    ends = min(d for d in (task.deadline, CLOCK.deadline if CLOCK else None, time.time() + 1e9) if d)
    limit = min(MINIMISE_SECONDS, int(ends - time.time()) - AFTER_MINIMISE)
    if limit < 2:
        say(f"[fuzz] {task.name}: its slice is spent, {os.path.basename(crash)} kept unminimised")
        return crash
    try:
        _run_minimiser(task, crash, out, limit)
    except subprocess.TimeoutExpired:
        # under load the minimiser can run out of time: keep the finding as found
        say(f"[fuzz] {task.name}: minimising {os.path.basename(crash)} timed out, kept unminimised")
        return crash
    return out if os.path.exists(out) and os.path.getsize(out) <= os.path.getsize(crash) else crash


def _run_minimiser(task, crash, out, limit):
    if task.engine == "libfuzzer":
        # -max_total_time is checked between its runs: the timeout is the limit itself
        subprocess.run([task.binary(), "-minimize_crash=1", "-runs=20000", f"-max_total_time={max(1, limit - 2)}",
                        f"-exact_artifact_path={out}", crash], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=limit, cwd=task.workdir)
    else:
        subprocess.run(["afl-tmin", "-i", crash, "-o", out, "-t", "10000", "--", task.binary()],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=limit,
                       env=dict(os.environ, AFL_SKIP_CPUFREQ="1"))


def describe(task, crash):
    """Runs the binary on one input: the verdict line and the Program text it printed."""
    # cwd: libFuzzer leaves a crash-<sha1> file where it runs
    try:
        r = subprocess.run([task.binary(), crash], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors="replace", timeout=120, cwd=task.workdir)
    except subprocess.TimeoutExpired:
        # a libFuzzer timeout-* unit that is as slow again: no verdict to report
        say(f"[fuzz] {task.name}: {os.path.basename(crash)} ran past 120 s, not a finding")
        return None, None
    text = r.stderr
    m = re.search(r"faultline: (?:verdict: )?(.*)", text)
    if not m:
        # Not a verdict but a sanitizer report (a bug in the machine or the
        # port): keep it, with the Program the input decodes to.
        s = re.search(r"SUMMARY: (\w+Sanitizer: \S+)", text)
        if not s:
            return None, None
        body = ""
        if task.target == "program":
            d = subprocess.run([CLI, "decode", crash], stdout=subprocess.PIPE, text=True)
            body = "\n".join(l for l in d.stdout.splitlines() if not l.startswith("#")) + "\n"
        return "crash " + s.group(1), body
    verdict = m.group(1).strip()
    lines = text[m.end():].lstrip("\n").splitlines()
    if task.target == "bounds":
        i = next((k for k, l in enumerate(lines) if l.startswith("# as a Program:")), None)
        lines = lines[i + 1:] if i is not None else []
    prog = []
    for l in lines:
        if l.startswith("==") or l.startswith("    #") or l.startswith("MS:") or not l.strip():
            break
        prog.append(l)
    return verdict, "\n".join(prog) + "\n"


def signature(verdict):
    m = re.match(r"violation at op \d+: (I\d+)", verdict)  # the buddy target's: its invariant
    if m:
        return f"violation {m[1]}"
    m = re.match(r"(violation \w+|difference|crash \w+: \S+)", verdict)
    return m.group(1) if m else verdict.split(":")[0]


def program_file(task, verdict, body, door=None):
    if task.target in ("threads", "buddy"):
        return body  # the fuzzer printed it pinned, with its schedule and expect line
    lines = body.splitlines()
    header = [f"arch {task.arch}", f"patch {task.patch}"]
    if task.target == "program":
        header += ["page 4k", f"door {door or task.door}", "spec_v1 mask"]
    else:
        cfg = re.search(r"\((\w+)/arch(\d+)/(\w+)/(\w+)/(\w+)\)", verdict)
        if cfg:
            header += [f"page {cfg[3]}", f"door {door or cfg[4]}", f"spec_v1 {cfg[5]}"]
    return "\n".join(header + lines) + "\n"


def classify(task, verdict, body):
    """Does the finding also fail through the front doors mmap(2) has?"""
    if task.target == "buddy":
        return ["buddy"]  # no front door: the allocator's API is the program's
    if task.target == "threads":
        return [task.door] if task.door != "direct" else []
    reach = []
    for door in ("anon", "regular"):
        path = os.path.join(task.workdir, f"reach-{door}.fl")
        with open(path, "w") as f:
            f.write(program_file(task, verdict, body, door))
        r = subprocess.run([CLI, "replay", "--quiet", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode == 1:
            reach.append(door)
    return reach


def collect_findings(task):
    """One Program file per distinct verdict; only its first input is minimised."""
    seen = {}
    # a file written again (the same bytes failing after a restart) is described once
    times = {}
    for t, crash in sorted(task.crashes):
        times.setdefault(crash, []).append(t)
    firsts = sorted((ts[0], crash) for crash, ts in times.items())
    # A level whose bug is shallow fails again soon after every restart, with
    # new bytes each time: hundreds of inputs of one finding, half a second
    # each to describe. Past DESCRIBE_SECONDS, or the run's slice, the rest
    # are counted, not run.
    ends = min(time.time() + DESCRIBE_SECONDS, task.deadline or float("inf"))
    for t, crash in firsts[:1] if FIRST_FINDING else firsts:
        if time.time() > ends and seen:
            task.undescribed += 1
            continue
        verdict, body = describe(task, crash)
        if verdict is None:
            continue
        sig = signature(verdict)
        if sig in seen:
            seen[sig]["count"] += len(times[crash])
            continue
        small = crash if NO_MINIMISE else minimise(task, crash)
        verdict2, body2 = describe(task, small)
        if verdict2 is not None and signature(verdict2) == sig:
            verdict, body = verdict2, body2
        digest = hashlib.sha1(body.encode()).hexdigest()[:10]
        fname = f"{task.name}-{sig.replace(' ', '-')}-{digest}.fl"
        path = os.path.join(FINDINGS, fname)
        if task.target == "buddy":
            seen[sig] = dict(buddy_finding(task, t, crash, verdict, body, digest), count=len(times[crash]))
            continue
        reach = classify(task, verdict, body)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = program_file(task, verdict, body)
        with open(path, "w") as f:
            f.write(text)
        # The Program's own verdict under the machine becomes its expectation;
        # for the program target it must be the verdict the fuzzer reported.
        if task.target == "threads":
            # its schedule, replayed from the text alone, must give its expect line
            r = subprocess.run([CLI, "interleave", "--check-expect", "--quiet", path], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            replayed = sig if r.returncode == 0 and "[the schedule does not replay]" not in verdict else "error"
            replays = replayed == sig
        else:
            r = subprocess.run([CLI, "replay", "--quiet", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
            m = re.search(r"^verdict: (.*)$", r.stdout, re.M)
            replayed = m.group(1) if m else "error"
            replays = replayed != "ok" and (task.target != "program" or signature(replayed) == sig)
        with open(path, "w") as f:
            f.write(f"# found by {task.engine} on {task.name} after {t:.1f} s ({os.path.basename(crash)})\n")
            f.write(f"# fuzzer: {verdict}\n")
            f.write(f"# reachable through: {', '.join(reach) if reach else 'direct only (assumption-dependent)'}\n")
            f.write(text)
            if replayed != "ok" and replayed != "error" and task.target != "threads":
                f.write(f"expect {signature(replayed)}\n")
        seen[sig] = {"verdict": verdict, "replayed": replayed, "file": os.path.relpath(path, ROOT), "time": t,
                     "count": len(times[crash]), "replays": replays, "reachable": reach}
    task.findings = list(seen.values())


def buddy_finding(task, t, crash, verdict, body, digest):
    """A buddy finding as a .bl Program under corpora/buddy/findings, replayed
    from its text at every level; its expect line says where it fails."""
    sig = verdict.split(":")[0].replace("violation at op ", "op")
    name = f"{task.engine}-{task.name}-{digest}.bl"
    path = os.path.join(BUDDY_FINDINGS, name)
    os.makedirs(BUDDY_FINDINGS, exist_ok=True)
    with open(path, "w") as f:
        f.write(body)
    ok, bad, own = [], [], None
    for level in BUDDY_LEVELS:
        r = subprocess.run([BUDDY_REPLAY, "--replay", "--level", level, path], stdout=subprocess.PIPE, text=True)
        m = re.search(r"at \w+: (ok|violation at op (\d+): (I\d+)|bad input)", r.stdout)
        if m and m[1] == "ok":
            ok.append(level)
        elif m and m[2]:
            bad.append(f"violation {m[3]} at op {m[2]} at {level}")
            if level == task.historic:
                own = m[3]
    replays = own is not None and verdict.split(": ")[1].startswith(own)
    with open(path, "w") as f:
        f.write(f"# found by {task.engine} on {task.name} after {t:.1f} s ({os.path.basename(crash)})\n")
        f.write(f"# fuzzer: {verdict}\n")
        f.write(f"# expect ok at {', '.join(ok)}; {'; '.join(bad)}\n")
        f.write(body)
    return {"verdict": verdict, "replayed": own or "ok", "file": os.path.relpath(path, ROOT), "time": t,
            "replays": replays, "reachable": ["buddy"]}


def main(argv):
    global FINDINGS, FROM_SCRATCH, NO_MINIMISE, FIRST_FINDING, BUDDY_FINDINGS, USE_CMPLOG, CLOCK
    a = parse_args(argv)
    FINDINGS = os.path.abspath(a.findings)
    FROM_SCRATCH, NO_MINIMISE, USE_CMPLOG = a.from_scratch, a.no_minimise, a.cmplog
    FIRST_FINDING = a.first_finding
    BUDDY_FINDINGS = os.path.abspath(a.buddy_findings)
    tasks = []
    for level in (a.levels if "buddy" in a.targets else []):
        for engine in a.engines:
            tasks.append(Task("buddy", None, None, None, engine, level))
    for target in [t for t in a.targets if t != "buddy"]:
        for patch in a.patches:
            for arch in a.arches:
                for door in (a.doors if target != "bounds" else [None]):
                    for historic in (a.historics if target == "threads" else ["none"]):
                        for engine in a.engines:
                            tasks.append(Task(target, patch, arch, door, engine, historic))
    CLOCK = Clock(a.time, len(tasks), a.jobs)  # the build check below is inside the budget
    if any(t.target != "buddy" for t in tasks) and not os.path.exists(CLI):
        die(f"{CLI} is missing: run ./faultline fuzz (it builds it)")
    if any(t.target == "buddy" for t in tasks) and not os.path.exists(BUDDY_REPLAY):
        die(f"{BUDDY_REPLAY} is missing: cmake --build --preset default --target buddy-explore")
    if a.no_build:
        wanted = [t.binary() for t in tasks] + [t.binary("afl-cmplog") for t in tasks if a.cmplog and t.engine == "afl"]
        missing = sorted({b for b in wanted if not os.access(b, os.X_OK)})
        if missing:
            die(f"--no-build: {len(missing)} binaries are missing, e.g. {missing[0]} (build them with --build-only)")
    else:
        build(a.engines, tasks, a.cmplog, only_cmplog=a.cmplog and a.build_only)
    if a.build_only:
        return 0
    for t in tasks:
        t.max_len = read_max_len(t.binary())
    first = CLOCK.slice(start=False)
    say(f"[fuzz] {len(tasks)} runs, about {first:.0f} s each, {a.jobs} at a time (budget {a.time} s, "
        f"{a.time - CLOCK.left():.0f} s of it spent checking the build)")
    if first <= MIN_SLICE:
        say(f"[fuzz] the budget is too short for {len(tasks)} runs of at least {MIN_SLICE:.0f} s: "
            "the runs it cannot fit are skipped")
    start = time.time()
    for t in tasks:
        if not a.keep_corpus:
            shutil.rmtree(t.workdir, ignore_errors=True)
        os.makedirs(t.workdir, exist_ok=True)

    def run(t):
        t0, slice_s = time.time(), CLOCK.slice()
        if not slice_s:
            t.skipped = True
            return t
        t.deadline = t0 + slice_s
        (run_libfuzzer if t.engine == "libfuzzer" else run_afl)(t, slice_s, start)
        progress(t, start)
        collect_findings(t)
        CLOCK.finished(time.time() - t0, slice_s)
        return t

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        list(pool.map(run, tasks))

    print()
    hdr = f"{'configuration':30s} {'engine':9s} {'execs':>11s} {'exec/s':>8s} {'cov':>7s} {'finds':>5s} " \
          f"{'first(s)':>8s}  finding (reachable through)"
    print(hdr)
    print("-" * len(hdr))
    for t in tasks:
        if t.skipped:
            print(f"{t.name:30s} {t.engine:9s} skipped: the budget ran out")
            continue
        first = min((f["time"] for f in t.findings), default=None)
        what = "; ".join(f"{f['verdict'].split(' (')[0]} ({', '.join(f['reachable']) or 'direct only'})"
                         f"{'' if f['replays'] else ' [DOES NOT REPLAY]'}" for f in t.findings)
        print(f"{t.config if t.target == 'bounds' else t.name:30s} {t.engine:9s} {t.execs:>11,} {t.exec_per_s:>8,} "
              f"{str(t.cov):>7s} {len(t.findings):>5d} {('%.1f' % first) if first is not None else '-':>8s}  {what}")
    for t in tasks:
        for f in t.findings:
            print(f"  {f['file']}")
        if t.undescribed:
            print(f"  {t.name}: {t.undescribed} more failing inputs not described "
                  f"(describing stops after {DESCRIBE_SECONDS} s, or where the run's slice ends)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{k: getattr(t, k) for k in ("name", "engine", "target", "patch", "arch", "door", "execs",
                                                    "exec_per_s", "cov", "seconds", "findings", "coverage_curve",
                                                    "stability", "historic", "skipped", "undescribed")}
                       for t in tasks], f, indent=1)
    bad = [f for t in tasks for f in t.findings if not f["replays"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
