#!/usr/bin/env python3
"""DuckDB on the query cases of packscan_bench (ssb_q1_1..3, tpch_q6,
tpch_q1, and with --groups the GROUP BY cases of many groups
groups_date_qty and groups_price; with --floats the float cases
float_*_sum and the filters float_* as counts): the same columns with the same distributions (dask_compare.py's
numpy generators, after bench/bench_tables.c: SSB lineorder as int32, TPC-H
lineitem with decimal(15,2) columns and date32 ship dates), loaded once into
DuckDB's own in-memory tables, each query timed as a whole (median wall
time of --reps after one warm-up), on --threads threads.

    python3 bench/duckdb_queries.py --rows 16777216 --threads 2 --reps 5

Run it beside `packscan_bench --cases queries` (and `--cases groups`) at
the same --rows to put both side by side (docs/benchmarks.md). Results are
fetched as Arrow tables (a GROUP BY of a million groups as Python tuples
would time Python); the GROUP BY cases ORDER BY their keys, as packscan
returns its groups. Needs numpy, pyarrow and duckdb."""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dask_compare as dc  # noqa: E402  (the generators)

# bench_query.c's GROUP BY cases: COUNT(*), SUM and MAX of a value column.
GROUPS_DATE_QTY = ("SELECT l_shipdate, l_quantity, COUNT(*), SUM(l_extendedprice), MAX(l_extendedprice) "
                   "FROM lineitem GROUP BY l_shipdate, l_quantity ORDER BY l_shipdate, l_quantity")
GROUPS_PRICE = ("SELECT l_extendedprice, COUNT(*), SUM(l_discount), MAX(l_discount) FROM lineitem "
                "GROUP BY l_extendedprice ORDER BY l_extendedprice")
TPCH_Q6 = ("SELECT SUM(l_extendedprice * l_discount) FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' "
           "AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=lambda s: int(eval(s.replace("^", "**"), {})), default=1 << 24,
                    help="rows of each table (N or 2^K)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--groups", action="store_true", help="also the GROUP BY cases of many groups")
    ap.add_argument("--only-groups", action="store_true", help="the GROUP BY cases alone")
    ap.add_argument("--floats", action="store_true",
                    help="the float64 cases alone: x < median counted, and SUM(x) WHERE x < median")
    args = ap.parse_args()
    import duckdb

    if args.floats:
        return floats(args, duckdb)
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
    if args.only_groups:
        queries = {}
    if args.groups or args.only_groups:
        queries.update({"groups_date_qty": GROUPS_DATE_QTY, "groups_price": GROUPS_PRICE})
    for name, sql in queries.items():
        rows = con.sql(sql).to_arrow_table().num_rows
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            con.sql(sql).to_arrow_table()
            times.append((time.perf_counter() - t) * 1e3)
        print(f"{name:15s} {statistics.median(times):10.2f} ms  (min {min(times):.2f}, max {max(times):.2f}; "
              f"{rows} rows)")


def float_columns(rng, n):
    """bench_data.c's bench_col_floats distributions (not its rows): prices
    k / 100, wind speeds k * 1.15078 (knots to mph, k < 60), uniform doubles
    in [0, 1000) with full mantissas."""
    return {
        "price": rng.integers(100, 10_000_000, n, dtype=np.int64) / 100.0,
        "knots": rng.integers(0, 60, n, dtype=np.int64) * 1.15078,
        "random": (rng.integers(0, 1 << 53, n, dtype=np.int64) * 2.0**-53) * 1000.0,
    }


def timed(con, sql, reps):
    con.sql(sql).fetchall()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        out = con.sql(sql).fetchall()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), min(times), max(times), out


def floats(args, duckdb):
    import pyarrow as pa

    rng = np.random.default_rng(args.seed)
    cols = float_columns(rng, args.rows)
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    con.register("f_arrow", pa.table(cols))
    con.execute("CREATE TABLE floats AS SELECT * FROM f_arrow")
    print(f"duckdb {duckdb.__version__}, {args.threads} threads, {args.rows} rows of DOUBLE")
    for name, values in cols.items():
        median = float(np.sort(values)[len(values) // 2])
        for case, sql in ((f"float_{name}", f"SELECT COUNT(*) FROM floats WHERE {name} < {median!r}"),
                          (f"float_{name}_sum", f"SELECT SUM({name}), COUNT(*) FROM floats WHERE {name} < {median!r}")):
            med, lo, hi, out = timed(con, sql, args.reps)
            print(f"{case:17s} {med:10.2f} ms  (min {lo:.2f}, max {hi:.2f}; {out[0]})")


if __name__ == "__main__":
    main()
