# SPDX-License-Identifier: GPL-2.0-only
"""Progress for faultline verify: a live status line on a terminal, plain
timestamped lines otherwise (CI logs, pipes)."""
import sys
import threading
import time


class Progress:
    def __init__(self, budget, stream=sys.stderr):
        self.start = time.monotonic()
        self.budget = budget
        self.stream = stream
        self.live = stream.isatty()
        self.technique = ""
        self.detail = ""
        self.lane = ""  # what the background lane is doing (the status line's tail)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        if self.live:
            threading.Thread(target=self._tick, daemon=True).start()

    def elapsed(self):
        return time.monotonic() - self.start

    def _status(self):
        lane = f" | lane: {self.lane}" if self.lane else ""
        return f"[verify {self.elapsed():5.0f}/{self.budget:.0f} s] {self.technique}: {self.detail}{lane}"

    def _tick(self):
        while not self.stop.wait(0.5):
            with self.lock:
                self.stream.write("\r\033[K" + self._status()[:160])
                self.stream.flush()

    def begin(self, technique, detail=""):
        with self.lock:
            self.technique, self.detail = technique, detail
            self._line(f"{technique}: {detail or 'started'}")

    def update(self, detail):
        """A sub-step; on a terminal only the status line changes."""
        with self.lock:
            self.detail = detail
            if not self.live:
                self._line(f"{self.technique}: {detail}")

    def lane_sink(self):
        """A Progress-like sink for the lane's builders: their steps show on the status line only."""
        return LaneSink(self)

    def note(self, msg):
        with self.lock:
            self._line(msg)

    def _line(self, msg):
        prefix = "\r\033[K" if self.live else ""
        self.stream.write(f"{prefix}[verify {self.elapsed():5.0f} s] {msg}\n")
        self.stream.flush()

    def close(self):
        self.stop.set()
        if self.live:
            with self.lock:
                self.stream.write("\r\033[K")
                self.stream.flush()


class LaneSink:
    def __init__(self, progress):
        self.progress = progress

    def update(self, detail):
        with self.progress.lock:
            self.progress.lane = detail

    def note(self, msg):
        self.progress.note(f"lane: {msg}")
