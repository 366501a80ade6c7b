#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The issue's acceptance figures from a --matrix CSV: mmap+munmap latency
64 MiB / 1 MiB per backend (bpf-array must grow >= 10x, the lazy ones stay
within 1.5x), and lazy/eager at 8 MiB next to the seed's 220 us -> 1.2 us.
Usage: ratios.py DIR/matrix.csv [THREADS]"""
import csv
import sys

MIB = 1 << 20


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    threads = sys.argv[2] if len(sys.argv) == 3 else "1"
    lat = {}
    with open(sys.argv[1], newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] == "ok" and r["latency_ns"] and r["threads"] == threads:
                lat[(r["backend"], int(r["map_bytes"]), r["pattern"])] = float(r["latency_ns"])
    print(f"mmap+munmap latency, {threads} producer(s): 1 MiB, 8 MiB, 64 MiB (us) and 64 MiB / 1 MiB")
    for b in ("bpf-array", "bpf-arena", "memfd", "uffd", "anon"):
        v = [lat.get((b, s * MIB, "mmap")) for s in (1, 8, 64)]
        if None in v:
            print(f"  {b:10} (missing)")
            continue
        want = ">= 10x" if b == "bpf-array" else "<= 1.5x"
        print(f"  {b:10} {v[0] / 1e3:9.1f} {v[1] / 1e3:9.1f} {v[2] / 1e3:9.1f}   {v[2] / v[0]:6.2f}x (want {want})")
    eager = lat.get(("bpf-array", 8 * MIB, "mmap"))
    if eager:
        print(f"8 MiB lazy/eager (seed: 220 us -> 1.2 us = 1/{220 / 1.2:.0f}); eager bpf-array {eager / 1e3:.1f} us")
        for b in ("bpf-arena", "memfd", "uffd", "anon"):
            if (b, 8 * MIB, "mmap") in lat:
                v = lat[(b, 8 * MIB, "mmap")]
                print(f"  {b:10} {v / 1e3:7.1f} us = 1/{eager / v:.0f}")
    print("8 MiB by pattern (us): mmap, mmap+touch, populate, populate+touch (seed: before 220/252/304/334, after 1.2/543/262/286)")
    for b in ("bpf-array", "bpf-arena", "memfd", "uffd", "anon"):
        v = [lat.get((b, 8 * MIB, p)) for p in ("mmap", "mmap+touch", "populate", "populate+touch")]
        print(f"  {b:10} " + " ".join(f"{x / 1e3:9.1f}" if x else "        -" for x in v))


if __name__ == "__main__":
    main()
