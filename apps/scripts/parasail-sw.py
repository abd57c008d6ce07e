#!/usr/bin/env python3
"""Smith-Waterman score of two FASTA sequences with parasail's striped kernel.

usage: parasail-sw.py A.fa B.fa [--match M] [--mismatch X] [--gap-open O] [--gap-extend E]
                        [--gap G] [--matrix blosum62]

The baseline of apps/scripts/sw-compare.sh: prints one line in the format of
`smith-waterman --json` (mode "parasail", one core), so the script reads both
alike. Scoring as in smith-waterman: a gap of length L costs O + (L-1)*E.
16-bit lanes first (sw_striped_16), 32-bit when the score saturates them.
Exits 3 when parasail is not installed (`pip install parasail`).
"""
import argparse
import json
import sys
import time

try:
    import parasail
except ImportError:
    print("parasail-sw.py: parasail is not installed (pip install parasail)", file=sys.stderr)
    sys.exit(3)


def first_record(path):
    """The sequence of the first FASTA record of path, upper case."""
    parts = []
    seen_header = False
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                if seen_header:
                    break
                seen_header = True
            elif line:
                parts.append(line)
    return "".join(parts).upper()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--match", type=int, default=2)
    p.add_argument("--mismatch", type=int, default=-1)
    p.add_argument("--gap-open", type=int, default=2)
    p.add_argument("--gap-extend", type=int, default=2)
    p.add_argument("--gap", type=int, help="open = extend = GAP")
    # Any case, as smith-waterman takes it.
    p.add_argument("--matrix", type=str.lower, choices=["blosum62"])
    args = p.parse_args()
    if args.gap is not None:
        args.gap_open = args.gap_extend = args.gap
    a, b = first_record(args.a), first_record(args.b)
    if args.matrix == "blosum62":
        matrix = parasail.blosum62
    else:
        matrix = parasail.matrix_create("ACGT", args.match, args.mismatch)
    start = time.perf_counter()
    result = parasail.sw_striped_16(a, b, args.gap_open, args.gap_extend, matrix)
    if result.saturated:
        result = parasail.sw_striped_32(a, b, args.gap_open, args.gap_extend, matrix)
    seconds = time.perf_counter() - start
    cells = len(a) * len(b)
    print(json.dumps({
        "score": result.score,
        "end_a": result.end_query,
        "end_b": result.end_ref,
        "len_a": len(a),
        "len_b": len(b),
        "cells": cells,
        "seconds": round(seconds, 6),
        "gcups": round(cells / max(seconds, 1e-9) / 1e9, 4),
        "mode": "parasail",
        "ranks": 1,
        "workers": 1,
    }, separators=(",", ":")))


if __name__ == "__main__":
    main()
