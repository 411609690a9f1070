#!/usr/bin/env python3
"""Compares two Tessera parameter files (docs/params-format.md), e.g. a hybrid run's
`tessera train --save-params` against a one-worker run's.

    scripts/compare_params.py a.tsp b.tsp            # prints the worst parameter; exit 0
    scripts/compare_params.py a.tsp b.tsp --rtol 1e-4  # exit 1 if any parameter differs more

A parameter's difference is max|a - b| / max|b| (relative to its largest value). Exit 2 when a
file cannot be read or the two hold different parameters. Plain Python, no numpy needed; the
reader below is the reference for the format.
"""
import argparse
import struct
import sys


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def read_params(path):
    """Returns {name: (shape tuple, list of floats)}; raises ValueError naming the problem."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24 or data[:8] != b"TSRPARAM":
        raise ValueError(f"{path}: not a Tessera parameter file (no TSRPARAM header)")
    body, (checksum,) = data[:-8], struct.unpack("<Q", data[-8:])
    if fnv1a64(body) != checksum:
        raise ValueError(f"{path}: checksum mismatch: the file is damaged")
    version, count = struct.unpack_from("<II", body, 8)
    if version != 1:
        raise ValueError(f"{path}: version {version}, expected 1")
    pos, params = 16, {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", body, pos)
        name = body[pos + 4:pos + 4 + n].decode("utf-8")
        pos += 4 + n
        (rank,) = struct.unpack_from("<I", body, pos)
        shape = struct.unpack_from(f"<{rank}q", body, pos + 4)
        pos += 4 + 8 * rank
        (values,) = struct.unpack_from("<Q", body, pos)
        params[name] = (shape, struct.unpack_from(f"<{values}f", body, pos + 8))
        pos += 8 + 4 * values
    if pos != len(body):
        raise ValueError(f"{path}: {len(body) - pos} bytes after the last parameter")
    return params


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rtol", type=float, default=None,
                        help="fail (exit 1) when a parameter differs by more than this")
    args = parser.parse_args()
    try:
        a, b = read_params(args.a), read_params(args.b)
    except (OSError, ValueError, struct.error) as e:
        print(f"compare_params: {e}", file=sys.stderr)
        return 2
    if a.keys() != b.keys():
        print(f"compare_params: different parameters: only in {args.a}: "
              f"{sorted(a.keys() - b.keys())}, only in {args.b}: {sorted(b.keys() - a.keys())}",
              file=sys.stderr)
        return 2
    worst, worst_name = 0.0, ""
    for name in sorted(a):
        (sa, va), (sb, vb) = a[name], b[name]
        if sa != sb:
            print(f"compare_params: '{name}' is {list(sa)} in one file, {list(sb)} in the other",
                  file=sys.stderr)
            return 2
        scale = max((abs(x) for x in vb), default=0.0) or 1e-30
        diff = max((abs(x - y) for x, y in zip(va, vb)), default=0.0) / scale
        if diff >= worst:
            worst, worst_name = diff, name
    print(f"{len(a)} parameters; largest relative difference {worst:.3g} ({worst_name})")
    if args.rtol is not None and worst > args.rtol:
        print(f"compare_params: differs by more than {args.rtol}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
