#!/usr/bin/env python3
"""Queries over a table in a file, packscan against DuckDB: SSB lineorder
(dask_compare.py's generators) saved once as a packscan table file and once
as a DuckDB database file, then SSB Q1.1..Q1.3 run over each (median wall
time of --reps after one warm-up, the files in the page cache):
  - packscan, the file mapped and its columns host-resident, streamed
    through --limit bytes of device staging (read_table(host_resident=True));
  - packscan, the columns copied to the device once (read_table);
  - DuckDB on its own file, --threads threads.
Also printed: host memcpy bandwidth and the packed bytes of the four columns
each query reads, so that the streamed runs read as GB/s of packed data.
    python3 bench/file_scan_compare.py --rows 2^25 --backend opencl --threads 2
Needs numpy, pyarrow, duckdb and the packscan Python package."""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dask_compare as dc  # noqa: E402  (the generators and the SQL)

QUERIES = ["ssb_q1.1", "ssb_q1.2", "ssb_q1.3"]
COLUMNS = ["lo_orderdate", "lo_quantity", "lo_extendedprice", "lo_discount"]


def median_ms(fn, reps, settle=0.0):
    fn()
    # a query's first run takes the generic kernel while its own is compiled
    # in the background; timed runs are of the compiled one, as in the benchmark
    time.sleep(settle)
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def memcpy_gbps(mb=256, reps=5):
    a = np.ones(mb << 17, np.float64)
    b = np.empty_like(a)
    ms = median_ms(lambda: np.copyto(b, a), reps)
    return 2 * a.nbytes / (ms * 1e6)  # read + write, as the benchmark's copy


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=lambda s: int(eval(s.replace("^", "**"), {})), default=1 << 25)
    ap.add_argument("--backend", default="opencl")
    ap.add_argument("--limit", type=lambda s: int(eval(s.replace("^", "**"), {})), default=3 << 26,
                    help="device_memory_limit of the streamed runs (bytes; default 192 MiB)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default=None, help="where the two files go (default: a temporary directory)")
    args = ap.parse_args()
    import duckdb
    import packscan

    rng = np.random.default_rng(args.seed)
    lo = dc.lineorder(rng, args.rows)
    work = args.dir or tempfile.mkdtemp(prefix="psfile-")
    pst, ddb = os.path.join(work, "lineorder.pst"), os.path.join(work, "lineorder.duckdb")
    for p in (pst, ddb):
        if os.path.exists(p):
            os.remove(p)
    packscan.Table(lo, backend="reference").save(pst)
    con = duckdb.connect(ddb)
    con.register("lo_arrow", lo)
    con.execute("CREATE TABLE lineorder AS SELECT * FROM lo_arrow")
    con.close()
    con = duckdb.connect(ddb, read_only=True)
    con.execute(f"SET threads = {args.threads}")

    streamed_ctx = packscan.Context(args.backend, device_memory_limit=args.limit)
    copied_ctx = packscan.Context(args.backend)
    streamed = packscan.read_table(pst, context=streamed_ctx, host_resident=True)
    copied = packscan.read_table(pst, context=copied_ctx)
    # the four columns' FOR codes: ceil(n * w / 8) bytes each, w the bits of max - min
    packed = sum((args.rows * int(lo[c].to_numpy().max() - lo[c].to_numpy().min()).bit_length() + 7) // 8
                 for c in COLUMNS)
    print(f"packscan {packscan.version()} on {streamed_ctx.backend} ({streamed_ctx.device}); duckdb "
          f"{duckdb.__version__}, {args.threads} threads; {args.rows} rows; files "
          f"{os.path.getsize(pst) / 1e6:.1f} MB (packscan), {os.path.getsize(ddb) / 1e6:.1f} MB (DuckDB); "
          f"host memcpy {memcpy_gbps():.1f} GB/s; staging {args.limit >> 20} MiB")
    print(f"{'query':10s} {'streamed ms':>12s} {'copied ms':>10s} {'duckdb ms':>10s} {'duckdb/streamed':>16s}"
          "  packed GB/s streamed")
    for q in QUERIES:
        sql = dc.ssb_sql(q, "t")
        want = con.execute(dc.ssb_sql(q)).fetchall()
        got = [tuple(r.values()) for r in __import__("pyarrow").table(streamed.sql(sql)).to_pylist()]
        ok = [tuple(int(x) for x in r) for r in got] == [tuple(int(x or 0) for x in r) for r in want]
        s = median_ms(lambda: streamed.sql(sql), args.reps, settle=5.0)
        c = median_ms(lambda: copied.sql(sql), args.reps, settle=5.0)
        d = median_ms(lambda: con.execute(dc.ssb_sql(q)).fetchall(), args.reps)
        extra = f"  {packed / (s * 1e6):10.2f}"
        print(f"{q:10s} {s:12.2f} {c:10.2f} {d:10.2f} {d / s:15.2f}x{extra}{'' if ok else '  RESULT DIFFERS'}")
    streamed.close()
    copied.close()


if __name__ == "__main__":
    main()
