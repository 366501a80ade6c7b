# SPDX-License-Identifier: GPL-2.0-only
"""The real-kernel techniques of faultline verify: the host-kernel oracle and
the bench (cost figures). Both need privileges and skip cleanly without."""
from .techniques import Result


def run_oracle(run, seconds):
    return Result("oracle", "skipped", "the host-kernel oracle is not built yet")


def run_bench(run, seconds):
    return Result("bench", "skipped", "the bench is not built yet")


def add_sections(results, meta, plots):
    """Adds the bench's plots and cost table to the report, when it ran."""
