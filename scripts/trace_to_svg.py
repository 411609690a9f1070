#!/usr/bin/env python3
"""Draws Chrome trace-event JSON (`tessera plan --trace`, `tessera train --trace`) as an SVG
timeline, for where Perfetto's UI is not at hand (docs/timeline.md).

    scripts/trace_to_svg.py measured.json -o measured.svg
    scripts/trace_to_svg.py predicted.json measured.json -o both.svg --title "nmt, 2 workers"
    scripts/trace_to_svg.py measured.json -o last.svg --steps 1   # only the last traced step

Each file is a panel with its own time axis (milliseconds from its first span); each
process/track pair ("worker 0 / compute") a row; each complete ("X") event a rectangle, named
when the name fits. Spans that overlap on one track (gradient buckets in flight together) are
stacked in sub-rows. Dashed lines mark where each step (args.step) starts. Plain Python.
"""
import argparse
import html
import json
import math
import sys

FONT = 11          # px
CHAR_W = 6.2       # px per character at FONT, roughly (sans-serif)
LABEL_W = 190      # px for the row labels
LANE_H = 18        # px per sub-row
ROW_GAP = 6
AXIS_H = 26

# (test on the span, fill): the first that matches colours it.
COLOURS = [
    (lambda name, track: name.startswith("gradient bucket"), "#d62728"),
    (lambda name, track: track in ("activations", "comm"), "#9467bd"),
    (lambda name, track: name.endswith(" forward"), "#1f77b4"),
    (lambda name, track: name.endswith(" backward"), "#ff7f0e"),
    (lambda name, track: "optimizer" in name, "#2ca02c"),
    (lambda name, track: name.startswith("wait"), "#8c8c8c"),
    (lambda name, track: True, "#17becf"),
]
LEGEND = [("forward", "#1f77b4"), ("backward", "#ff7f0e"), ("optimizer update", "#2ca02c"),
          ("wait for gradients", "#8c8c8c"), ("activation collective", "#9467bd"),
          ("gradient bucket all-reduce", "#d62728")]


def colour(name, track):
    for test, fill in COLOURS:
        if test(name, track):
            return fill
    return "#17becf"


def read_trace(path, last_steps):
    """Returns (rows, t0_us, t1_us, step_starts): rows as [(label, [span dicts])]."""
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    processes, threads, order = {}, {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        key = (e["pid"], e.get("tid", 0))
        if e["name"] == "process_name":
            processes[e["pid"]] = e["args"]["name"]
        elif e["name"] == "thread_name":
            threads[key] = e["args"]["name"]
        elif e["name"] == "thread_sort_index":
            order[key] = e["args"]["sort_index"]
    spans = [e for e in events if e.get("ph") == "X"]
    steps = sorted({e.get("args", {}).get("step") for e in spans} - {None})
    if last_steps and steps:  # a trace without steps (the predicted one) is drawn whole
        keep = set(steps[-last_steps:])
        spans = [e for e in spans if e.get("args", {}).get("step") in keep]
    if not spans:
        raise ValueError(f"{path}: no complete (X) events to draw")
    by_row = {}
    for e in spans:
        by_row.setdefault((e["pid"], e["tid"]), []).append(e)
    rows = []
    for key in sorted(by_row, key=lambda k: (k[0], order.get(k, k[1]), k[1])):
        track = threads.get(key, f"thread {key[1]}")
        label = f"{processes.get(key[0], f'process {key[0]}')} / {track}"
        rows.append((label, track, sorted(by_row[key], key=lambda e: e["ts"])))
    t0 = min(e["ts"] for e in spans)
    t1 = max(e["ts"] + e["dur"] for e in spans)
    step_starts = {}
    for e in spans:
        step = e.get("args", {}).get("step")
        if step is not None:
            step_starts[step] = min(step_starts.get(step, e["ts"]), e["ts"])
    return rows, t0, t1, step_starts


def sub_rows(spans):
    """Greedy interval partitioning: the sub-row of each span so that none overlap."""
    ends, lanes = [], []
    for e in spans:
        for i, end in enumerate(ends):
            if e["ts"] >= end - 1e-9:
                ends[i] = e["ts"] + e["dur"]
                lanes.append(i)
                break
        else:
            ends.append(e["ts"] + e["dur"])
            lanes.append(len(ends) - 1)
    return lanes, max(1, len(ends))


def nice_step(span_ms, target_ticks=10):
    """A tick interval of 1, 2 or 5 times a power of ten giving about target_ticks ticks."""
    raw = max(span_ms, 1e-9) / target_ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5):
        if raw <= m * magnitude:
            return m * magnitude
    return 10 * magnitude


def fit_text(name, width):
    chars = int((width - 6) / CHAR_W)
    if chars >= len(name):
        return name
    return name[:chars - 1] + "\u2026" if chars >= 6 else ""


def panel(out, title, rows, t0, t1, steps, top, width):
    """Appends one panel's SVG to out; returns its height."""
    plot_w = width - LABEL_W - 20
    scale = plot_w / max(t1 - t0, 1e-9)
    x_of = lambda us: LABEL_W + (us - t0) * scale
    y = top
    out.append(f'<text x="8" y="{y + 14}" font-size="13" font-weight="bold">'
               f'{html.escape(title)}</text>')
    y += 22
    # Time axis: ticks in milliseconds from the first span.
    span_ms = (t1 - t0) / 1000
    tick = nice_step(span_ms)
    out.append(f'<line x1="{LABEL_W}" y1="{y + AXIS_H - 4}" x2="{LABEL_W + plot_w}" '
               f'y2="{y + AXIS_H - 4}" stroke="#444"/>')
    k = 0
    while k * tick <= span_ms + 1e-9:
        x = x_of(t0 + k * tick * 1000)
        label = f"{k * tick:.3g} ms"
        out.append(f'<line x1="{x:.1f}" y1="{y + AXIS_H - 8}" x2="{x:.1f}" '
                   f'y2="{y + AXIS_H - 4}" stroke="#444"/>')
        out.append(f'<text x="{x:.1f}" y="{y + AXIS_H - 11}" text-anchor="middle" '
                   f'font-size="10" fill="#444">{label}</text>')
        k += 1
    y += AXIS_H
    if steps:
        y += 14  # a band for the step labels
    body_top = y
    for label, track, spans in rows:
        lanes, n = sub_rows(spans)
        h = n * LANE_H
        out.append(f'<rect x="{LABEL_W}" y="{y}" width="{plot_w}" height="{h}" fill="#f4f4f4"/>')
        out.append(f'<text x="{LABEL_W - 8}" y="{y + h / 2 + 4:.1f}" text-anchor="end" '
                   f'font-size="{FONT}">{html.escape(label)}</text>')
        for e, lane in zip(spans, lanes):
            x, w = x_of(e["ts"]), max(e["dur"] * scale, 0.6)
            ry = y + lane * LANE_H + 1
            args = e.get("args", {})
            tip = e["name"] + f" ({e['dur'] / 1000:.3f} ms"
            if "bytes" in args:
                tip += f", {args.get('collective', '')} {args['bytes']} bytes"
            tip += ")"
            out.append(f'<rect x="{x:.2f}" y="{ry}" width="{w:.2f}" height="{LANE_H - 2}" '
                       f'fill="{colour(e["name"], track)}" stroke="#fff" stroke-width="0.3">'
                       f'<title>{html.escape(tip)}</title></rect>')
            text = fit_text(e["name"], w)
            if text:
                out.append(f'<text x="{x + 3:.2f}" y="{ry + LANE_H - 6}" font-size="{FONT - 1}" '
                           f'fill="#fff">{html.escape(text)}</text>')
        y += h + ROW_GAP
    for step, start in sorted(steps.items()):
        x = x_of(start)
        out.append(f'<line x1="{x:.1f}" y1="{body_top - 2}" x2="{x:.1f}" y2="{y - ROW_GAP}" '
                   f'stroke="#000" stroke-dasharray="3,3" stroke-width="0.8"/>')
        out.append(f'<text x="{x + 3:.1f}" y="{body_top - 4}" font-size="10">step {step}</text>')
    return y - top


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("traces", nargs="+", help="trace JSON files, one panel each")
    p.add_argument("-o", "--output", required=True, help="the SVG file to write")
    p.add_argument("--title", action="append", default=[],
                   help="a panel's title (once per file; default: the file's name)")
    p.add_argument("--steps", type=int, default=0,
                   help="only the last N steps (args.step) of traces that have steps")
    p.add_argument("--width", type=int, default=1400, help="picture width in px")
    a = p.parse_args()
    out, y = [], 8
    for i, path in enumerate(a.traces):
        try:
            rows, t0, t1, steps = read_trace(path, a.steps)
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"trace_to_svg.py: {e}")
        title = a.title[i] if i < len(a.title) else path
        y += panel(out, title, rows, t0, t1, steps, y, a.width) + 14
    legend_x = LABEL_W
    for name, fill in LEGEND:
        out.append(f'<rect x="{legend_x}" y="{y}" width="12" height="12" fill="{fill}"/>')
        out.append(f'<text x="{legend_x + 16}" y="{y + 10}" font-size="{FONT}">{name}</text>')
        legend_x += 16 + len(name) * CHAR_W + 22
    height = y + 24
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{a.width}" height="{height}" '
           f'viewBox="0 0 {a.width} {height}" font-family="DejaVu Sans, Arial, sans-serif">\n'
           f'<rect width="100%" height="100%" fill="#fff"/>\n' + "\n".join(out) + "\n</svg>\n")
    with open(a.output, "w") as f:
        f.write(svg)
    print(f"trace_to_svg.py: wrote {a.output}")


if __name__ == "__main__":
    main()
