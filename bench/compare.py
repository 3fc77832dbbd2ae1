#!/usr/bin/env python3
"""Two packscan_bench JSON files side by side: for every case both ran, the
median time of each, its % of that run's own copy bandwidth, and the time
ratio second / first (issue 14's target: OpenCL within 1.5x of CUDA).

    python3 bench/compare.py cuda.json opencl.json [--max-ratio 1.5] [--require LIST] [--markdown]

--max-ratio R   exit status 1 when a case both ran takes more than R times as
                long in the second file (the case is marked "over")
--require LIST  comma-separated case names (or the groups queries, after,
                tables) that both files must hold, timed, with check "ok";
                exit status 1 otherwise
--markdown      a Markdown table (for docs/benchmarks.md) instead of text

Exit status 2 for a file that cannot be read or is not a bench JSON.
Python 3 standard library only."""
import argparse
import json
import sys

GROUPS = {
    "queries": ["ssb_q1_1", "ssb_q1_2", "ssb_q1_3", "tpch_q6", "tpch_q1"],
    "after": ["aggregate", "aggregate_sel", "gather_1pct", "refine", "mask", "row_ids"],
}
GROUPS["tables"] = GROUPS["queries"] + GROUPS["after"]


class BadInput(Exception):
    pass


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            run = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"{path}: {e}")
    if not isinstance(run, dict) or not isinstance(run.get("cases"), list):
        raise BadInput(f"{path}: not a packscan_bench JSON (no \"cases\" list)")
    for i, c in enumerate(run["cases"]):
        for key in ("name", "ms_median", "check"):
            if not isinstance(c, dict) or key not in c:
                raise BadInput(f"{path}: case {i} has no \"{key}\"")
    return run


def key(c):
    """Cases are named; the width sweep repeats a name at several widths."""
    w = c.get("width")
    return (c["name"], w) if c["name"] in ("lt", "lt_count") and w is not None else (c["name"], None)


def label(k):
    return f"{k[0]} w{k[1]}" if k[1] is not None else k[0]


def timed(c):
    return c is not None and isinstance(c.get("ms_median"), (int, float)) and c["ms_median"] > 0


def pct(c):
    f = c.get("frac_copy") if c else None
    return f"{100.0 * f:.1f}%" if isinstance(f, (int, float)) else "-"


def ms(c):
    return f"{c['ms_median']:.4g}" if timed(c) else "-"


def describe(run):
    copy = run.get("copy_gbps")
    copy_text = f"copy {copy:.1f} GB/s" if isinstance(copy, (int, float)) else "copy -"
    memcpy = run.get("memcpy_gbps")
    memcpy_text = f", host memcpy {memcpy:.1f} GB/s" if isinstance(memcpy, (int, float)) else ""
    return (f"{run.get('backend', '?')} on {run.get('device', '?')}: {copy_text}{memcpy_text}, "
            f"{run.get('date', '?')}, packscan {run.get('packscan_version', '?')}")


def expand(names):
    out = []
    for n in names.split(","):
        n = n.strip()
        if n:
            out.extend(GROUPS.get(n, [n]))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("first", help="bench JSON, e.g. --backend cuda")
    ap.add_argument("second", help="bench JSON, e.g. --backend opencl")
    ap.add_argument("--max-ratio", type=float, default=None)
    ap.add_argument("--require", default="")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args(argv)
    if a.max_ratio is not None and not a.max_ratio > 0:
        ap.error("--max-ratio must be positive")
    try:
        A, B = load(a.first), load(a.second)
    except BadInput as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    ca = {key(c): c for c in A["cases"]}
    cb = {key(c): c for c in B["cases"]}
    order = [key(c) for c in A["cases"]] + [key(c) for c in B["cases"] if key(c) not in ca]
    name_a, name_b = A.get("backend", "first"), B.get("backend", "second")
    if name_a == name_b:
        name_a, name_b = f"{name_a} (1)", f"{name_b} (2)"

    rows, over = [], []
    for k in order:
        x, y = ca.get(k), cb.get(k)
        ratio = y["ms_median"] / x["ms_median"] if timed(x) and timed(y) else None
        mark = ""
        if ratio is not None and a.max_ratio is not None and ratio > a.max_ratio:
            mark = "over"
            over.append(label(k))
        if x and y and x.get("rows") != y.get("rows"):
            mark = (mark + ", " if mark else "") + f"rows {x.get('rows')} vs {y.get('rows')}"
        checks = "/".join(c["check"] if c else "-" for c in (x, y))
        rows.append([label(k), ms(x), pct(x), ms(y), pct(y), f"{ratio:.2f}x" if ratio is not None else "-", checks,
                     mark])

    head = ["case", f"{name_a} ms", f"{name_a} %copy", f"{name_b} ms", f"{name_b} %copy", f"{name_b}/{name_a}",
            "check", ""]
    print(f"1: {describe(A)}")
    print(f"2: {describe(B)}")
    print()
    if a.markdown:
        print("| " + " | ".join(head[:-1]) + " |")
        print("|" + "---|" * (len(head) - 1))
        for r in rows:
            print("| " + " | ".join(r[:-2] + [r[-2] + (f" ({r[-1]})" if r[-1] else "")]) + " |")
    else:
        widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
        for r in [head] + rows:
            print("  ".join(str(v).ljust(widths[i]) if i == 0 else str(v).rjust(widths[i])
                            for i, v in enumerate(r)).rstrip())

    status = 0
    if over:
        print(f"\n{len(over)} case(s) over {a.max_ratio:g}x: {', '.join(over)}")
        status = 1
    missing = []
    for n in expand(a.require):
        for run, cases, path in ((A, ca, a.first), (B, cb, a.second)):
            c = cases.get((n, None))
            if c is None:
                missing.append(f"{n} not in {path}")
            elif not timed(c) or c["check"] != "ok":
                missing.append(f"{n} in {path}: check {c['check']}, ms {c['ms_median']}")
    if missing:
        print("\nrequired cases missing or not ok:\n  " + "\n  ".join(missing))
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
