"""Lossless float columns (docs/float-encoding.md): numpy and pyarrow doubles and
floats that are not decimals at one scale (random values, unit conversions,
-0.0, infinities, denormals) go into Table() and come back bit for bit; filters
agree with numpy; MIN/MAX through SQL; SUM and AVG through SQL are the exact sums
rounded once (math.fsum, and fractions.Fraction for the average, as oracles);
comparisons of two columns agree with numpy and DuckDB; arithmetic on them is
evaluated per row in doubles as DuckDB evaluates it, its SUM the exact sum of
those doubles rounded once; save() keeps the mapping."""

import math
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest

import packscan

from conftest import SEED, case_seed


def columns(seed, n=3000):
    g = np.random.default_rng(seed)
    x = g.random(n)
    x[::97] = -0.0
    x[5] = math.inf
    x[6] = -math.inf
    x[7] = 5e-324
    mph = g.integers(0, 45, n) * 1.15078
    mph[::50] = 0.1 + 0.2
    return {"x": x, "mph": mph, "f": (g.random(n) * 1000).astype(np.float32)}


def test_round_trip_and_filters(context):
    seed = case_seed("test_round_trip_and_filters")
    cols = columns(seed)
    tbl = pa.table(cols)
    t = packscan.Table(tbl, context=context)
    back = pa.table(t.filter("x IS NOT NULL"))
    for name, v in cols.items():
        got = back[name].to_numpy()
        assert got.view(np.uint8).tobytes() == v.view(np.uint8).tobytes(), f"{name} PACKSCAN_SEED={SEED}"
    g = np.random.default_rng(seed + 1)
    for _ in range(40):
        col = ["x", "mph", "f"][g.integers(0, 3)]
        v = cols[col].astype(np.float64)
        lit = float(v[g.integers(0, len(v))])
        if g.integers(0, 3) == 0:
            lit = float(np.nextafter(lit, math.inf))
        op = ["<", "<=", ">", ">=", "=", "!="][g.integers(0, 6)]
        if not math.isfinite(lit):  # the WHERE parser takes finite literals only
            lit = math.copysign(1.7976931348623157e308, lit)
        text = f"{lit:.17e}"  # a double literal (an exponent), not an exact decimal
        want = {"<": v < lit, "<=": v <= lit, ">": v > lit, ">=": v >= lit, "=": v == lit, "!=": v != lit}[op]
        assert t.count(f"{col} {op} {text}") == int(want.sum()), f"{col} {op} {text} PACKSCAN_SEED={SEED}"


def test_sql_min_max_and_arithmetic(context):
    import duckdb

    cols = columns(case_seed("test_sql_min_max_and_arithmetic"))
    cols["x"] = np.where(np.isinf(cols["x"]), 0.5, cols["x"])
    # Row 7's x is the smallest denormal: where mph is 0 and f > 500 selects the
    # row, mph * f - x is that denormal, below the window of the exact sum, and
    # the SUM is rightly refused (the last statement checks that refusal). A
    # nonzero mph keeps the drawn inputs inside the cases the loop compares.
    cols["mph"][7] = 1.15078
    t = packscan.Table(pa.table(cols), context=context)
    f = pa.table(t.sql("SELECT MIN(x), MAX(mph), COUNT(*) FROM t WHERE f > 500"))
    sel = cols["f"] > 500
    assert f.column(0)[0].as_py() == cols["x"][sel].min()
    assert f.column(1)[0].as_py() == cols["mph"][sel].max()
    # arithmetic: DuckDB's per-row doubles (IEEE, one rounding per operation), summed exactly
    con = duckdb.connect()
    con.register("tbl", pa.table(cols))
    for expr in ("mph * 2", "mph * f - x", "(mph + 0.1) * f"):
        where = "f > 500"
        rows = np.array([r[0] for r in con.execute(f"SELECT {expr} FROM tbl WHERE {where}").fetchall()])
        got = pa.table(t.sql(f"SELECT SUM({expr}) AS s, AVG({expr}) AS a, MIN({expr}) AS lo, MAX({expr}) AS hi "
                             f"FROM t WHERE {where}"))
        lo, hi = con.execute(f"SELECT MIN({expr}), MAX({expr}) FROM tbl WHERE {where}").fetchone()
        assert float(got.column("s")[0].as_py()) == math.fsum(rows), f"SUM({expr}) PACKSCAN_SEED={SEED}"
        assert float(got.column("a")[0].as_py()) == exact_avg(rows), f"AVG({expr}) PACKSCAN_SEED={SEED}"
        assert float(got.column("lo")[0].as_py()) == lo, f"MIN({expr}) PACKSCAN_SEED={SEED}"
        assert float(got.column("hi")[0].as_py()) == hi, f"MAX({expr}) PACKSCAN_SEED={SEED}"
    with pytest.raises(Exception, match="not representable|NOT_REPRESENTABLE"):
        t.sql("SELECT SUM(x * 2) FROM t")  # 5e-324 * 2 lies below the window of values near 2


def test_compare_columns(context):
    """Two columns compared in WHERE (a lossless column against another, an
    integer and a decimal column; NULLs on either side) select what numpy's
    IEEE compares select (-0.0 = 0.0), and what DuckDB selects."""
    import duckdb

    seed = case_seed("test_compare_columns")
    g = np.random.default_rng(seed)
    cols = columns(seed, 2000)
    n = len(cols["x"])
    pool = np.concatenate([cols["mph"][:200], [-0.0, 0.0, math.inf, -math.inf, 0.1 + 0.2]])
    cols["x"][::3] = g.choice(pool, len(cols["x"][::3]))  # values the other columns hold too
    cols["i"] = g.integers(-3, 50, n)
    cols["d"] = g.integers(-500, 5000, n) / 100.0  # decimals at scale 2: FOR-decimal
    valid = {name: g.random(n) > 0.1 for name in cols}
    tbl = pa.table({name: pa.array(v, mask=~valid[name]) for name, v in cols.items()})
    t = packscan.Table(tbl, context=context)
    con = duckdb.connect()
    con.register("tbl", tbl)
    ops = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "=": np.equal,
           "!=": np.not_equal}
    pairs = [("x", "mph"), ("mph", "x"), ("f", "x"), ("mph", "f"), ("x", "i"), ("i", "mph"), ("f", "d"),
             ("d", "mph"), ("x", "x")]
    for a, b in pairs:
        for op, fn in ops.items():
            want = valid[a] & valid[b] & fn(cols[a].astype(np.float64), cols[b].astype(np.float64))
            where = f"{a} {op} {b}"
            assert t.count(where) == int(want.sum()), f"{where} PACKSCAN_SEED={SEED}"
            false_rows = valid[a] & valid[b] & ~want  # NOT of UNKNOWN stays UNKNOWN
            assert t.count(f"NOT ({where})") == int(false_rows.sum()), f"NOT {where} PACKSCAN_SEED={SEED}"
            duck = con.execute(f"SELECT count(*) FROM tbl WHERE {where}").fetchone()[0]
            assert duck == int(want.sum()), f"DuckDB's {where} PACKSCAN_SEED={SEED}"
            got = pa.table(t.sql(f"SELECT COUNT(*) AS n FROM t WHERE {where}")).column("n")[0].as_py()
            assert got == duck, f"SQL {where} PACKSCAN_SEED={SEED}"


def exact_avg(values):
    """The exact average of doubles, rounded once (Fraction is exact; float() rounds to nearest even)."""
    return float(sum(Fraction(v) for v in values) / len(values))


def test_sql_sum_and_avg_exact(context):
    g = np.random.default_rng(case_seed("test_sql_sum_and_avg_exact"))
    n = 5000
    cols = {
        "k": g.integers(0, 4, n),
        "x": g.random(n) * 1e6 - 3e5,  # random doubles: ordered bits
        "mph": g.integers(0, 45, n) * 1.15078,  # a grid with exceptions: ALP
        "f": (g.random(n) * 1000).astype(np.float32),  # float32
    }
    cols["x"][::97] = -0.0
    cols["mph"][::50] = 0.1 + 0.2
    cols["f"][::89] = -0.0  # else short float32 decimals may stay FOR-decimal, whose sums are exact decimals
    t = packscan.Table(pa.table(cols), context=context)
    for name in ("x", "mph", "f"):
        v = cols[name].astype(np.float64)
        sel = v > float(np.median(v))
        f = pa.table(t.sql(f"SELECT SUM({name}) AS s, AVG({name}) AS a, COUNT(*) AS n FROM t WHERE {name} > "
                           f"{float(np.median(v)):.17e}"))
        got_s, got_a = float(f.column("s")[0].as_py()), float(f.column("a")[0].as_py())
        assert got_s == math.fsum(v[sel]), f"SUM({name}) PACKSCAN_SEED={SEED}"
        assert got_a == exact_avg(v[sel]), f"AVG({name}) PACKSCAN_SEED={SEED}"
        f = pa.table(t.sql(f"SELECT k, SUM({name}) AS s, AVG({name}) AS a FROM t GROUP BY k"))
        for k, s, a in zip(f.column("k").to_pylist(), f.column("s").to_pylist(), f.column("a").to_pylist()):
            part = v[cols["k"] == k]
            assert float(s) == math.fsum(part), f"SUM({name}) key {k} PACKSCAN_SEED={SEED}"
            assert float(a) == exact_avg(part), f"AVG({name}) key {k} PACKSCAN_SEED={SEED}"
    # -0.0 alone sums to +0.0; an empty selection is NULL; an infinity is not representable
    z = packscan.Table(pa.table({"z": np.array([-0.0] * 40), "w": np.array([1.5] * 39 + [math.inf])}),
                       context=context)
    f = pa.table(z.sql("SELECT SUM(z) AS s, AVG(z) AS a FROM t"))
    assert math.copysign(1.0, float(f.column("s")[0].as_py())) == 1.0 and float(f.column("s")[0].as_py()) == 0.0
    assert pa.table(z.sql("SELECT SUM(z) AS s FROM t WHERE z > 1")).column("s")[0].as_py() is None
    with pytest.raises(Exception, match="NOT_REPRESENTABLE"):
        z.sql("SELECT SUM(w) FROM t")


def test_save_keeps_the_mapping(context, tmp_path):
    cols = columns(case_seed("test_save_keeps_the_mapping"))
    t = packscan.Table(pa.table(cols), context=context)
    path = str(tmp_path / "floats.pst")
    t.save(path)
    back = packscan.read_table(path, context=context)
    assert back.count("mph = 0.30000000000000004") == int((cols["mph"] == 0.1 + 0.2).sum())


def test_group_by_a_float_key(context):
    g = np.random.default_rng(case_seed("test_group_by_a_float_key"))
    k = g.integers(-20, 21, 4000) / 10.0
    k[::7] = -0.0  # one group with 0.0, as SQL groups by equality
    k[::11] = 0.1 + 0.2
    x = g.random(4000)
    t = packscan.Table(pa.table({"k": k, "x": x}), context=context)
    f = pa.table(t.sql("SELECT k, COUNT(*) AS n, MAX(x) AS mx FROM t GROUP BY k ORDER BY k DESC"))
    keys = sorted(set(k.tolist()), reverse=True)
    assert f.column("k").to_pylist() == keys, f"PACKSCAN_SEED={SEED}"
    for key, n, mx in zip(keys, f.column("n").to_pylist(), f.column("mx").to_pylist()):
        assert n == int((k == key).sum()) and mx == x[k == key].max(), f"key {key} PACKSCAN_SEED={SEED}"
