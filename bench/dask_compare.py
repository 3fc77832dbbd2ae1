#!/usr/bin/env python3
"""SSB Q1.1-Q1.3 and TPC-H Q1 over a partitioned Parquet data set, three ways:

  packscan+dask   packscan.dask.sql: each file read with pyarrow on a worker,
                  imported into packscan, Table.sql_partial; partials merged
  pandas+dask     dask.dataframe.read_parquet (dtype_backend="pyarrow") and
                  the same filter and aggregate per partition with pandas /
                  numpy on exact scaled integers, partial sums added up
  duckdb          DuckDB's read_parquet over the same files

The three answers are checked to agree exactly (every sum and count; packscan's
averages against the exact sum / count), then the median wall time of each
way is printed. The data are made with numpy after bench/bench_tables.c's
distributions (dbgen's rules): SSB lineorder with lo_orderdate as yyyymmdd
integers, TPC-H lineitem with decimal(15,2) quantity, price, discount and tax
and date32 ship dates; written as --files Parquet files of each table.

    python3 bench/dask_compare.py --rows 4000000 --files 8 --backends reference,opencl

Needs packscan (pip install ./python), pyarrow, pandas, duckdb and
dask[distributed,dataframe]."""

import argparse
import datetime
import decimal
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

D0 = datetime.date(1992, 1, 1)
ND = (datetime.date(1998, 12, 31) - D0).days - 151 + 1
EPOCH = datetime.date(1970, 1, 1)
CURRENT = (datetime.date(1995, 6, 17) - EPOCH).days
Q1_HI = datetime.date(1998, 9, 2)  # DATE '1998-12-01' - 90 days

SSB = {
    # name: (date lo, date hi, discount lo, discount hi, quantity lo, quantity hi)
    "ssb_q1.1": (19930101, 19931231, 1, 3, 1, 24),
    "ssb_q1.2": (19940101, 19940131, 4, 6, 26, 35),
    "ssb_q1.3": (19940205, 19940211, 5, 7, 26, 35),
}


def ssb_sql(name, table="lineorder"):
    d0, d1, s0, s1, q0, q1 = SSB[name]
    return (f"SELECT SUM(lo_extendedprice * lo_discount) AS revenue, COUNT(*) AS n FROM {table} "
            f"WHERE lo_orderdate BETWEEN {d0} AND {d1} AND lo_discount BETWEEN {s0} AND {s1} "
            f"AND lo_quantity BETWEEN {q0} AND {q1}")


def tpch_q1_sql(table="lineitem", avg=True):
    avgs = ("AVG(l_quantity) AS avg_qty, AVG(l_extendedprice) AS avg_price, AVG(l_discount) AS avg_disc, "
            if avg else "")
    return ("SELECT l_returnflag, l_linestatus, SUM(l_quantity) AS sum_qty, SUM(l_extendedprice) AS sum_base_price, "
            "SUM(l_extendedprice * (1 - l_discount)) AS sum_disc_price, "
            "SUM(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, " + avgs +
            f"COUNT(*) AS count_order FROM {table} WHERE l_shipdate <= DATE '{Q1_HI.isoformat()}' "
            "GROUP BY l_returnflag, l_linestatus")


SSB_COLUMNS = ["lo_orderdate", "lo_quantity", "lo_extendedprice", "lo_discount"]
Q1_COLUMNS = ["l_shipdate", "l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus"]
Q1_SUMS = ["sum_qty", "sum_base_price", "sum_disc_price", "sum_charge"]


# ---- data ---------------------------------------------------------------------------------------

def retail_cents(p):
    return 90000 + (p // 10) % 20001 + 100 * (p % 1000)


def order_dates(rng, n):
    """Each row's order's day (0 = 1992-01-01): orders of 1..7 lines."""
    lines = rng.integers(1, 8, size=n // 4 + 8)
    while lines.sum() < n:
        lines = np.concatenate([lines, rng.integers(1, 8, size=n // 4 + 8)])
    day = rng.integers(0, ND, size=len(lines))
    return np.repeat(day, lines)[:n]


def decimal_array(scaled, scale):
    """decimal128(15, scale) from int64 scaled integers (two's complement words)."""
    words = np.empty((len(scaled), 2), np.int64)
    words[:, 0] = scaled
    words[:, 1] = scaled >> 63
    return pa.Array.from_buffers(pa.decimal128(15, scale), len(scaled), [None, pa.py_buffer(words)])


def lineorder(rng, n):
    sf = max(n / 6e6, 1.0)
    parts = 200000 * int(np.floor(1 + np.log2(sf)))
    day = order_dates(rng, n).astype("timedelta64[D]") + np.datetime64(D0.isoformat(), "D")
    ymd = ((day.astype("M8[Y]").astype(np.int64) + 1970) * 10000 + (day.astype("M8[M]").astype(np.int64) % 12 + 1) * 100
           + (day - day.astype("M8[M]")).astype(np.int64) + 1)
    q = rng.integers(1, 51, size=n)
    ds = rng.integers(0, 11, size=n)
    price = q * retail_cents(rng.integers(1, parts + 1, size=n))
    return pa.table({"lo_orderdate": ymd.astype(np.int32), "lo_quantity": q.astype(np.int32),
                     "lo_extendedprice": price.astype(np.int32), "lo_discount": ds.astype(np.int32),
                     "lo_revenue": (price * (100 - ds) // 100).astype(np.int32)})


def lineitem(rng, n):
    parts = int(200000 * max(n / 6e6, 1.0))
    od = order_dates(rng, n) + (D0 - EPOCH).days
    q = rng.integers(1, 51, size=n)
    ds = rng.integers(0, 11, size=n)
    tx = rng.integers(0, 9, size=n)
    sd = od + 1 + rng.integers(0, 121, size=n)
    rd = sd + 1 + rng.integers(0, 30, size=n)
    flag = np.where(rd <= CURRENT, np.where(rng.integers(0, 2, size=n) == 1, 2, 0), 1)
    price = q * retail_cents(rng.integers(1, parts + 1, size=n))
    return pa.table({
        "l_shipdate": pa.array(sd.astype(np.int32)).cast(pa.date32()),
        "l_quantity": decimal_array(q * 100, 2), "l_extendedprice": decimal_array(price, 2),
        "l_discount": decimal_array(ds, 2), "l_tax": decimal_array(tx, 2),
        "l_returnflag": pa.DictionaryArray.from_arrays(pa.array(flag.astype(np.int8)), ["A", "N", "R"]).cast(pa.string()),
        "l_linestatus": pa.array(np.where(sd > CURRENT, "O", "F")),
    })


def write_dataset(root, name, table, files):
    os.makedirs(os.path.join(root, name))
    step = -(-table.num_rows // files)
    for i in range(files):
        pq.write_table(table.slice(i * step, step), os.path.join(root, name, f"part-{i}.parquet"))
    return os.path.join(root, name)


# ---- the three ways -----------------------------------------------------------------------------

def arrow_of(series):
    a = pa.array(series)
    return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a


def scaled(series):
    """A decimal128 column's values as int64 scaled integers (they fit: |v| < 2^63)."""
    a = arrow_of(series)
    words = np.frombuffer(a.buffers()[1], dtype=np.int64)
    return words[2 * a.offset:2 * (a.offset + len(a)):2]


def pandas_ssb_part(df, name):
    import pandas as pd
    d0, d1, s0, s1, q0, q1 = SSB[name]
    date, qty = df["lo_orderdate"].to_numpy(np.int32), df["lo_quantity"].to_numpy(np.int32)
    disc, price = df["lo_discount"].to_numpy(np.int32), df["lo_extendedprice"].to_numpy(np.int32)
    m = (date >= d0) & (date <= d1) & (disc >= s0) & (disc <= s1) & (qty >= q0) & (qty <= q1)
    rev = int((price[m].astype(np.int64) * disc[m]).sum())
    return pd.DataFrame({"revenue": [rev], "n": [int(m.sum())]})


def pandas_q1_part(df):
    import pandas as pd
    ship = np.asarray(arrow_of(df["l_shipdate"]).cast(pa.int32()))
    m = ship <= (Q1_HI - EPOCH).days
    qty, price = scaled(df["l_quantity"])[m], scaled(df["l_extendedprice"])[m]
    disc, tax = scaled(df["l_discount"])[m], scaled(df["l_tax"])[m]
    disc_price = price * (100 - disc)  # scale 4
    frame = pd.DataFrame({"l_returnflag": df["l_returnflag"].to_numpy()[m], "l_linestatus": df["l_linestatus"].to_numpy()[m],
                          "sum_qty": qty, "sum_base_price": price, "sum_disc_price": disc_price,
                          "sum_charge": disc_price * (100 + tax), "sum_disc": disc, "count_order": np.ones(len(qty), np.int64)})
    return frame.groupby(["l_returnflag", "l_linestatus"], sort=True).sum().reset_index()


def way_pandas(name, paths):
    import dask.dataframe as dd
    if name.startswith("ssb"):
        ddf = dd.read_parquet(paths["lineorder"], columns=SSB_COLUMNS, dtype_backend="pyarrow")
        parts = ddf.map_partitions(pandas_ssb_part, name, meta={"revenue": "int64", "n": "int64"}).compute()
        return {(): (decimal.Decimal(int(parts["revenue"].sum())), int(parts["n"].sum()))}
    ddf = dd.read_parquet(paths["lineitem"], columns=Q1_COLUMNS, dtype_backend="pyarrow")
    meta = dict.fromkeys(["l_returnflag", "l_linestatus"], "object")
    meta.update(dict.fromkeys(Q1_SUMS + ["sum_disc", "count_order"], "int64"))
    parts = ddf.map_partitions(pandas_q1_part, meta=meta).compute()
    g = parts.groupby(["l_returnflag", "l_linestatus"], sort=True).sum()
    out = {}
    for key, row in g.iterrows():
        sums = [decimal.Decimal(int(row[c])).scaleb(-s) for c, s in zip(Q1_SUMS, (2, 2, 4, 6))]
        out[tuple(key)] = tuple(sums) + (int(row["count_order"]),)
    return out


def way_packscan(name, paths, backend):
    import packscan.dask
    if name.startswith("ssb"):
        f = packscan.dask.sql(paths["lineorder"], ssb_sql(name), columns=SSB_COLUMNS, backend=backend)
        r = pa.table(f).to_pylist()[0]
        return {(): (decimal.Decimal(r["revenue"] or 0), r["n"])}, f
    f = packscan.dask.sql(paths["lineitem"], tpch_q1_sql(), columns=Q1_COLUMNS, backend=backend)
    out = {}
    for r in pa.table(f).to_pylist():
        out[(r["l_returnflag"], r["l_linestatus"])] = tuple(r[c] for c in Q1_SUMS) + (r["count_order"],)
    return out, f


def way_duckdb(name, paths, con):
    if name.startswith("ssb"):
        src = f"read_parquet('{paths['lineorder']}/*.parquet')"
        rev, n = con.execute(ssb_sql(name, src)).fetchone()
        return {(): (decimal.Decimal(rev or 0), n)}
    src = f"read_parquet('{paths['lineitem']}/*.parquet')"
    out = {}
    for r in con.execute(tpch_q1_sql(src, avg=False)).fetchall():
        out[(r[0], r[1])] = tuple(r[2:6]) + (r[6],)
    return out


def exact_avg(total, count, scale):
    q = decimal.Decimal(1).scaleb(-scale)
    return (decimal.Decimal(total) / count).quantize(q, rounding=decimal.ROUND_HALF_UP) if count else None


def check_avgs(frame):
    """packscan's AVGs: the exact sum / count, rounded half away from zero at the result's scale."""
    t = pa.table(frame)
    for r in t.to_pylist():
        for avg, total in (("avg_qty", "sum_qty"), ("avg_price", "sum_base_price")):
            want = exact_avg(r[total], r["count_order"], t.schema.field(avg).type.scale)
            assert r[avg] == want, (avg, r[avg], want)


def breakdown(q, paths, backend, repeats):
    """One file's packscan task in this process, in its three steps: the
    Parquet read, the import into packscan (encoding), the partial."""
    import packscan
    import pyarrow.parquet as pq
    table_name, columns, text = (("lineorder", SSB_COLUMNS, ssb_sql(q)) if q.startswith("ssb")
                                 else ("lineitem", Q1_COLUMNS, tpch_q1_sql()))
    path = sorted(os.path.join(paths[table_name], f) for f in os.listdir(paths[table_name]))[0]
    ctx = packscan.Context(backend)
    data = pq.read_table(path, columns=columns)
    with packscan.Table(data, context=ctx) as t:
        t.sql_partial(text)
        tq = median_time(lambda: t.sql_partial(text), repeats)
    tr = median_time(lambda: pq.read_table(path, columns=columns), repeats)
    ti = median_time(lambda: packscan.Table(data, context=ctx).close(), repeats)
    return data.num_rows, tr, ti, tq


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=4_000_000, help="rows of each table (default 4000000)")
    ap.add_argument("--files", type=int, default=8, help="Parquet files per table (default 8)")
    ap.add_argument("--workers", type=int, default=2, help="Dask worker processes, one thread each (default 2)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs of each way, after one untimed (default 5)")
    ap.add_argument("--backends", default="reference", help="packscan backends, comma-separated (default reference)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", help="where to write the Parquet files (default: a temporary directory)")
    args = ap.parse_args()

    import duckdb
    import distributed
    import packscan

    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory(dir=args.dir) as root:
        t0 = time.perf_counter()
        paths = {"lineorder": write_dataset(root, "lineorder", lineorder(rng, args.rows), args.files),
                 "lineitem": write_dataset(root, "lineitem", lineitem(rng, args.rows), args.files)}
        print(f"# {args.rows} rows per table in {args.files} Parquet files each, made in "
              f"{time.perf_counter() - t0:.1f} s; packscan {packscan.version()}, duckdb {duckdb.__version__}, "
              f"dask {distributed.__version__}, {args.workers} worker processes x 1 thread, {os.cpu_count()} CPUs",
              flush=True)
        con = duckdb.connect()
        backends = [b for b in args.backends.split(",") if b]
        queries = list(SSB) + ["tpch_q1"]
        rows = []
        with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, worker_dashboard_address=None) as cluster, \
                distributed.Client(cluster):
            for q in queries:
                ref = way_duckdb(q, paths, con)
                got = way_pandas(q, paths)
                assert got == ref, (q, "pandas+dask", got, ref)
                timings = {"duckdb": median_time(lambda: way_duckdb(q, paths, con), args.repeats),
                           "pandas+dask": median_time(lambda: way_pandas(q, paths), args.repeats)}
                for b in backends:
                    got, frame = way_packscan(q, paths, b)
                    assert got == ref, (q, f"packscan+dask ({b})", got, ref)
                    if q == "tpch_q1":
                        check_avgs(frame)
                    timings[f"packscan+dask {b}"] = median_time(lambda: way_packscan(q, paths, b), args.repeats)
                rows.append((q, sum(v[-1] for v in ref.values()), timings))
                print(f"# {q}: the three answers agree exactly ({len(ref)} group(s))", flush=True)
                for b in backends:
                    n, tr, ti, tq = breakdown(q, paths, b, args.repeats)
                    print(f"#   one file ({n} rows), {b}: read {tr * 1e3:.0f} ms, import {ti * 1e3:.0f} ms, "
                          f"sql_partial {tq * 1e3:.1f} ms", flush=True)
        ways = list(rows[0][2])
        print("\n| query | rows selected | " + " | ".join(f"{w} (ms)" for w in ways) + " |")
        print("|---|---:|" + "---:|" * len(ways))
        for q, n, timings in rows:
            print(f"| {q} | {n} | " + " | ".join(f"{timings[w] * 1e3:.0f}" for w in ways) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
