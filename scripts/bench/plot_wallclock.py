#!/usr/bin/env python3
"""Validation accuracy against wall-clock time for several mx-train runs, as
an SVG: the MXNet paper's convergence figure, drawn from run directories of
scripts/bench/dist_scaling.sh convergence.

    plot_wallclock.py -o OUT.svg [--title T] [--metric val.accuracy] RUN[=LABEL] ...

Each RUN is an mx-train run directory with metrics.jsonl (one line per epoch)
and wallclock.tsv ("EPOCH SECONDS": the wall-clock time since the job's
launch at which that epoch's line appeared, start-up and validation
included). mx-plot draws the same runs against the epoch; it has no time
axis, hence this script. Python 3 standard library only.
"""
import argparse
import json
import math
import os
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]


def series(run, metric):
    part, name = metric.split(".", 1) if "." in metric else ("", metric)
    values = []
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            v = record.get(part, {}).get(name) if part else record.get(name)
            values.append(v)
    times = {}
    with open(os.path.join(run, "wallclock.tsv"), encoding="utf-8") as f:
        for line in f:
            epoch, seconds = line.split()
            times[int(epoch)] = float(seconds)
    points = [(times[i + 1], v) for i, v in enumerate(values) if v is not None and i + 1 in times]
    if not points:
        sys.exit("plot_wallclock.py: %s has no %s with a wall-clock time" % (run, metric))
    return points


def ticks(lo, hi, count=6):
    span = hi - lo
    step = 10 ** math.floor(math.log10(span / count))
    for m in (1, 2, 2.5, 5, 10):
        if span / (step * m) <= count:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="RUN or RUN=LABEL")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--metric", default="val.accuracy")
    p.add_argument("--title", default="")
    args = p.parse_args()
    runs = []
    for spec in args.runs:
        path, _, label = spec.partition("=")
        runs.append((label or os.path.basename(os.path.normpath(path)), series(path, args.metric)))
    scale = 100 if args.metric.endswith("accuracy") else 1
    xs = [0.0] + [t for _, pts in runs for t, _ in pts]
    ys = [v * scale for _, pts in runs for _, v in pts]
    x_hi = max(xs) * 1.05
    y_lo, y_hi = min(ys), max(ys)
    pad = max((y_hi - y_lo) * 0.1, 0.5)
    y_lo, y_hi = y_lo - pad, y_hi + pad
    w, h, left, right, top, bottom = 640, 400, 70, 20, 50, 55
    pw, ph = w - left - right, h - top - bottom
    X = lambda x: left + pw * x / x_hi
    Y = lambda y: top + ph * (1 - (y - y_lo) / (y_hi - y_lo))
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="DejaVu Sans, sans-serif" '
           'font-size="12">' % (w, h), '<rect width="100%" height="100%" fill="white"/>']
    if args.title:
        out.append('<text x="%d" y="22" text-anchor="middle" font-size="14">%s</text>' % (w // 2, args.title))
    for t in ticks(0, x_hi):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (X(t), top, X(t), top + ph))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (X(t), top + ph + 16, t))
    for t in ticks(y_lo, y_hi):
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (left, Y(t), left + pw, Y(t)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (left - 6, Y(t) + 4, t))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (left, top, pw, ph))
    out.append('<text x="%d" y="%d" text-anchor="middle">wall-clock time since launch (s)</text>'
               % (left + pw // 2, h - 12))
    ylabel = args.metric + (" (%)" if scale == 100 else "")
    out.append('<text transform="translate(16,%d) rotate(-90)" text-anchor="middle">%s</text>' % (top + ph // 2, ylabel))
    legend = []
    for i, (label, pts) in enumerate(runs):
        c = COLOURS[i % len(COLOURS)]
        path = " ".join("%.1f,%.1f" % (X(t), Y(v * scale)) for t, v in pts)
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (path, c))
        for t, v in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (X(t), Y(v * scale), c))
        legend.append((label, c))
    # The legend in the top left corner, on white: accuracy curves rise to the right.
    out.append('<rect x="%d" y="%d" width="150" height="%d" fill="white" stroke="#ccc"/>'
               % (left + 8, top + 8, 18 * len(legend) + 8))
    for i, (label, c) in enumerate(legend):
        ly = top + 26 + 18 * i
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                   % (left + 16, ly - 4, left + 36, ly - 4, c))
        out.append('<text x="%d" y="%d">%s</text>' % (left + 42, ly, label))
    out.append("</svg>")
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
