"""packscan's answer for random WHERE clauses equals DuckDB's for the same
text, on random tables with nulls, decimals, dates, strings and
dictionaries; the selected rows come back equal to the input rows."""

import datetime
import decimal

import duckdb
import pyarrow as pa
import pytest

import packscan

WORDS = ["", "a", "ab", "abc", "b", "ba", "bab", "c", "zz", "a%b", "long string past twelve bytes"]


def random_table(r, n):
    def maybe(v):
        return None if r.random() < 0.15 else v

    i32 = [maybe(r.randrange(-50, 50)) for _ in range(n)]
    u16 = [maybe(r.randrange(0, 65536 if r.random() < 0.2 else 100)) for _ in range(n)]
    f = [maybe(r.randrange(-2000, 2000) / 8) for _ in range(n)]
    dec = [maybe(decimal.Decimal(r.randrange(-10**6, 10**6)).scaleb(-2)) for _ in range(n)]
    d = [maybe(datetime.date(2020, 1, 1) + datetime.timedelta(days=r.randrange(0, 400))) for _ in range(n)]
    s = [maybe(r.choice(WORDS)) for _ in range(n)]
    cat = [maybe(r.choice(WORDS[1:8])) for _ in range(n)]
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "i32": pa.array(i32, pa.int32()),
        "u16": pa.array(u16, pa.uint16()),
        "f": pa.array(f, pa.float64()),
        "dec": pa.array(dec, pa.decimal128(12, 2)),
        "d": pa.array(d, pa.date32()),
        "s": pa.array(s, pa.string()),
        "cat": pa.array(cat, pa.string()).dictionary_encode(),
    })

# The statement the Dask and Spark tests merge over partitions of
# random_table's columns, and the check of a merged result against DuckDB's
# answer over the same rows (`source`: a pyarrow table, or SQL text for a
# FROM clause such as a read_parquet() of the partitions' files).
MERGE_STATEMENT = ("SELECT cat, s, COUNT(*) AS n, SUM(dec) AS sd, AVG(i32) AS av, MIN(s) AS lo, MAX(d) AS hi, "
                   "SUM(f) AS sf FROM t WHERE i32 > -30 OR i32 IS NULL GROUP BY cat, s")


def assert_merged_matches_duckdb(got, source, seed):
    con = duckdb.connect()
    if not isinstance(source, str):
        con.register("rows", source)
        source = "rows"
    ref = con.sql(f"SELECT cat, s, COUNT(*), SUM(dec), AVG(i32), MIN(s), MAX(d), SUM(f) FROM {source} "
                  "WHERE i32 > -30 OR i32 IS NULL GROUP BY cat, s ORDER BY cat NULLS LAST, s NULLS LAST").fetchall()
    rows = pa.table(got).to_pylist()
    assert len(rows) == len(ref), f"PACKSCAN_SEED={seed}"
    q = decimal.Decimal("0.000001")
    for g, w in zip(rows, ref):
        av = None if w[4] is None else decimal.Decimal(repr(w[4])).quantize(q)
        assert (g["cat"], g["s"], g["n"], g["sd"], g["lo"], g["hi"]) == (w[0], w[1], w[2], w[3], w[5], w[6]), \
            f"PACKSCAN_SEED={seed}"
        assert (g["av"] is None) == (av is None) and (av is None or abs(g["av"] - av) <= q), f"PACKSCAN_SEED={seed}"
        assert g["sf"] == w[7] or abs(g["sf"] - w[7]) < 1e-9, f"PACKSCAN_SEED={seed}"


def leaf(r):
    k = r.randrange(12)
    op = r.choice(["=", "<>", "<", "<=", ">", ">="])
    if k == 0:
        return f"i32 {op} {r.randrange(-60, 60)}"
    if k == 1:
        return f"u16 {op} {r.randrange(0, 120)}"
    if k == 2:
        return f"f {op} {r.randrange(-2000, 2000) / 8}"
    if k == 3:
        return f"dec {op} {decimal.Decimal(r.randrange(-10**6, 10**6)).scaleb(-2)}"
    if k == 4:
        day = datetime.date(2020, 1, 1) + datetime.timedelta(days=r.randrange(-10, 410))
        return f"d {op} DATE '{day.isoformat()}'"
    if k == 5:
        return f"s {op} '{r.choice(WORDS)}'"
    if k == 6:
        return f"cat {op} '{r.choice(WORDS)}'"
    if k == 7:
        lo = r.randrange(-60, 40)
        return f"i32 {'NOT ' if r.random() < 0.3 else ''}BETWEEN {lo} AND {lo + r.randrange(0, 40)}"
    if k == 8:
        vals = ", ".join(f"'{r.choice(WORDS)}'" for _ in range(r.randrange(1, 4)))
        return f"{r.choice(['s', 'cat'])} {'NOT ' if r.random() < 0.3 else ''}IN ({vals})"
    if k == 9:
        pat = r.choice(["a%", "%b", "_", "%a_%", "ab%", "%", "b_b", "long%"])
        return f"{r.choice(['s', 'cat'])} {'NOT ' if r.random() < 0.3 else ''}LIKE '{pat}'"
    if k == 10:
        return f"{r.choice(['i32', 'f', 'dec', 'd', 's', 'cat'])} IS {'NOT ' if r.random() < 0.5 else ''}NULL"
    return f"i32 {op} u16"


def where(r, depth=0):
    if depth >= 3 or r.random() < 0.4:
        return leaf(r)
    k = r.randrange(3)
    if k == 0:
        return f"NOT ({where(r, depth + 1)})"
    return f"({where(r, depth + 1)}) {'AND' if k == 1 else 'OR'} ({where(r, depth + 1)})"


@pytest.mark.parametrize("n", [0, 1, 33, 1000])
def test_where_matches_duckdb(context, rng, n):
    tbl = random_table(rng, n)
    t = packscan.Table(tbl, context=context)
    con = duckdb.connect()
    con.register("tbl", tbl)
    for _ in range(40 if n else 5):
        w = where(rng)
        want = [row[0] for row in con.execute(f"SELECT id FROM tbl WHERE {w} ORDER BY id").fetchall()]
        r = t.filter(w)
        got = r.row_ids().to_numpy().tolist()
        assert got == want, f"WHERE {w} (PACKSCAN_SEED={rng.seed_value})"
        assert r.count == len(want)
        # The selected rows themselves, every column, against the input.
        back = pa.table(r)
        expect = tbl.take(pa.array(want, pa.int64())).set_column(
            7, "cat", tbl.column("cat").cast(pa.string()).take(pa.array(want, pa.int64())))
        assert back.equals(expect), f"rows of WHERE {w} (PACKSCAN_SEED={rng.seed_value})"


def test_aggregates_match_duckdb(context, rng):
    tbl = random_table(rng, 500)
    t = packscan.Table(tbl, context=context)
    con = duckdb.connect()
    con.register("tbl", tbl)
    for _ in range(10):
        w = where(rng)
        for col in ("i32", "u16", "dec", "f"):
            got = pa.record_batch(t.aggregate(col, w)).to_pylist()[0]
            cnt, s, mn, mx = con.execute(f"SELECT count({col}), sum({col}), min({col}), max({col}) "
                                         f"FROM tbl WHERE {w}").fetchone()
            msg = f"{col} WHERE {w} (PACKSCAN_SEED={rng.seed_value})"
            assert got["count"] == cnt, msg
            assert got["min"] == mn and got["max"] == mx, msg
            if col == "f":
                assert (s is None and got["sum"] is None) or abs(got["sum"] - s) < 1e-9 * (abs(s) + 1), msg
            else:
                assert got["sum"] == s, msg
