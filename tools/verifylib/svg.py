# SPDX-License-Identifier: GPL-2.0-only
"""A small line-plot writer: inline SVG, linear or log axes, a legend.
Enough for latency-vs-size and coverage-over-time; no plotting library."""
import math
from html import escape

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def _ticks(lo, hi, log):
    if log:
        return [10.0 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]
    if hi == lo:
        return [lo]
    step = 10 ** math.floor(math.log10((hi - lo) / 4))
    for m in (1, 2, 5, 10):
        if (hi - lo) / (step * m) <= 6:
            step *= m
            break
    return [step * i for i in range(math.floor(lo / step), math.ceil(hi / step) + 1)]


def _label(v):
    if v == 0:
        return "0"
    if abs(v) >= 1e4 or abs(v) < 1e-2:
        return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-")
    return f"{v:g}"


def line_plot(title, series, xlabel, ylabel, logx=False, logy=False, width=640, height=360):
    """series: [(label, [(x, y), ...]), ...]; points with x<=0 or y<=0 are dropped on log axes."""
    pts = [(x, y) for _, s in series for x, y in s if (x > 0 or not logx) and (y > 0 or not logy)]
    left, right, top, bottom = 70, 170, 30, 45
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{escape(title)}</text>']
    if not pts:
        out.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle">no data</text></svg>')
        return "\n".join(out)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    xt, yt = _ticks(min(xs), max(xs), logx), _ticks(min(ys), max(ys), logy)
    x0, x1, y0, y1 = min(xt), max(xt), min(yt), max(yt)
    fx = (lambda v: math.log10(v)) if logx else (lambda v: v)
    fy = (lambda v: math.log10(v)) if logy else (lambda v: v)
    pw, ph = width - left - right, height - top - bottom

    def px(x):
        return left + (fx(x) - fx(x0)) / ((fx(x1) - fx(x0)) or 1) * pw

    def py(y):
        return top + ph - (fy(y) - fy(y0)) / ((fy(y1) - fy(y0)) or 1) * ph

    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
    for t in xt:
        out.append(f'<line x1="{px(t):.1f}" y1="{top + ph}" x2="{px(t):.1f}" y2="{top}" stroke="#eee"/>'
                   f'<text x="{px(t):.1f}" y="{top + ph + 14}" text-anchor="middle">{_label(t)}</text>')
    for t in yt:
        out.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{left + pw}" y2="{py(t):.1f}" stroke="#eee"/>'
                   f'<text x="{left - 4}" y="{py(t) + 4:.1f}" text-anchor="end">{_label(t)}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 8}" text-anchor="middle">{escape(xlabel)}</text>'
               f'<text transform="translate(14 {top + ph / 2}) rotate(-90)" text-anchor="middle">'
               f'{escape(ylabel)}</text>')
    for i, (label, s) in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        keep = sorted((x, y) for x, y in s if (x > 0 or not logx) and (y > 0 or not logy))
        if keep:
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in keep)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.8"/>')
            out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{colour}"/>' for x, y in keep]
        ly = top + 12 + i * 15
        out.append(f'<line x1="{left + pw + 10}" y1="{ly}" x2="{left + pw + 28}" y2="{ly}" stroke="{colour}" '
                   f'stroke-width="2"/><text x="{left + pw + 32}" y="{ly + 4}">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)
