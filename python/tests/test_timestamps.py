"""Dates and timestamps keep their type: Arrow in and out (every unit, with
and without a time zone), TIMESTAMP / DATE literals in WHERE text, Table.sql
and Python filters (compared with DuckDB on the same data), and the command
line's table files (Table.save, read_table, `python -m packscan encode` of
Parquet)."""

import datetime
import os
import subprocess
import sys

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import packscan

EPOCH = datetime.datetime(1970, 1, 1)
NS_PER = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
TS_TYPES = [pa.timestamp(u, tz=tz) for u in ("s", "ms", "us", "ns") for tz in (None, "UTC", "America/New_York")]
TYPES = TS_TYPES + [pa.date32(), pa.date64()]
DAY_NS = 86400 * 10**9
BASE_NS = (datetime.datetime(2024, 6, 1) - EPOCH).days * DAY_NS


def ns_per(typ):
    if typ == pa.date32() or typ == pa.date64():
        return DAY_NS
    return NS_PER[typ.unit]


def column(typ, ns_values):
    """An Arrow array of typ holding ns_values (nanoseconds since the epoch, UTC)."""
    per = ns_per(typ)
    ints = [None if v is None else v // per for v in ns_values]
    if typ == pa.date32():
        return pa.array(ints, pa.int32()).cast(typ)
    if typ == pa.date64():
        return pa.array([None if v is None else v * 86400 * 1000 for v in ints], typ)
    return pa.array(ints, pa.int64()).cast(typ)


def data(rng, typ, n=200):
    per = ns_per(typ)
    vals = []
    for _ in range(n):
        if rng.random() < 0.1:
            vals.append(None)
        else:
            vals.append(BASE_NS + rng.randrange(-3 * DAY_NS, 3 * DAY_NS) // per * per)
    return pa.table({"id": pa.array(range(n), pa.int64()), "t": column(typ, vals)}), vals


def ts_text(ns):
    """ns (a multiple of 1000) as 'yyyy-mm-dd hh:mm:ss.ffffff'."""
    return (EPOCH + datetime.timedelta(microseconds=ns // 1000)).strftime("%Y-%m-%d %H:%M:%S.%f")


def literals(rng, vals):
    """Points in time near the data: on values, one microsecond or one second
    off them, and anywhere (microseconds, which DuckDB's TIMESTAMP holds)."""
    present = [v for v in vals if v is not None]
    out = []
    for _ in range(4):
        v = rng.choice(present)
        out.append((v + rng.choice([0, 0, 1000, -1000, 10**9, -(10**9), rng.randrange(-DAY_NS, DAY_NS)])) // 1000 * 1000)
    return out


@pytest.mark.parametrize("typ", TYPES, ids=str)
def test_arrow_round_trip_and_literals(context, rng, typ):
    """The type comes back as it went in, from the table and from Table.sql;
    TIMESTAMP and DATE literals select what DuckDB selects, as WHERE text, in
    Table.sql and as Python datetimes."""
    tbl, vals = data(rng, typ)
    t = packscan.Table(tbl, context=context)
    assert pa.table(t.to_arrow()).equals(tbl), f"PACKSCAN_SEED={rng.seed_value}"
    frame = pa.table(t.sql("SELECT MIN(t), MAX(t), COUNT(*) FROM t"))
    assert frame.schema.field(0).type == typ and frame.schema.field(1).type == typ
    assert frame.column(0)[0] == pa.compute.min(tbl["t"])
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("tbl", tbl)
    ops = [("<", "__lt__"), ("<=", "__le__"), ("=", "__eq__"), ("<>", "__ne__"), (">", "__gt__"), (">=", "__ge__")]
    for ns in literals(rng, vals):
        for word, lit, py in [("TIMESTAMP", ts_text(ns), EPOCH + datetime.timedelta(microseconds=ns // 1000)),
                              ("DATE", ts_text(ns)[:10], (EPOCH + datetime.timedelta(microseconds=ns // 1000)).date())]:
            for op, method in ops:
                where = f"t {op} {word} '{lit}'"
                want = [r[0] for r in con.execute(f"SELECT id FROM tbl WHERE {where} ORDER BY id").fetchall()]
                msg = f"{typ} WHERE {where}, PACKSCAN_SEED={rng.seed_value}"
                assert t.filter(where).row_ids().to_numpy().tolist() == want, msg
                assert getattr(t["t"], method)(py) is not NotImplemented
                assert t.filter(getattr(t["t"], method)(py)).row_ids().to_numpy().tolist() == want, msg
                got = pa.table(t.sql(f"SELECT COUNT(*) FROM t WHERE {where}")).column(0)[0].as_py()
                assert got == len(want), msg
            hi = py + datetime.timedelta(hours=30)
            want = [r[0] for r in con.execute(f"SELECT id FROM tbl WHERE t BETWEEN ? AND ? ORDER BY id",
                                              [py, hi]).fetchall()]
            assert t.filter(t["t"].between(py, hi)).row_ids().to_numpy().tolist() == want, \
                f"{typ} BETWEEN {py} AND {hi}, PACKSCAN_SEED={rng.seed_value}"


@pytest.mark.parametrize("typ", [pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("ns")], ids=str)
def test_python_literal_between_units(typ):
    """A datetime finer than the column's unit lies between two values: equal
    to none, and < / >= split there."""
    t = packscan.Table(pa.table({"t": pa.array([0, 1, 2], pa.int64()).cast(typ)}), backend="reference")
    per = NS_PER[typ.unit]
    at = EPOCH + datetime.timedelta(microseconds=per // 1000) + datetime.timedelta(microseconds=1) \
        if per > 1000 else EPOCH + datetime.timedelta(microseconds=1)
    if per == 1:  # a nanosecond column holds the microsecond exactly
        assert len(t.filter(t["t"] == EPOCH)) == 1
        return
    assert len(t.filter(t["t"] == at)) == 0
    assert len(t.filter(t["t"] < at)) == 2
    assert len(t.filter(t["t"] >= at)) == 1
    assert len(t.filter(t["t"].isin([at]))) == 0


@pytest.mark.parametrize("typ", TYPES, ids=str)
def test_table_file_round_trip(tmp_path, rng, typ):
    """Saved and read back, a timestamp keeps its unit and time zone (table
    file 1.3) and date64 comes back as timestamp[ms]; `python -m packscan
    encode` of Parquet writes the same."""
    tbl, vals = data(rng, typ, n=50)
    t = packscan.Table(tbl, backend="reference")
    path = str(tmp_path / "t.pst")
    t.save(path)
    for p in [path, str(tmp_path / "p.pst")]:
        src = tbl
        if p != path:
            # Parquet has no seconds unit: the file's own type is what goes in.
            pq.write_table(tbl, str(tmp_path / "t.parquet"))
            src = pq.read_table(str(tmp_path / "t.parquet"))
            subprocess.run([sys.executable, "-m", "packscan", "encode", str(tmp_path / "t.parquet"), p], check=True,
                           capture_output=True)
        st = src.schema.field("t").type
        want_type = st if st == pa.date32() else pa.timestamp("ms") if st == pa.date64() else pa.timestamp(st.unit, st.tz)
        back = packscan.read_table(p, backend="reference")
        got = pa.table(back.to_arrow())
        assert got.schema.field("t").type == want_type, f"{p}: PACKSCAN_SEED={rng.seed_value}"
        assert got["t"].equals(src["t"].cast(want_type))
        where = f"t >= TIMESTAMP '{ts_text(BASE_NS)}'"
        assert back.filter(where).row_ids().to_numpy().tolist() == t.filter(where).row_ids().to_numpy().tolist()
