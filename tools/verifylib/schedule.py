# SPDX-License-Identifier: GPL-2.0-only
"""verify's schedule: which technique runs next, with how much of the
budget, and when the verdict table can be shown.

The techniques run one at a time in the foreground, in plan order, while the
lane (lane.py) builds what the others need. A technique starts when the lane
jobs it needs are over (built or failed: a failed build leaves it to skip or
fall back to the test tree's binary); one that only prefers a build (fuzz:
AFL++'s CmpLog twins) starts without it when nothing else can run, rather
than leave the cores to the build alone. The budget counts the techniques' own wall
time, not the time they waited for a build: that is setup, reported apart."""
import time
from dataclasses import dataclass, field


@dataclass
class Technique:
    name: str
    runner: object            # (run, seconds) -> Result
    share: object             # fraction of the budget, None: what the others leave
    cells: object             # quick -> the verdict-table cells it can decide
    needs: tuple = ()         # lane jobs it cannot run without (it waits for them)
    prefers: tuple = ()       # lane jobs whose binaries it prefers (else it falls back)
    decides_table: bool = False  # the first table waits for it


def pick(pending, over, queued):
    """(technique, whether it runs with its fallback) or None: wait for the lane.
    pending: plan order; over: lane jobs ended; queued: every lane job's name.
    The techniques that decide the verdict table come first, with their
    fallback if their preferred build is not done (proofs: the test tree's
    faultline-prove gives the same verdicts, Z3's rlimit bounds them), so
    that the table does not wait for the lane."""
    def ready(names):
        return all(n not in queued or n in over for n in names)

    for group in ([t for t in pending if t.decides_table], pending):
        for t in group:
            if ready(t.needs) and ready(t.prefers):
                return t, False
        for t in group:
            if ready(t.needs):
                return t, True
    return None


def allowance(t, budget, spent, pending, reserve=0.0):
    """Seconds for t: its share, or (share None) what the budget has left after the
    techniques that ran (their wall time), the shares of those still to run and the
    reserve (the reach report's replays of t's own inputs)."""
    if t.share is not None:
        return budget * t.share
    others = sum(budget * p.share for p in pending if p is not t and p.share is not None)
    return max(10.0, budget - spent - others - reserve)


@dataclass
class Ledger:
    """What the schedule did: each technique's start and end on verify's clock,
    the time spent waiting for the lane, and the budget the techniques used."""
    order: list = field(default_factory=list)       # (name, started, ended, share, fallback)
    waits: list = field(default_factory=list)       # (waited for, seconds)
    spent: float = 0.0

    def waited(self):
        return sum(s for _, s in self.waits)


def run_plan(pending, lane, budget, run_one, on_result=lambda results, pending: None, note=lambda msg: None,
             reserve=0.0, clock=time.monotonic):
    """Runs every technique of `pending` (plan order); run_one(t, seconds, fallback) -> Result
    with .used set; on_result(results so far, techniques still to run) after each.
    Returns (results in the order they ran, Ledger)."""
    pending, results, ledger = list(pending), [], Ledger()
    t_start = clock()
    while pending:
        queued = lane.names()
        choice = pick(pending, lane.finished(), queued)
        if choice is None:
            waiting = sorted({n for t in pending for n in t.needs if n not in lane.finished()})
            note(f"waiting for the lane: {', '.join(waiting)} (needed by "
                 f"{', '.join(t.name for t in pending if set(t.needs) & set(waiting))})")
            t0 = clock()
            lane.wait_change()
            ledger.waits.append((", ".join(waiting), clock() - t0))
            continue
        t, fallback = choice
        seconds = allowance(t, budget, ledger.spent, pending, reserve)
        pending.remove(t)
        started = clock() - t_start
        r = run_one(t, seconds, fallback)
        ledger.spent += r.used
        ledger.order.append((t.name, started, clock() - t_start, seconds, fallback))
        results.append(r)
        on_result(results, pending)
    return results, ledger


class TableWatch:
    """Shows the verdict table once the techniques that decide every cell
    have run (provisional: says which techniques are still to come), then
    again whenever a later technique changes a verdict; final() at the end."""

    def __init__(self, deciders, decide, show):
        self.deciders = set(deciders)  # selected techniques with decides_table
        self.decide, self.show = decide, show  # decide(results) -> verdicts; show(verdicts, heading)
        self.shown = None

    def update(self, results, pending):
        ran = {r.technique for r in results}
        if not self.deciders or not self.deciders <= ran or not pending:
            return False
        verdicts = self.decide(results)
        if self.shown is not None and _cells(verdicts) == _cells(self.shown):
            return False
        still = ", ".join(t.name for t in pending)
        self.show(verdicts, f"{'provisional' if self.shown is None else 'updated, still provisional'} "
                            f"(after {', '.join(r.technique for r in results)}; still to come: {still})")
        self.shown = verdicts
        return True

    def final(self, results):
        verdicts = self.decide(results)
        self.show(verdicts, "final")
        return verdicts


def _cells(verdicts):
    return {c: v["verdict"] for c, v in verdicts.items()}
