#!/usr/bin/env python3
"""DuckDB on the query cases of packscan_bench (ssb_q1_1..3, tpch_q6,
tpch_q1): the same columns with the same distributions (dask_compare.py's
numpy generators, after bench/bench_tables.c: SSB lineorder as int32, TPC-H
lineitem with decimal(15,2) columns and date32 ship dates), loaded once into
DuckDB's own in-memory tables, each query timed as a whole (median wall
time of --reps after one warm-up), on --threads threads.

    python3 bench/duckdb_queries.py --rows 16777216 --threads 2 --reps 5

Run it beside `packscan_bench --cases queries` at the same --rows to put
both side by side (docs/benchmarks.md). Needs numpy, pyarrow and duckdb."""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dask_compare as dc  # noqa: E402  (the generators)

TPCH_Q6 = ("SELECT SUM(l_extendedprice * l_discount) FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' "
           "AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=lambda s: int(eval(s.replace("^", "**"), {})), default=1 << 24,
                    help="rows of each table (N or 2^K)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    import duckdb

    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    lineorder, lineitem = dc.lineorder(rng, args.rows), dc.lineitem(rng, args.rows)
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    con.register("lo_arrow", lineorder)
    con.register("li_arrow", lineitem)
    con.execute("CREATE TABLE lineorder AS SELECT * FROM lo_arrow")
    con.execute("CREATE TABLE lineitem AS SELECT * FROM li_arrow")
    print(f"duckdb {duckdb.__version__}, {args.threads} threads, {args.rows} rows per table, "
          f"generated and loaded in {time.perf_counter() - t0:.1f} s")
    queries = {
        "ssb_q1_1": dc.ssb_sql("ssb_q1.1"),
        "ssb_q1_2": dc.ssb_sql("ssb_q1.2"),
        "ssb_q1_3": dc.ssb_sql("ssb_q1.3"),
        "tpch_q6": TPCH_Q6,
        "tpch_q1": dc.tpch_q1_sql(),
    }
    for name, sql in queries.items():
        con.execute(sql).fetchall()
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            con.execute(sql).fetchall()
            times.append((time.perf_counter() - t) * 1e3)
        print(f"{name:10s} {statistics.median(times):10.2f} ms  (min {min(times):.2f}, max {max(times):.2f})")


if __name__ == "__main__":
    main()
