"""Table.sql's date functions: GROUP BY date_trunc / extract / date_part /
year()... on DATE columns and on timestamps of every unit, compared with
DuckDB's answer for the same rows (seeded random instants around 1970, year
and leap-day boundaries, nulls). packscan's date_trunc of a DATE is a DATE
(DuckDB's is a TIMESTAMP at midnight: compared as such)."""

import datetime
import os

import duckdb
import pyarrow as pa
import pytest

import packscan

QUICK = os.environ.get("PACKSCAN_TEST_QUICK") == "1"
EPOCH = datetime.datetime(1970, 1, 1)
TRUNCS = ["second", "minute", "hour", "day", "week", "month", "quarter", "year"]
FIELDS = ["year", "quarter", "month", "day", "hour", "minute", "second", "dow", "doy"]
SUB_DAY = {"second", "minute", "hour"}
# How many seconds the instants of a table span, per part: a few thousand
# groups at most (each a slot in every work-item's accumulators).
SPAN = {"second": 3600, "minute": 3 * 86400, "hour": 200 * 86400, "day": 15 * 365 * 86400}
PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
UNITS = ["s", "ns"] if QUICK else ["s", "ms", "us", "ns"]
CENTERS = [datetime.datetime(1970, 1, 1), datetime.datetime(1969, 12, 31, 23, 59, 59),
           datetime.datetime(2000, 2, 29, 12), datetime.datetime(1899, 12, 31, 23), datetime.datetime(2024, 12, 30),
           datetime.datetime(1700, 3, 1), datetime.datetime(2100, 1, 1)]


def random_table(rng, n, span_s, unit):
    center = rng.choice(CENTERS)
    # within 1677 .. 2262: DuckDB's extract casts to nanoseconds
    span_s = min(span_s, (40 if center.year < 1800 else 100) * 365 * 86400)
    base = int((center - EPOCH).total_seconds()) * PER_SECOND[unit]
    half = span_s * PER_SECOND[unit] // 2
    # whole microseconds in ns: DuckDB rounds TIMESTAMP_NS to microseconds before date_trunc
    step = 1000 if unit == "ns" else 1
    ts = [None if rng.random() < 0.1 else base + rng.randrange(-half, half + 1) // step * step for _ in range(n)]
    days = [None if v is None else v // (86400 * PER_SECOND[unit]) for v in ts]
    x = [rng.randrange(-100, 100) for _ in range(n)]
    return pa.table({"ts": pa.array(ts, pa.int64()).cast(pa.timestamp(unit)),
                     "d": pa.array(days, pa.int32()).cast(pa.date32()), "x": pa.array(x, pa.int64())})


def norm(v):
    """A key as DuckDB's Python values show it: datetimes (a date as its
    midnight), integers."""
    if v is None or isinstance(v, int):
        return v
    if hasattr(v, "to_pydatetime"):
        return v.to_pydatetime()
    if isinstance(v, datetime.datetime):
        return v
    if isinstance(v, datetime.date):
        return datetime.datetime(v.year, v.month, v.day)
    return v


def spellings(fn, part, col):
    """The ways the statement may name the function (all bind to one key)."""
    if fn == "date_trunc":
        return [f"date_trunc('{part}', {col})", f"DATE_TRUNC('{part.upper()}', {col})"]
    out = [f"extract({part} FROM {col})", f"date_part('{part}', {col})"]
    if part in ("year", "quarter", "month", "day", "hour", "minute", "second"):
        out.append(f"{part}({col})")
    if part == "dow":
        out.append(f"dayofweek({col})")
    return out


def check(t, data, expr, duck_expr, where, seed):
    got = t.sql(f"SELECT {expr} AS k, COUNT(*) AS n, SUM(x) AS sx, MIN(x) AS lo FROM t {where} GROUP BY {expr}")
    con = duckdb.connect()
    con.register("data", data)
    want = con.sql(f"SELECT {duck_expr} AS k, COUNT(*), SUM(x), MIN(x) FROM data {where} GROUP BY 1 "
                   "ORDER BY 1 NULLS LAST").fetchall()
    rows = [(norm(r["k"]), r["n"], r["sx"], r["lo"]) for r in pa.table(got).to_pylist()]
    want = [(norm(w[0]),) + tuple(w[1:]) for w in want]
    assert rows == want, f"PACKSCAN_SEED={seed}: {expr} {where}"


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("part", TRUNCS)
def test_date_trunc_timestamps_match_duckdb(context, rng, unit, part):
    n = rng.choice([1, 33, 300] if QUICK else [1, 33, 300, 3000])
    data = random_table(rng, n, SPAN.get(part, 150 * 365 * 86400), unit)
    t = packscan.Table(data, context=context)
    for expr in spellings("date_trunc", part, "ts")[: 1 if QUICK else 2]:
        check(t, data, expr, f"date_trunc('{part}', ts)", "", rng.seed_value)
    check(t, data, f"date_trunc('{part}', ts)", f"date_trunc('{part}', ts)", "WHERE x > 0", rng.seed_value)


@pytest.mark.parametrize("part", [p for p in TRUNCS if p not in SUB_DAY])
def test_date_trunc_dates_match_duckdb(context, rng, part):
    data = random_table(rng, rng.choice([1, 33, 500]), 40 * 365 * 86400, "s")
    t = packscan.Table(data, context=context)
    check(t, data, f"date_trunc('{part}', d)", f"date_trunc('{part}', d)", "", rng.seed_value)
    out = pa.table(t.sql(f"SELECT date_trunc('{part}', d) AS k, COUNT(*) FROM t GROUP BY date_trunc('{part}', d)"))
    assert out.schema.field("k").type == pa.date32()


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("field", FIELDS)
def test_extract_matches_duckdb(context, rng, unit, field):
    data = random_table(rng, rng.choice([1, 33, 300] if QUICK else [1, 33, 300, 3000]),
                        rng.choice([86400, 3 * 365 * 86400, 400 * 365 * 86400]), unit)
    t = packscan.Table(data, context=context)
    for expr in spellings("extract", field, "ts")[: 1 if QUICK else 3]:
        check(t, data, expr, f"extract({field} FROM ts)", "", rng.seed_value)
        out = pa.table(t.sql(f"SELECT {expr} AS k, COUNT(*) FROM t GROUP BY {expr}"))
        assert out.schema.field("k").type == pa.int64()
    if field not in SUB_DAY:
        check(t, data, f"extract({field} FROM d)", f"extract({field} FROM d)", "WHERE x < 50", rng.seed_value)


def test_two_date_keys_and_order(context, rng):
    data = random_table(rng, 2000, 6 * 365 * 86400, "ms")
    t = packscan.Table(data, context=context)
    got = t.sql("SELECT year(ts) AS y, month(ts) AS m, SUM(x) AS sx FROM t WHERE d IS NOT NULL "
                "GROUP BY year(ts), month(ts) ORDER BY sx DESC, y, m LIMIT 5")
    want = duckdb.sql("SELECT year(ts), month(ts), SUM(x) AS sx FROM data WHERE d IS NOT NULL GROUP BY 1, 2 "
                      "ORDER BY sx DESC, 1, 2 LIMIT 5").fetchall()
    assert [tuple(r.values()) for r in pa.table(got).to_pylist()] == want, f"PACKSCAN_SEED={rng.seed_value}"


def test_date_function_errors(context):
    data = random_table(__import__("random").Random(1), 10, 86400, "s")
    t = packscan.Table(data, context=context)
    for sql, msg in [("SELECT hour(d), COUNT(*) FROM t GROUP BY hour(d)", "a date has no hour"),
                     ("SELECT year(x), COUNT(*) FROM t GROUP BY year(x)", "takes a date or timestamp column"),
                     ("SELECT date_trunc('fortnight', d), COUNT(*) FROM t GROUP BY 1", "expected a part of date_trunc"),
                     ("SELECT SUM(year(d)) FROM t", "date functions inside an aggregate"),
                     ("SELECT year(d), COUNT(*) FROM t GROUP BY month(d)", "neither inside an aggregate nor in GROUP BY")]:
        with pytest.raises(Exception, match=msg):
            t.sql(sql)


@pytest.mark.parametrize("unit", UNITS)
def test_where_date_functions_match_duckdb(context, rng, unit):
    """date_trunc and year in WHERE are ranges on the column: compared with
    DuckDB for every operator, at literals on and off the units' starts."""
    data = random_table(rng, rng.choice([33, 300]), 3 * 365 * 86400, unit)
    t = packscan.Table(data, context=context)
    con = duckdb.connect()
    con.register("data", data)
    values = [v for v in data.column("ts").to_pylist() if v is not None]
    for _ in range(4 if QUICK else 20):
        col = rng.choice(["ts", "d"])
        part = rng.choice(["year"] + [p for p in TRUNCS if col == "ts" or p not in SUB_DAY])
        v = norm(rng.choice(values)).replace(microsecond=0) if values else EPOCH
        lit = f"TIMESTAMP '{v:%Y-%m-%d %H:%M:%S}'"
        if rng.random() < 0.5:  # on a unit's start
            lit = f"TIMESTAMP '{con.sql(f'SELECT date_trunc({part!r}, {lit})').fetchall()[0][0]:%Y-%m-%d %H:%M:%S}'"
        fn = f"year({col})" if part == "year" and rng.random() < 0.5 else f"date_trunc('{part}', {col})"
        if fn.startswith("year"):
            lit = str(v.year + rng.randrange(-1, 2))
        op = rng.choice(["=", "<>", "<", "<=", ">", ">=", "BETWEEN", "NOT BETWEEN"])
        pred = f"{fn} {op} {lit}" if "BETWEEN" not in op else f"{fn} {op} {lit} AND {lit.replace('20', '21', 1)}"
        got = tuple(pa.table(t.sql(f"SELECT COUNT(*) AS n, SUM(x) AS sx FROM t WHERE {pred}")).to_pylist()[0].values())
        want = con.sql(f"SELECT COUNT(*), SUM(x) FROM data WHERE {pred}").fetchall()[0]
        assert got == want, f"PACKSCAN_SEED={rng.seed_value}: {pred}"
