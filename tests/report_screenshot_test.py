#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The verify report renders: builds report/index.html from a small fixed
set of results, loads it in headless Chromium, and checks the DOM (verdict
table rows, plots) and the screenshot (the verdict colours are on screen).

usage: report_screenshot_test.py OUTDIR   (the screenshot stays in OUTDIR)"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from verifylib import report, verdicts  # noqa: E402
from verifylib.evidence import CELLS, Evidence  # noqa: E402
from verifylib.svg import line_plot  # noqa: E402
from verifylib.techniques import Result  # noqa: E402

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]
COLOURS = {"sound": (0xd9, 0xf2, 0xd9), "unsound": (0xf7, 0xc6, 0xc6), "assumption-dependent": (0xff, 0xf1, 0xc2)}


def build_report(out):
    prog = os.path.join(out, "findings", "v1.fl")
    os.makedirs(os.path.dirname(prog))
    with open(prog, "w") as f:
        f.write("map value_size=8 max_entries=1024\nmmap A len=1p pgoff=0xfffff prot=r\nload A+0xff0\n")
    results = [Result("corpus", metrics={"cells_checked": CELLS}),
               Result("afl", evidence=[Evidence("afl", "v1/arch32/regular", "violation", "violation foreign_page",
                                                0.4, "findings/v1.fl", 2),
                                       Evidence("afl", "v2/arch64/direct", "violation", "violation foreign_page",
                                                3.0, "findings/v1.fl", 2)])]
    decided = verdicts.decide(results)
    expected = verdicts.load_expected(os.path.join(ROOT, "tools", "verifylib", "expected"))
    meta = {"date": "2026-11-30", "commit": "test", "budget": 60, "elapsed": 1, "seed": 1, "outcome": "fixture"}
    plot = line_plot("latency", [("eager", [(1, 100), (8, 800), (64, 6400)]), ("lazy", [(1, 2), (8, 2), (64, 2)])],
                     "MiB", "us", logx=True, logy=True)
    path = os.path.join(out, "index.html")
    report.write_index_html(path, meta, decided, expected, results, [("Plots", [plot])])
    return path


def chromium(*args):
    binary = shutil.which("chromium")
    if not binary:
        sys.exit("FAIL: chromium is not installed (./faultline test installs Debian's chromium)")
    return subprocess.run([binary] + CHROMIUM_FLAGS + list(args), capture_output=True, text=True, timeout=120)


def png_pixels(path):
    """Decodes an 8-bit RGB/RGBA PNG (what Chromium writes) into rows of (r, g, b)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), f"unexpected PNG format {depth}/{colour}"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xff
            elif f == 2:
                line[i] = (line[i] + b) & 0xff
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xff
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return rows


def main():
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "report-test")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    page = "file://" + build_report(out)
    failures = []

    dom = chromium("--dump-dom", page).stdout
    table = dom[dom.find('id="verdicts"'):]
    rows = table[:table.find("</table>")].count("<tr><td>")
    if rows != len(CELLS):
        failures.append(f"verdict table has {rows} rows, want {len(CELLS)}")
    for needle in ("<polyline", "unsound", "assumption-dependent", "findings/v1.fl"):
        if needle not in dom:
            failures.append(f"rendered DOM lacks {needle!r}")

    shot = os.path.join(out, "screenshot.png")
    r = chromium(f"--screenshot={shot}", "--window-size=1400,1800", page)
    if not os.path.exists(shot):
        failures.append(f"no screenshot: {r.stderr[-500:]}")
    else:
        pixels = [p for row in png_pixels(shot) for p in row]
        for name, rgb in COLOURS.items():
            n = sum(1 for p in pixels if p == rgb)
            if n < 500:
                failures.append(f"the '{name}' colour covers only {n} pixels on screen")
        print(f"screenshot {shot}: {len(pixels)} pixels, "
              + ", ".join(f"{k} {sum(1 for p in pixels if p == v)}" for k, v in COLOURS.items()))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
