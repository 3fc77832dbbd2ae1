#!/usr/bin/env python3
"""Markdown tables for docs/benchmarks.md from packscan_bench JSON files.

    python3 bench/tables.py cuda.json [--opencl opencl.json] [--waves waves1.json]

Prints the width table (`lt`, `lt_count`: CUDA ms, rows/s, % of copy, naive ratio, and next to
it the OpenCL run's ms, % of copy and time ratio) and the table of the other cases, each figure as
the bench measured it in that run (fractions of that run's own copy bandwidth)."""
import argparse
import json
import math


def load(path):
    if not path:
        return None
    with open(path) as f:
        return json.load(f)


def by_case(run):
    out = {}
    for c in (run or {}).get("cases", []):
        out[(c["name"], c.get("width"))] = c
    return out


def pow2(n):
    k = int(round(math.log2(n))) if n > 0 else 0
    return f"2^{k}" if n > 0 and 2 ** k == n else str(n)


def pct(c):
    return f"{100.0 * c['frac_copy']:.1f}%" if c and c.get("frac_copy") is not None else "—"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cuda")
    ap.add_argument("--opencl")
    ap.add_argument("--waves")
    a = ap.parse_args()
    cu, cl, wv = load(a.cuda), load(a.opencl), load(a.waves)
    C, O, V = by_case(cu), by_case(cl), by_case(wv)
    print(f"CUDA: {cu['device']}, copy {cu['copy_gbps']:.0f} GB/s, {cu['date']}")
    if cl:
        print(f"OpenCL: {cl['device']}, copy {cl['copy_gbps']:.0f} GB/s, {cl['date']}")
    print()
    hdr = "| width | rows | CUDA ms | CUDA G rows/s | CUDA % copy | CUDA count-only % | naive ratio |"
    sep = "|---|---|---|---|---|---|---|"
    if wv:
        hdr += " resident grid (waves=1) % |"
        sep += "---|"
    if cl:
        hdr += " OpenCL ms | OpenCL % copy | OpenCL/CUDA time |"
        sep += "---|---|---|"
    print(hdr)
    print(sep)
    widths = sorted({w for (n, w) in C if n == "lt" and w is not None})
    for w in widths:
        c, cc = C.get(("lt", w)), C.get(("lt_count", w))
        row = (f"| {w} | {pow2(c['rows'])} | {c['ms_median']:.3f} | {c['rows_per_s'] / 1e9:.0f} | {pct(c)} | "
               f"{pct(cc)} | {c['ratio']:.1f}x |")
        if wv:
            row += f" {pct(V.get(('lt', w)))} |"
        if cl:
            o = O.get(("lt", w))
            row += (f" {o['ms_median']:.3f} | {pct(o)} | {o['ms_median'] / c['ms_median']:.2f} |" if o else " — | — | — |")
        print(row)
    print()
    print("| case | ms | G rows/s | % copy | naive ratio | OpenCL ms | OpenCL/CUDA time |")
    print("|---|---|---|---|---|---|---|")
    for (n, w), c in C.items():
        if n in ("lt", "lt_count"):
            continue
        if c.get("ms_median") is None:  # skipped or failed: the bench's note says why
            print(f"| `{n}` | {c['check']} | — | — | — | — | — |")
            continue
        o = O.get((n, w))
        ocl = (f"{o['ms_median']:.3f} | {o['ms_median'] / c['ms_median']:.2f}"
               if o and o.get("ms_median") is not None else "— | —")
        ratio = f"{c['ratio']:.1f}x" if c.get("ratio") is not None else "—"
        print(f"| `{n}` | {c['ms_median']:.4f} | {c['rows_per_s'] / 1e9:.0f} | {pct(c)} | {ratio} | {ocl} |")


if __name__ == "__main__":
    main()
