#!/usr/bin/env python3
"""Checks a `tessera train --trace` file against the run's `--report-json` (docs/timeline.md):
one process per worker named "worker r", forward and backward compute spans on every worker,
and per worker and traced step the collectives' bytes equal to the report's bytes per device.

    check_train_trace.py TRACE.json REPORT.json WORKERS   # prints "trace ok ..." or exits 1
"""
import collections
import json
import sys


def main(trace_path, report_path, workers):
    with open(trace_path) as f:
        trace = json.load(f)
    with open(report_path) as f:
        per_device = json.load(f)["measured"]["comm_bytes"]
    names, tracks = {}, {}
    bytes_of = collections.defaultdict(int)  # (pid, step) -> bytes
    compute = collections.defaultdict(set)   # pid -> span names
    for e in trace["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            names[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            tracks[(e["pid"], e["tid"])] = e["args"]["name"]
    for e in trace["traceEvents"]:
        if e["ph"] != "X":
            continue
        step = e["args"]["step"]
        bytes_of[(e["pid"], step)] += e["args"].get("bytes", 0)
        if tracks[(e["pid"], e["tid"])] == "compute":
            compute[e["pid"]].add(e["name"])
    errors = []
    if names != {r: f"worker {r}" for r in range(workers)}:
        errors.append(f"processes {names}, want worker 0..{workers - 1}")
    for r in range(workers):
        if not any(n.endswith(" forward") for n in compute[r]) or \
           not any(n.endswith(" backward") for n in compute[r]):
            errors.append(f"worker {r} has no forward or backward spans")
    steps = sorted({s for (_, s) in bytes_of})
    for (pid, step), b in sorted(bytes_of.items()):
        if b != per_device:
            errors.append(f"worker {pid} step {step}: {b} bytes, the report {per_device} "
                          "per device")
    for e in errors:
        print("FAIL:", e)
    if errors:
        return 1
    print(f"trace ok: {workers} workers, steps {steps}, {per_device} bytes per worker and step")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
