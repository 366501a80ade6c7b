# SPDX-License-Identifier: GPL-2.0-only
"""A build that runs while the techniques do (verify: the AFL++ CmpLog
binaries, a third build of the whole library that only the fuzz technique's
AFL++ runs use): started niced in its own process group, asked for when it is
needed, and stopped there if it has not finished, so it never delays a
technique. Its time is recorded as a build step's (steps.py) when it
finishes."""
import os
import signal
import subprocess
import threading
import time

from . import steps


class BackgroundBuild:
    def __init__(self, name, argv, root, log):
        self.name, self.root = name, root
        self.t0 = time.monotonic()
        self.log = open(log, "w")
        self.proc = subprocess.Popen(["nice", "-n", "10"] + argv, cwd=root, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.took = None  # its wall time, once it has exited
        threading.Thread(target=self._wait, daemon=True).start()

    def _wait(self):
        self.proc.wait()
        self.took = time.monotonic() - self.t0

    def announce(self, left=()):
        return steps.announce(self.name, left, self.root)

    def finish(self):
        """(built, what happened): built if it had finished by now; else it is stopped."""
        rc = self.proc.poll()
        took = self.took if self.took is not None else time.monotonic() - self.t0
        if rc is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # its own group: build.sh, xargs and the compilers
            self.proc.wait()
            self.log.close()
            return False, f"{self.name} not finished after {took:.0f} s: stopped"
        self.log.close()
        if rc:
            return False, f"{self.name} failed (exit {rc}, {self.log.name})"
        steps.record(self.name, took, self.root)
        return True, f"{self.name} built in the background in {took:.0f} s"
