"""Table.sql: the command's SELECT statements (aggregates, GROUP BY, exact
arithmetic) on random tables, compared with DuckDB's answer for the same
data, exactly (decimals as decimal.Decimal); results taken as tables by
pyarrow, polars, pandas and DuckDB; select / head / sort; to_numpy's decimal
modes; "auto"; the installed `packscan` console script."""

import decimal
import os
import subprocess
import sys

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import packscan
from test_duckdb import random_table

D = decimal.Decimal
AVG_SCALE = 6  # PS_QUERY_AVG_MIN_SCALE


def avg(sum_, count, scale):
    """The library's AVG: the exact sum divided once, at scale max(scale, 6),
    rounded half away from zero."""
    if sum_ is None or not count:
        return None
    q = D(1).scaleb(-max(scale, AVG_SCALE))
    return (D(sum_) / D(count)).quantize(q, rounding=decimal.ROUND_HALF_UP)


WHERES = ["", "WHERE i32 > -20 AND s <> 'zz'", "WHERE dec BETWEEN -2000.00 AND 5000 OR s IS NULL",
          "WHERE d >= DATE '2020-06-01'"]


@pytest.mark.parametrize("where", WHERES)
@pytest.mark.parametrize("key", ["s", "cat", "i32", "s, cat", None])
def test_group_by_matches_duckdb(context, rng, where, key):
    n = rng.choice([0, 1, 33, 300, 2000])
    data = random_table(rng, n)
    t = packscan.Table(data, context=context)
    group = f" GROUP BY {key}" if key else ""
    keys = f"{key}, " if key else ""
    got = t.sql(f"SELECT {keys}COUNT(*) AS n, COUNT(dec) AS nd, SUM(dec) AS sd, MIN(dec) AS lo, MAX(i32) AS hi, "
                f"SUM(i32 * 2 + dec) AS mix, AVG(dec) AS av, MIN(d) AS first FROM t {where}{group}")
    assert isinstance(got, packscan.Frame)
    out = pa.table(got)
    assert out.schema.field("n").type == pa.int64()
    assert out.schema.field("sd").type == pa.decimal128(38, 2)
    assert out.schema.field("lo").type == pa.decimal128(12, 2)
    assert out.schema.field("hi").type == pa.int32() and out.schema.field("first").type == pa.date32()
    order = f" ORDER BY {', '.join(k + ' NULLS LAST' for k in key.split(', '))}" if key else ""
    want = duckdb.sql(f"SELECT {keys}COUNT(*), COUNT(dec), SUM(dec), MIN(dec), MAX(i32), SUM(i32 * 2 + dec), "
                      f"SUM(dec), COUNT(dec), MIN(d) FROM data {where}{group}{order}").fetchall()
    rows = out.to_pylist()
    nk = len(key.split(", ")) if key else 0
    assert len(rows) == len(want), f"PACKSCAN_SEED={rng.seed_value}"
    for g, w in zip(rows, want):
        vals = list(g.values())
        exp = list(w[:nk]) + [w[nk], w[nk + 1], w[nk + 2], w[nk + 3], w[nk + 4], w[nk + 5],
                              avg(w[nk + 6], w[nk + 7], 2), w[nk + 8]]
        assert vals == exp, f"PACKSCAN_SEED={rng.seed_value}: {g} != {w}"
        assert all(isinstance(v, D) for v in (g["sd"], g["mix"], g["av"]) if v is not None)


def test_order_by_limit_matches_duckdb(context, rng):
    data = random_table(rng, 1000)
    t = packscan.Table(data, context=context)
    r = t.sql("SELECT s AS s, SUM(dec) AS total, COUNT(*) AS n FROM t WHERE i32 IS NOT NULL GROUP BY s")
    top = r.sort(["total", "s"], descending=[True, False]).head(3)
    want = duckdb.sql("SELECT s, SUM(dec) AS total, COUNT(*) FROM data WHERE i32 IS NOT NULL GROUP BY s "
                      "ORDER BY total DESC NULLS LAST, s NULLS LAST LIMIT 3").fetchall()
    assert [tuple(x.values()) for x in pa.table(top).to_pylist()] == want, f"PACKSCAN_SEED={rng.seed_value}"
    assert top.select("n", "s").columns == ["n", "s"] and len(top) == 3


def quotient(num, den):
    """Division of exact results: at scale max(6, the operands' scales),
    rounded half away from zero; by zero (or of a NULL) NULL."""
    if num is None or den is None or den == 0:
        return None
    num, den = D(num), D(den)
    scale = max(6, -num.as_tuple().exponent, -den.as_tuple().exponent)
    return (num / den).quantize(D(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)


def random_having(rng):
    c = rng.randrange(0, 40)
    lo = D(rng.randrange(-10**5, 10**5)).scaleb(-2)
    return rng.choice([f"n > {c}", f"COUNT(*) <= {c % 5 + 1}", f"sd BETWEEN {lo} AND {lo + 3000}",
                       f"SUM(dec) > SUM(i32) OR sd IS NULL", "MIN(s) IN ('a', 'ab', 'zz')", "NOT (MAX(i32) >= 10)",
                       f"sd * 2 < {lo} AND n <> 1", f"ABS(SUM(dec)) >= {abs(lo)}", "lo NOT IN ('b', '')",
                       f"n > {c} OR lo > 'b'"])


@pytest.mark.parametrize("key", ["s", "cat", "i32", "d", "s, cat"])
def test_having_order_limit_match_duckdb(context, rng, key):
    """HAVING, ORDER BY (the keys last, so that DuckDB's order is one order),
    LIMIT and OFFSET, division, abs and coalesce: the same statement on
    packscan and DuckDB, exactly (DuckDB divides in doubles: its exact SUM
    and COUNT are divided here by packscan's rule)."""
    n = rng.choice([0, 1, 33, 300, 2000])
    data = random_table(rng, n)
    t = packscan.Table(data, context=context)
    for _ in range(12):
        where = rng.choice(WHERES)
        having = f" HAVING {random_having(rng)}" if rng.random() < 0.8 else ""
        terms = rng.sample(["n DESC", "sd NULLS FIRST", "lo DESC", "2", "SUM(i32) DESC NULLS LAST", "a", "ci DESC"],
                           rng.randrange(0, 3))
        keys = ", ".join(f"{k} NULLS LAST" for k in key.split(", "))
        limit = f" LIMIT {rng.randrange(0, 7)}" if rng.random() < 0.6 else ""
        limit += f" OFFSET {rng.randrange(0, 5)}" if rng.random() < 0.3 else ""
        # DuckDB's rows are in no order without ORDER BY: LIMIT comes with one
        order = f" ORDER BY {', '.join(terms + [keys])}" if terms or limit or rng.random() < 0.5 else ""
        tail = f" FROM data {where} GROUP BY {key}{having}{order}{limit}"
        items = "COUNT(*) AS n, SUM(dec) AS sd, MIN(s) AS lo, ABS(SUM(dec)) AS a, COALESCE(SUM(i32), 0) AS ci"
        stmt = f"SELECT {key}, {items}, SUM(dec) / COUNT(*) AS q, SUM(dec) / SUM(i32) AS q2{tail}"
        got = pa.table(t.sql(stmt)).to_pylist()
        want = duckdb.sql(f"SELECT {key}, {items}, SUM(dec), COUNT(*), SUM(dec), SUM(i32){tail}").fetchall()
        if not order:  # packscan's rows come in key order; DuckDB's in any
            nk = len(key.split(", "))
            want.sort(key=lambda w: tuple((v is None, v) for v in w[:nk]))
        msg = f"PACKSCAN_SEED={rng.seed_value}: {stmt}"
        assert len(got) == len(want), msg
        for g, w in zip(got, want):
            vals = list(g.values())
            assert vals[:-2] == list(w[:-4]), msg
            assert vals[-2:] == [quotient(w[-4], w[-3]), quotient(w[-2], w[-1])], msg


def test_having_order_limit_ungrouped_and_errors(context, rng):
    data = random_table(rng, 300)
    t = packscan.Table(data, context=context)
    for stmt in ["SELECT COUNT(*) AS n, SUM(dec) AS sd FROM data HAVING COUNT(*) > 1000",
                 "SELECT COUNT(*) AS n, SUM(dec) AS sd FROM data HAVING COUNT(*) = 300 LIMIT 1",
                 "SELECT COUNT(*) AS n FROM data LIMIT 0", "SELECT COUNT(*) AS n FROM data OFFSET 1"]:
        assert [tuple(r.values()) for r in pa.table(t.sql(stmt)).to_pylist()] == duckdb.sql(stmt).fetchall(), \
            f"PACKSCAN_SEED={rng.seed_value}: {stmt}"
    with pytest.raises(packscan.PackscanError, match="error at column 12: SUM\\(DISTINCT ...\\) is not supported"):
        t.sql("SELECT SUM(DISTINCT s) FROM t")
    with pytest.raises(packscan.PackscanError, match="error at column 17: OVER is not supported"):
        t.sql("SELECT SUM(i32) OVER () FROM t")
    with pytest.raises(packscan.PackscanError, match="ORDER BY position 3 is not in the SELECT list"):
        t.sql("SELECT s, COUNT(*) FROM t GROUP BY s ORDER BY 3")
    with pytest.raises(packscan.PackscanError, match="not to one partition's"):
        t.sql_partial("SELECT s, COUNT(*) FROM t GROUP BY s HAVING COUNT(*) > 1")


def test_consumers_take_a_table(context):
    t = packscan.Table(pa.table({"k": ["a", "b", "a", None], "v": pa.array([D("1.5"), D("2.25"), None, D("4")],
                                                                         pa.decimal128(9, 2))}), context=context)
    r = t.sql("SELECT k, SUM(v) AS s, COUNT(*) AS n FROM t GROUP BY k")
    assert pa.table(r).to_pylist() == [{"k": "a", "s": D("1.50"), "n": 2}, {"k": "b", "s": D("2.25"), "n": 1},
                                       {"k": None, "s": D("4.00"), "n": 1}]
    df = pl.DataFrame(r)
    assert df.columns == ["k", "s", "n"] and df["n"].to_list() == [2, 1, 1]
    assert r.to_polars().shape == (3, 3)
    assert duckdb.sql("SELECT SUM(n), MAX(s) FROM r").fetchall() == [(4, D("4.00"))]
    p = r.to_pandas()
    assert isinstance(p, pd.DataFrame) and p["n"].tolist() == [2, 1, 1] and p["s"][1] == D("2.25")
    # A filter result is a table to the same consumers, and has the same operations.
    f = t.filter("v IS NOT NULL")
    assert pl.DataFrame(f).shape == (3, 2)
    assert duckdb.sql("SELECT COUNT(*) FROM f").fetchall() == [(3,)]
    assert f.to_pandas()["v"].tolist() == [D("1.50"), D("2.25"), D("4.00")]
    assert pa.table(f.sort("v", descending=True).head(2).select("k")).to_pylist() == [{"k": None}, {"k": "b"}]
    assert pa.table(r).num_rows == 3  # exported again, unchanged
    with pytest.raises(KeyError):
        r.select("nope")


def test_numpy_decimal_modes(context):
    big = D("12345678901234567.89")  # past float64's exact integers
    t = packscan.Table(pa.table({"v": pa.array([D("0.10"), big, None], pa.decimal128(20, 2))}), context=context)
    col = t.filter(None).to_numpy()["v"]
    assert col.dtype == object and col[0] == D("0.10") and col[1] == big and col.mask.tolist() == [False, False, True]
    ints = t.filter(None).to_numpy(decimals="int")["v"]
    assert ints.dtype == np.int64 and ints[:2].tolist() == [10, 1234567890123456789]
    floats = t.filter(None).to_numpy(decimals="float")["v"]
    assert floats.dtype == np.float64 and floats[0] == 0.1
    s = t.sql("SELECT SUM(v * v) AS sq FROM t").to_numpy(decimals="int")["sq"]
    exact = (10 ** 2 + 1234567890123456789 ** 2)  # unscaled, scale 4: past int64, so Python ints
    assert s.tolist() == [exact]
    with pytest.raises(ValueError):
        t.filter(None).to_numpy(decimals="double")


def test_sql_errors_name_the_position(context):
    t = packscan.Table(pa.table({"x": [1, 2], "s": ["a", "b"]}), context=context)
    with pytest.raises(packscan.PackscanError) as e:
        t.sql("SELECT SUM(y) FROM t")
    assert e.value.status == "PS_ERR_INVALID_ARGUMENT"
    assert "error at column 12: unknown column 'y'" in str(e.value)
    with pytest.raises(packscan.PackscanError, match="neither inside an aggregate nor in GROUP BY"):
        t.query("SELECT x, COUNT(*) FROM t")
    with pytest.raises(packscan.PackscanError, match="PS_ERR_OVERFLOW"):
        packscan.Table(pa.table({"u": pa.array([2**63] * 4, pa.uint64())}), context=t.context).sql(
            "SELECT SUM(u * u * u) FROM t")


def test_group_by_many_distinct_keys(context, rng):
    # Keys of 2^31 and more possible values (past a table of every possible
    # key: the distinct keys are collected, then numbered in key order), one
    # key and two, with a WHERE, against DuckDB.
    n = rng.choice([3000, 20000])
    data = pa.table({"ts": pa.array([rng.randrange(5000) * 1000003 for _ in range(n)], pa.int64()),
                     "g": pa.array([rng.randrange(3) if rng.random() > 0.1 else None for _ in range(n)], pa.int32()),
                     "v": pa.array([rng.randrange(-1000, 1000) for _ in range(n)], pa.int64())})
    t = packscan.Table(data, context=context)
    for keys in ["ts", "g, ts"]:
        got = pa.table(t.sql(f"SELECT {keys}, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS lo, MAX(v) AS hi FROM t "
                             f"WHERE v <> 7 GROUP BY {keys}")).to_pylist()
        order = ", ".join(k + " NULLS LAST" for k in keys.split(", "))
        want = duckdb.sql(f"SELECT {keys}, COUNT(*), SUM(v), MIN(v), MAX(v) FROM data WHERE v <> 7 GROUP BY {keys} "
                          f"ORDER BY {order}").fetchall()
        assert [tuple(r.values()) for r in got] == [tuple(w) for w in want], f"PACKSCAN_SEED={rng.seed_value}"
        assert len(got) > 2000


def test_auto_is_the_commands():
    # Below 2^22 rows the command's "auto" is the reference backend whatever
    # devices exist; a CPU OpenCL device (PoCL) is never picked automatically.
    assert packscan.auto_backend(1000) == "reference"
    assert packscan.Table(pa.table({"x": [1, 2, 3]})).context.backend == "reference"
    assert packscan.auto_backend() in ("reference", "cuda", "opencl")
    if packscan.auto_backend() == "opencl":
        assert "CPU" not in packscan.Context("auto").device


def test_console_script(tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "packscan")
    if not os.path.exists(exe):
        pytest.fail(f"the packscan console script is not at {exe}: pip install ./python")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    assert "query TABLE" in out and "shell TABLE" in out
    csv = tmp_path / "t.csv"
    csv.write_text("k,v\na,1.50\nb,2\na,\n")
    subprocess.run([exe, "encode", "-q", str(csv), str(tmp_path / "t.pst")], check=True)
    got = subprocess.run([exe, "query", str(tmp_path / "t.pst"), "SELECT k, SUM(v), COUNT(*) FROM t GROUP BY k"],
                         capture_output=True, text=True, check=True).stdout
    assert got.splitlines() == ["k,SUM(v),COUNT(*)", "a,1.50,2", "b,2.00,1"]
    # The Python module's entry is the same command.
    again = subprocess.run([sys.executable, "-m", "packscan", "version"], capture_output=True, text=True, check=True)
    assert again.stdout.startswith("packscan ")
