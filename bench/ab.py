#!/usr/bin/env python3
"""Before/after runs of packscan_bench in one command: each variant (a set of
bench options, usually one of the library's internal options) runs the same
cases, the variants alternated round by round so that a drift of the machine
shows in every variant alike; then one table of each case's medians, round by
round, with the ratio of each variant's mean to the first variant's and the
copy bandwidth each run measured.

    python3 bench/ab.py [--build DIR] [--backend NAME] [--cases LIST] [--rounds N]
                        [--out DIR] [--markdown] --variant NAME=OPTIONS ... [-- BENCH OPTIONS]

--variant NAME=OPTIONS  a variant: its name and the bench options it adds
                (split as a shell would, e.g. 'prefetch=--query-prefetch' or
                'base='); two at least; the first is the baseline of the ratios
--rounds N      rounds (default 2): in each, every variant once, in order
--out DIR       where each run's JSON and console output go (default: ab-out)
--markdown      the table in Markdown (for docs/benchmarks.md)
Everything after -- goes to every run (e.g. --rows 33554432 --reps 20). The
environment is passed on (PACKSCAN_OPENCL_PLATFORM=NVIDIA for NVIDIA's OpenCL).

Exit status: 0; 1 when a run failed or a case's check was not "ok"; 2 on a
usage error. Python 3 standard library only."""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys


def parse_variant(text):
    name, sep, opts = text.partition("=")
    if not sep or not name or not all(c.isalnum() or c in "_-." for c in name):
        raise argparse.ArgumentTypeError(f"variant '{text}' is not NAME=OPTIONS (NAME of letters, digits, _-.)")
    return name, shlex.split(opts)


def main(argv):
    bench_args = []
    if "--" in argv:
        i = argv.index("--")
        argv, bench_args = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(prog="bench/ab.py", description="packscan_bench variants alternated, one table")
    ap.add_argument("--build", default="build")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--cases", default=None)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default="ab-out")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--variant", type=parse_variant, action="append", default=[])
    a = ap.parse_args(argv)
    if len(a.variant) < 2:
        ap.error("at least two --variant NAME=OPTIONS")
    if len({n for n, _ in a.variant}) != len(a.variant):
        ap.error("variant names must differ")
    if a.rounds < 1:
        ap.error(f"--rounds {a.rounds} is not a positive count")
    exe = os.path.join(a.build, "bench", "packscan_bench")
    if not os.access(exe, os.X_OK):
        print(f"ab.py: no {exe}", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)

    # results[name][round] = the run's JSON, or None when it failed
    results = {n: [] for n, _ in a.variant}
    status = 0
    for r in range(a.rounds):
        for name, opts in a.variant:
            js = os.path.join(a.out, f"{name}-r{r + 1}.json")
            log = os.path.join(a.out, f"{name}-r{r + 1}.log")
            cmd = [exe, "--backend", a.backend, "--json", js] + (["--cases", a.cases] if a.cases else [])
            cmd += opts + bench_args
            with open(log, "w") as f:
                rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
            data = None
            if rc == 0:
                try:
                    with open(js) as f:
                        data = json.load(f)
                except (OSError, ValueError):
                    data = None
            if data is None:
                print(f"ab.py: {name} round {r + 1} failed (exit {rc}); see {log}", file=sys.stderr)
                status = 1
            results[name].append(data)

    cases = []  # in the first run's order
    for name, _ in a.variant:
        for data in results[name]:
            for c in (data or {}).get("cases", []):
                key = (c["name"], c.get("width"))
                if key not in cases:
                    cases.append(key)

    def median_of(data, key):
        for c in (data or {}).get("cases", []):
            if (c["name"], c.get("width")) == key:
                if c.get("check") != "ok":
                    return None, c.get("check")
                return c.get("ms_median"), "ok"
        return None, "missing"

    base = a.variant[0][0]
    head = ["case", "w"] + [n for n, _ in a.variant] + [f"{n}/{base}" for n, _ in a.variant[1:]]
    rows = []
    for key in cases:
        means, cells = {}, []
        for name, _ in a.variant:
            ms = []
            for data in results[name]:
                m, check = median_of(data, key)
                if m is None:
                    if check not in ("missing", "skip"):
                        status = 1
                    ms.append(check)
                else:
                    ms.append(m)
            nums = [m for m in ms if isinstance(m, float) or isinstance(m, int)]
            means[name] = statistics.mean(nums) if nums else None
            cells.append(" / ".join(f"{m:.4f}" if not isinstance(m, str) else m for m in ms))
        for name, _ in a.variant[1:]:
            b, v = means[base], means[name]
            cells.append(f"{v / b:.3f}" if b and v else "-")
        rows.append([key[0], "" if key[1] is None else str(key[1])] + cells)
    copies = []
    for name, _ in a.variant:
        gb = [f"{d['copy_gbps']:.0f}" if d and d.get("copy_gbps") else "-" for d in results[name]]
        copies.append(f"{name} {' / '.join(gb)}")
    device = next((d.get("device") for n, _ in a.variant for d in results[n] if d), "?")

    print(f"device: {device}; copy GB/s by run: {'; '.join(copies)}")
    print("ms, medians of each run in round order; ratios of the rounds' means")
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * 2 + "---:|" * (len(head) - 2))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(str(x[i])) for x in [head] + rows) for i in range(len(head))]
        for row in [head] + rows:
            print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip())
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
