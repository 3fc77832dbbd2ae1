#!/usr/bin/env python3
"""Plots packscan_bench JSON: throughput of the one-predicate filter against
bit width, next to the copy bandwidth measured in the same run.

    python3 bench/plot.py cuda.json [opencl.json ...] -o docs/bench_h200.png

Left: effective bandwidth (bytes that must move / time) with the device copy
bandwidth as a horizontal line. Right: rows/s with the copy-bound floor
(copy bandwidth / bytes per row) as a dotted line. Several JSON files (say
cuda and opencl on the same GPU) are drawn on the same axes.
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SERIES = (("lt", "o-", "bitmap"), ("lt_count", "s--", "count only"))


def width_series(run, name):
    pts = [c for c in run["cases"]
           if c["name"] == name and c.get("width") is not None and c.get("ms_median")]
    return sorted(pts, key=lambda c: c["width"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="+", help="packscan_bench --json output(s)")
    ap.add_argument("-o", "--output", default="packscan_bench.png", help="PNG to write")
    args = ap.parse_args()

    fig, (ax_bw, ax_rows) = plt.subplots(1, 2, figsize=(13, 5))
    widths_seen = set()
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, path in enumerate(args.json):
        with open(path) as f:
            run = json.load(f)
        color = colors[k % len(colors)]
        tag = run["backend"]
        copy = run.get("copy_gbps") or 0
        for name, style, what in SERIES:
            pts = width_series(run, name)
            if not pts:
                continue
            w = [c["width"] for c in pts]
            widths_seen.update(w)
            ax_bw.plot(w, [c["gbps"] for c in pts], style, color=color, label=f"{tag}: {what}")
            ax_rows.plot(w, [c["rows_per_s"] / 1e9 for c in pts], style, color=color,
                         label=f"{tag}: {what}")
        if copy:
            ax_bw.axhline(copy, color=color, linestyle=":",
                          label=f"{tag}: device copy {copy:.0f} GB/s")
            ws = sorted(widths_seen) or [1, 64]
            # Floor of the bitmap case: w/8 bytes read + 1/8 byte written per row.
            ax_rows.plot(ws, [copy / ((x + 1) / 8) for x in ws], ":", color=color,
                         label=f"{tag}: copy-bound, bitmap output")

    ticks = sorted(widths_seen)
    for ax in (ax_bw, ax_rows):
        ax.set_xlabel("bit width of the codes (log scale)")
        ax.set_xscale("log", base=2)
        if ticks:
            ax.set_xticks(ticks)
            ax.set_xticklabels([str(t) for t in ticks])
            ax.minorticks_off()
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    ax_bw.set_ylabel("effective bandwidth, GB/s (bytes that must move / time)")
    ax_rows.set_ylabel("rows / s (billions)")
    ax_rows.set_yscale("log")
    with open(args.json[0]) as f:
        first = json.load(f)
    sweep = [c["rows"] for c in first["cases"] if c["name"] in ("lt", "lt_count")]
    lo, hi = (min(sweep), max(sweep)) if sweep else (first["rows"], first["rows"])
    span = f"2^{lo.bit_length() - 1}" if lo == hi and lo & (lo - 1) == 0 else str(lo)
    if lo != hi:
        span = f"{lo:.3g} to {hi:.3g}"
    fig.suptitle(f"packscan `<` filter, {span} rows, {first['device']} ({first['date']})",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
