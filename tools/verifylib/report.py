# SPDX-License-Identifier: GPL-2.0-only
"""faultline verify's report: report/summary.md and a self-contained
report/index.html (inline CSS and SVG, Program texts embedded)."""
import os
from html import escape

from .evidence import ARCHES, CELLS, DOORS, PATCHES
from .svg import line_plot
from .verdicts import differs

DIFFERENCES = {
    "dontneed_refault": "after MADV_DONTNEED the eager mapping SIGBUSes (VM_MIXEDMAP PTEs are gone for good); "
                        "the lazy one refaults the page",
    "vm_mixedmap": "smaps VmFlags: eager VMAs carry `mm` (VM_MIXEDMAP from vm_insert_page), lazy ones do not",
    "populate_timing": "smaps Rss: eager VMAs are fully populated at mmap(), lazy ones only where touched",
}


def _seconds(s):
    if s < 0:
        return "hand-written"
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.1f} s"


def found_by_text(v, short=False):
    """Techniques that found a violation in the cell, fastest first."""
    ranked = sorted(v["found_by"].items(), key=lambda kv: (kv[1]["seconds"] < 0, kv[1]["seconds"]))
    if short:
        return ", ".join(t if b["seconds"] < 0 else f"{t} {_seconds(b['seconds'])}" for t, b in ranked)
    return "; ".join(f"{t} {_seconds(b['seconds'])} ({b['count']}x)" for t, b in ranked)


def seen_differences(diffs):
    """(kind, description, cells it was seen on) for each documented difference seen."""
    for kind, text in DIFFERENCES.items():
        cells = sorted(c for c, d in diffs.items() if kind in d)
        if cells:
            yield kind, text, cells


def timing_text(meta):
    """'took 640 s: techniques 598 s of the budget, 12 s waiting for builds, reach 25 s after them (share 30 s)'."""
    reach = meta.get("reach", {})
    return (f"took {meta['elapsed']:.0f} s: techniques {meta.get('techniques', 0):.0f} s of the budget, "
            f"{meta.get('waited', 0):.0f} s waiting for builds"
            + (f", reach {reach['used']:.0f} s after them (share {reach['share']:.0f} s)" if reach.get("share") else ""))


def schedule_md(meta):
    """When each technique ran (and whether with its fallback) and what the lane built beside them."""
    if not meta.get("order"):
        return []
    lines = ["", "## Schedule", "", "| technique | started (s) | ended (s) | share (s) | ran with |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {start:.0f} | {end:.0f} | {share:.0f} | {'without a build it prefers' if fallback else 'every build it wants'} |"
              for name, start, end, share, fallback in meta["order"]]
    lines += ["", "The lane (one job at a time, niced, beside the techniques):", ""]
    lines += [f"- {name}: {state}{'' if ok or state != 'done' else ' (FAILED)'}, {took:.0f} s{': ' + what if what else ''}"
              for name, state, ok, took, what in meta.get("lane", [])]
    return lines


def verdict_rows(verdicts, expected):
    """(cell, patch, arch, door, verdict, expected verdict if it differs else '')."""
    for cell in CELLS:
        v = verdicts[cell]
        patch, arch, door = cell.split("/")
        want = expected.get(cell, "")
        yield cell, patch, arch[4:], door, v, want if differs(v["verdict"], want, v.get("search_only", False)) else ""


def write_summary_md(path, meta, verdicts, expected, results):
    lines = [f"# faultline verify — {meta['date']}", "",
             f"commit `{meta['commit']}`, budget {meta['budget']:.0f} s, {timing_text(meta)}, "
             f"seed {meta['seed']}. **{meta['outcome']}**", "",
             "| level | width | door | verdict | vs pre | found by (fastest first) | smallest counterexample | "
             "assumption | expected |", "|---|---|---|---|---|---|---|---|---|"]
    for cell, patch, arch, door, v, want in verdict_rows(verdicts, expected):
        small = v["smallest"]
        mark = f"**MISMATCH** (want {want})" if want else expected.get(cell, "")
        lines.append(f"| {patch} | {arch} | {door} | {v['verdict']} | {v['vs_pre']} | {found_by_text(v)} | "
                     f"{small['program'] + ' (' + str(small['ops']) + ' ops)' if small else ''} | "
                     f"{v['assumption']} | {mark} |")
    lines += ["", "## Techniques", "", "| technique | status | seconds | budget | notes |", "|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r.technique} | {r.status} | {r.seconds:.0f} | {r.budget_text()} | {r.reason} |")
    lines += schedule_md(meta)
    diffs = meta.get("differences", {})
    if diffs:
        lines += ["", "## Observable eager-vs-lazy differences (documented)", ""]
        for kind, text, cells in seen_differences(diffs):
            lines.append(f"- `{kind}`: {text}. Seen on {len(cells)} cells ({', '.join(cells[:4])}"
                         f"{', ...' if len(cells) > 4 else ''}).")
    for section in meta.get("extra_md", []):
        lines += [""] + section
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


CSS = """body{font-family:sans-serif;margin:24px;max-width:1400px;color:#222}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;
vertical-align:top}th{background:#f2f2f2}.sound{background:#d9f2d9}.unsound{background:#f7c6c6}
.assumption-dependent{background:#fff1c2}.unknown{background:#eee}.not-run{background:#f8f8f8;color:#888}.bad{color:#b00;font-weight:bold}
pre{background:#f7f7f7;padding:6px;font-size:12px;margin:4px 0}details summary{cursor:pointer}
.plots svg{margin:0 12px 12px 0;border:1px solid #ddd}"""


def _verdict_td(verdict):
    """A verdict's table cell, coloured by its class ("not run" -> not-run)."""
    return f"<td class='{verdict.replace(' ', '-')}'>{verdict}</td>"


def _program_block(report_dir, rel):
    try:
        with open(os.path.join(report_dir, rel)) as f:
            text = f.read()
    except OSError:
        return ""
    return f"<details><summary><a href='{escape(rel)}'>{escape(rel)}</a></summary><pre>{escape(text)}</pre></details>"


def write_index_html(path, meta, verdicts, expected, results, plots):
    report_dir = os.path.dirname(path)
    h = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>faultline verify</title><style>{CSS}</style>"
         f"</head><body><h1>faultline verify</h1><p>{escape(meta['date'])} · commit <code>{escape(meta['commit'])}"
         f"</code> · budget {meta['budget']:.0f} s · {escape(timing_text(meta))} · seed {meta['seed']} · "
         f"<b id='outcome'>{escape(meta['outcome'])}</b></p>",
         "<h2>Verdicts: level × width × front door</h2>",
         "<table id='overview'><tr><th>level</th>" +
         "".join(f"<th>arch{a} {d}</th>" for a in ARCHES for d in DOORS) + "</tr>"]
    for p in PATCHES:
        h.append(f"<tr><th>{p}</th>" + "".join(
            _verdict_td(verdicts[f'{p}/arch{a}/{d}']['verdict'])
            for a in ARCHES for d in DOORS) + "</tr>")
    h.append("</table><table id='verdicts'><tr><th>cell</th><th>verdict</th><th>vs pre</th><th>found by "
             "(fastest first)</th><th>smallest counterexample</th><th>assumption / proved</th><th>expected</th></tr>")
    for cell, patch, arch, door, v, want in verdict_rows(verdicts, expected):
        small = v["smallest"]
        ok = not want
        proved = f"{len(v['proved'])} obligations proved" if v["proved"] else ""
        h.append(f"<tr><td>{cell}</td>{_verdict_td(v['verdict'])}<td>{v['vs_pre']}</td>"
                 f"<td>{escape(found_by_text(v))}</td>"
                 f"<td>{(str(small['ops']) + ' ops, ' + small['technique'] + _program_block(report_dir, small['program'])) if small else ''}</td>"
                 f"<td>{escape(v['assumption'] or proved)}</td>"
                 f"<td class='{'' if ok else 'bad'}'>{expected.get(cell, '') if ok else 'MISMATCH: want ' + want}</td></tr>")
    h.append("</table><h2>Techniques</h2><table><tr><th>technique</th><th>status</th><th>seconds</th>"
             "<th>budget</th><th>notes</th><th>log</th></tr>")
    for r in results:
        h.append(f"<tr><td>{r.technique}</td><td>{r.status}</td><td>{r.seconds:.0f}</td><td>{r.budget_text()}</td>"
                 f"<td>{escape(r.reason)}</td>"
                 f"<td>{f'<a href={chr(39)}{escape(r.log)}{chr(39)}>log</a>' if r.log else ''}</td></tr>")
    h.append("</table>")
    diffs = meta.get("differences", {})
    if diffs:
        h.append("<h2>Observable eager-vs-lazy differences (documented)</h2><ul>")
        for kind, text, cells in seen_differences(diffs):
            example = sorted(diffs[cells[0]][kind])[0]
            h.append(f"<li><code>{kind}</code>: {escape(text)}. Seen on {len(cells)} cells; example "
                     f"<a href='{escape(example)}'>{escape(example)}</a></li>")
        h.append("</ul>")
    for title, svgs in plots:
        if svgs:
            h.append(f"<h2>{escape(title)}</h2><div class='plots'>{''.join(svgs)}</div>")
    for title, html in meta.get("extra_html", []):
        h.append(f"<h2>{escape(title)}</h2>{html}")
    findings = sorted({e.program for r in results for e in r.evidence if e.program})
    h.append(f"<h2>Every counterexample Program ({len(findings)})</h2><ul>" +
             "".join(f"<li><a href='{escape(f)}'>{escape(f)}</a></li>" for f in findings) + "</ul></body></html>")
    with open(path, "w") as f:
        f.write("\n".join(h))


def fuzz_coverage_plots(tasks):
    """One plot per engine: coverage over time, one line per patch level
    (the median over that level's program-target runs)."""
    svgs = []
    for engine in ("libfuzzer", "afl"):
        series = []
        for patch in PATCHES:
            curves = [t["coverage_curve"] for t in tasks
                      if t["engine"] == engine and t["patch"] == patch and t["target"] == "program"
                      and t["coverage_curve"]]
            if not curves:
                continue
            end = max(c[-1][0] for c in curves)
            samples = []
            for i in range(1, 21):
                at = end * i / 20
                vals = sorted(max((cov for s, cov in c if s <= at), default=0) for c in curves)
                samples.append((at, vals[len(vals) // 2]))
            series.append((patch, samples))
        if series:
            svgs.append(line_plot(f"{engine}: coverage over time (median of program runs)", series,
                                  "seconds into the run", "coverage (edges/features)"))
    return svgs
