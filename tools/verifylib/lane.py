# SPDX-License-Identifier: GPL-2.0-only
"""verify's background lane: the builds the techniques are waiting for (and
then the reach report's replays), one job at a time, beside the technique
that runs in the foreground.

Two cores are shared by a technique and a build: the lane's thread lowers its
own nice value (on Linux a thread's priority is its own, and the processes it
starts inherit it), so a build takes the cores the technique leaves idle and
never slows a timed technique much. One job at a time: two builds at once
would only slow each other (each already uses every core)."""
import os
import threading
import time

NICE = 10


class Job:
    def __init__(self, name, work, priority):
        self.name, self.work, self.priority = name, work, priority
        self.state = "queued"  # queued | running | done | cancelled
        self.ok, self.what, self.took = False, "", 0.0


class Lane:
    def __init__(self, on_done=None, nice=NICE):
        self.jobs = []
        self.cond = threading.Condition()
        self.on_done = on_done or (lambda job: None)
        self.nice = nice
        self.closed = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def add(self, name, work, priority=0):
        """Queues work() -> (ok, what) under name; returns its Job. The lane takes the
        queued job of the lowest priority number next (the first queued among equals)."""
        job = Job(name, work, priority)
        with self.cond:
            self.jobs.append(job)
            self.cond.notify_all()
        return job

    def _next(self):
        with self.cond:
            while True:
                job = min((j for j in self.jobs if j.state == "queued"), key=lambda j: j.priority, default=None)
                if job:
                    job.state = "running"
                    return job
                if self.closed:
                    return None
                self.cond.wait()

    def _loop(self):
        if self.nice:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)
        while True:
            job = self._next()
            if job is None:
                return
            t0 = time.monotonic()
            try:
                job.ok, job.what = job.work()
            except Exception as e:  # a broken job is reported, the lane goes on
                job.ok, job.what = False, f"{type(e).__name__}: {e}"
            job.took = time.monotonic() - t0
            try:
                self.on_done(job)
            except Exception as e:  # reporting must not stop the lane (a technique may be waiting)
                job.what += f" (and reporting it: {type(e).__name__}: {e})"
            with self.cond:
                job.state = "done"
                self.cond.notify_all()

    def state(self, name):
        """queued | running | done | cancelled, or None when no job has that name."""
        with self.cond:
            return next((j.state for j in self.jobs if j.name == name), None)

    def queue(self):
        """The names of the jobs not started yet, in the order the lane will take them."""
        with self.cond:
            return [j.name for j in sorted((j for j in self.jobs if j.state == "queued"), key=lambda j: j.priority)]

    def names(self):
        with self.cond:
            return {j.name for j in self.jobs}

    def finished(self):
        """The names of the jobs that are over (done or cancelled)."""
        with self.cond:
            return {j.name for j in self.jobs if j.state in ("done", "cancelled")}

    def cancel(self, name):
        """Drops a job that has not started; True if it had not."""
        with self.cond:
            job = next((j for j in self.jobs if j.name == name), None)
            if job and job.state == "queued":
                job.state = "cancelled"
                self.cond.notify_all()
                return True
            return False

    def wait_change(self, timeout=None):
        """Blocks until some job ends (or timeout); returns the names of the jobs over by then."""
        with self.cond:
            over = {j.name for j in self.jobs if j.state in ("done", "cancelled")}
            self.cond.wait_for(lambda: {j.name for j in self.jobs if j.state in ("done", "cancelled")} != over
                               or all(j.state in ("done", "cancelled") for j in self.jobs), timeout)
        return self.finished()

    def summary(self):
        """(job, state, ok, seconds, what) for the report."""
        with self.cond:
            return [(j.name, j.state, j.ok, round(j.took, 1), j.what) for j in self.jobs]

    def close(self):
        """Waits for every queued job; the lane takes no more."""
        with self.cond:
            self.closed = True
            self.cond.notify_all()
        self.thread.join()
