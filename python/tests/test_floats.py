"""Lossless float columns (docs/float-encoding.md): numpy and pyarrow doubles and
floats that are not decimals at one scale (random values, unit conversions,
-0.0, infinities, denormals) go into Table() and come back bit for bit; filters
agree with numpy; MIN/MAX through SQL; SUM is refused by name; save() keeps the
mapping."""

import math

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


def test_sql_min_max_and_sum_refused(context):
    cols = columns(case_seed("test_sql_min_max_and_sum_refused"))
    cols["x"] = np.where(np.isinf(cols["x"]), 0.5, cols["x"])
    t = packscan.Table(pa.table(cols), context=context)
    f = pa.table(t.sql("SELECT MIN(x), MAX(mph), COUNT(*) FROM t WHERE f > 500"))
    sel = cols["f"] > 500
    assert f.column(0)[0].as_py() == cols["x"][sel].min()
    assert f.column(1)[0].as_py() == cols["mph"][sel].max()
    with pytest.raises(Exception, match="lossless float column"):
        t.sql("SELECT SUM(mph) FROM t")


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
