"""pyarrow, polars and DuckDB as independent producers and consumers of
packscan tables and results through the Arrow PyCapsule interface; numpy
results; operators; zero-copy export; errors as exceptions."""

import ctypes
import datetime
import decimal

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import packscan
from conftest import BACKENDS
from packscan import _lib


def sample():
    return pa.table({
        "x": pa.array([1, 5, None, 9, -3], pa.int64()),
        "u": pa.array([0, 2**64 - 1, 7, 7, None], pa.uint64()),
        "p": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-0.50"), decimal.Decimal("99.99"),
                       decimal.Decimal("0.00")], pa.decimal128(6, 2)),
        "d": pa.array([datetime.date(2024, 1, i) for i in range(1, 6)], pa.date32()),
        "ts": pa.array([1, 2, 3, None, 5], pa.timestamp("us", tz="UTC")),
        "s": pa.array(["apple", None, "banana", "cherry", "apple"], pa.string()),
        "ls": pa.array(["q", "r", None, "q", "r"], pa.large_string()),
        "c": pa.array(["z", "y", "z", None, "x"]).dictionary_encode(),
        "f": pa.array([0.5, 1.5, None, 2.25, -1.0], pa.float32()),
    })


def test_pyarrow_in_and_out(context):
    tbl = sample()
    t = packscan.Table(tbl, context=context)
    assert t.columns == tbl.column_names and len(t) == 5
    assert t.field("ts") == {"name": "ts", "format": "tsu:UTC", "kind": "timestamp", "scale": 0, "unit": "us",
                             "timezone": "UTC"}
    assert t.field("p")["kind"] == "decimal128" and t.field("p")["scale"] == 2
    # Every row back, every type as it came in (dictionaries come back as strings by default).
    back = pa.table(t.to_arrow())
    assert back.equals(tbl.set_column(7, "c", tbl.column("c").cast(pa.string())))
    back_dict = pa.table(t.to_arrow(dictionary=True))
    assert back_dict.column("c").to_pylist() == tbl.column("c").to_pylist()
    assert pa.types.is_dictionary(back_dict.schema.field("c").type)
    # A filter: a record batch, a boolean selection, row ids of both widths.
    r = t.filter("x > 0 AND s LIKE 'a%'")
    assert pa.table(r).to_pylist() == [tbl.to_pylist()[0]]
    assert pa.array(r.selection()).to_pylist() == [True, False, False, False, False]
    assert pa.array(r.row_ids("uint32")).type == pa.uint32()
    assert pa.array(r.row_ids()).to_pylist() == [0]
    # Array and record batch producers.
    t1 = packscan.Table(pa.array([3, 1, 2]), context=context)
    assert pa.array(t1.filter(t1[""] > 1).row_ids()).to_pylist() == [0, 2]
    rb = tbl.to_batches()[0]
    assert packscan.Table(rb, context=context).count("u = 7") == 2
    one = packscan.Table(pa.array(["b", "a", None]), context=context)
    assert one.columns == [""] and pa.array(one.filter(one[""] == "a").row_ids()).to_pylist() == [1]


def test_chunked_and_sliced(context):
    tbl = pa.concat_tables([sample(), sample().slice(1, 3), sample()])
    assert tbl.column("x").num_chunks == 3
    t = packscan.Table(tbl, context=context)
    assert len(t) == 13
    assert pa.table(t.to_arrow()).column("s").to_pylist() == tbl.column("s").to_pylist()
    assert pa.table(t.to_arrow()).column("c").to_pylist() == tbl.column("c").to_pylist()
    assert t.count("s = 'apple'") == 4


def test_polars(context):
    df = pl.DataFrame({
        "a": [1, 2, 3, None],
        "s": ["x", "long string over twelve", None, "x"],
        "cat": pl.Series(["p", "q", "p", None], dtype=pl.Categorical),
        "dt": [datetime.date(2020, 1, 1), None, datetime.date(2021, 6, 1), datetime.date(2022, 1, 1)],
    })
    t = packscan.Table(df, context=context)
    r = t.filter("a >= 2 OR cat = 'p'")
    out = pl.DataFrame(r)
    assert out["a"].to_list() == [1, 2, 3]
    assert out["s"].to_list() == ["x", "long string over twelve", None]
    s = pl.from_arrow(r)  # a polars Series of structs, as polars reads any capsule
    assert s.len() == 3
    assert pl.DataFrame(t.filter(t["dt"] >= datetime.date(2021, 1, 1))).height == 2


def test_duckdb_relation_in_and_out(context):
    rel = duckdb.sql("SELECT i::INTEGER AS i, (i * 1.5)::DECIMAL(10,1) AS v, 'k' || (i % 3)::VARCHAR AS k "
                     "FROM range(100) t(i)")
    t = packscan.Table(rel, context=context)
    assert len(t) == 100
    r = t.filter("k = 'k1' AND v > 30.0")
    res = r.to_arrow()
    got = duckdb.sql("SELECT count(*), min(i) FROM res").fetchall()
    assert got == duckdb.sql("SELECT count(*), min(i) FROM rel WHERE k = 'k1' AND v > 30.0").fetchall()
    assert got[0][0] > 0


def test_operators(context):
    t = packscan.Table(sample(), context=context)
    x, s = t["x"], t["s"]
    assert t.count((x > 0) & ~(s == "cherry")) == t.count("x > 0 AND NOT s = 'cherry'") == 1
    assert t.count((x < 0) | s.is_null()) == 2
    assert t.count(x.between(1, 9)) == 3
    assert t.count(s.isin(["apple", "banana"])) == 3
    assert t.count(s.like("%an%")) == 1 and t.count(s.not_like("%an%")) == 3
    assert t.count(t["u"] > 2**63) == 1
    assert t.count(t["p"] >= decimal.Decimal("1.25")) == 2
    assert t.count(t["x"] < t["u"]) == 1  # 5 < 2^64 - 1; -3 < NULL is UNKNOWN
    with pytest.raises(TypeError):
        bool(x > 1)


def test_numpy(context):
    t = packscan.Table(sample(), context=context)
    r = t.filter("x >= -3")
    ids = r.row_ids().to_numpy()
    assert ids.dtype == np.uint64 and ids.tolist() == [0, 1, 3, 4]
    sel = r.selection().to_numpy()
    assert sel.dtype == bool and sel.tolist() == [True, True, False, True, True]
    cols = r.to_numpy()
    assert cols["x"].tolist() == [1, 5, 9, -3]
    assert isinstance(cols["u"], np.ma.MaskedArray) and cols["u"].mask.tolist() == [False, False, False, True]
    assert cols["p"][3] == 0.0 and cols["s"][0] == "apple"


def test_zero_copy_export(context):
    """A consumer takes packscan's exported buffers as they are: pyarrow's
    array points at the very memory the C export wrote."""
    t = packscan.Table(sample(), context=context)
    data = t.filter("x > 0").row_ids()
    sc, ac = data.__arrow_c_array__()
    ptr = _lib.capsule_pointer(ac, _lib.ARRAY_NAME)
    values_address = _lib.ArrowArray.from_address(ptr).buffers[1]
    arr = pa.Array._import_from_c_capsule(sc, ac)
    assert arr.buffers()[1].address == values_address
    assert arr.to_pylist() == [0, 1, 3]
    del arr  # the capsule's release frees the memory once pyarrow is done


def test_results_reusable_and_released(context):
    t = packscan.Table(sample(), context=context)
    r = t.filter("x > 0")
    d = r.to_arrow()
    assert pa.table(d).equals(pa.table(d))  # exported afresh each time
    sc, ac = d.__arrow_c_array__()
    del sc, ac  # unconsumed capsules release their arrays


def test_errors(context):
    t = packscan.Table(sample(), context=context)
    with pytest.raises(packscan.PackscanError, match="unknown column 'nope'"):
        t.count("nope > 1")
    with pytest.raises(packscan.PackscanError, match="type mismatch"):
        t.count("x = 'a'")
    with pytest.raises(packscan.PackscanError) as e:
        t.count("x >")
    assert e.value.status == "PS_ERR_INVALID_ARGUMENT"
    with pytest.raises(packscan.PackscanError, match="is NaN"):
        packscan.Table(pa.table({"f": [1.0, float("nan")]}), context=context)
    assert packscan.Table(pa.table({"f": [1.0, float("nan")]}), context=context, nan_as_null=True).count(
        "f IS NULL") == 1
    with pytest.raises(packscan.PackscanError, match="not a type packscan holds") as e:
        packscan.Table(pa.table({"l": pa.array([[1], [2]])}), context=context)
    assert e.value.status == "PS_ERR_UNSUPPORTED"
    with pytest.raises(packscan.PackscanError, match="decimal256"):
        packscan.Table(pa.table({"d": pa.array([decimal.Decimal(1)], pa.decimal256(40, 0))}), context=context)
    with pytest.raises(packscan.PackscanError, match="does not fit"):
        packscan.Table(pa.table({"d": pa.array([decimal.Decimal(10**20)], pa.decimal128(38, 0))}), context=context)
    with pytest.raises(packscan.PackscanError, match="string column"):
        pa.record_batch(t.aggregate("s"))  # results are exported when consumed
    with pytest.raises(TypeError):
        packscan.Table(object(), context=context)
    with pytest.raises(KeyError):
        t["missing"]
    assert t.count("x > 0") == 3  # still usable


def test_backend_choice():
    assert "reference" in packscan.backends()
    ctx = packscan.Context("reference")
    assert ctx.backend == "reference"
    with pytest.raises(packscan.PackscanError) as e:
        packscan.Context("no-such-backend")
    assert "no-such-backend" in str(e.value)
    t = packscan.Table(sample(), backend="reference")
    assert t.context.backend == "reference"


def test_device_option():
    """device= reaches the backend: a device the backend does not have is
    PS_ERR_NO_DEVICE naming the index; a bad value is refused before."""
    assert packscan.Context("reference", device=0).backend == "reference"
    if "opencl" in packscan.backends() and "opencl" in BACKENDS:
        assert packscan.Context("opencl", device=0).backend == "opencl"
        with pytest.raises(packscan.PackscanError) as e:
            packscan.Context("opencl", device=99)
        assert e.value.status == "PS_ERR_NO_DEVICE" and "99" in str(e.value)
    for bad in (-1, "0", True, 1.0):
        with pytest.raises(ValueError, match="device"):
            packscan.Context("reference", device=bad)


def test_kernel_cache_dir_reaches_the_library(tmp_path):
    """The option travels in the struct the library reads (its size is the
    Python mirror's): a path that is a file is refused, naming the field."""
    ctx = packscan.Context("reference", kernel_cache_dir=str(tmp_path))
    assert ctx.backend == "reference"
    f = tmp_path / "not-a-dir"
    f.write_bytes(b"x")
    with pytest.raises(packscan.PackscanError) as e:
        packscan.Context("reference", kernel_cache_dir=str(f))
    assert "kernel_cache_dir" in str(e.value) and "not-a-dir" in str(e.value)
    assert f.read_bytes() == b"x"  # the user's file is untouched


def test_no_leak_across_round_trips():
    """10^4 round trips (import, filter, export, consume) leave the resident
    set where it was after the first thousand (a lost export or table of
    these 40 rows costs kilobytes a trip, tens of MB in all)."""
    ctx = packscan.Context("reference")
    tbl = pa.concat_tables([sample()] * 8)

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    def trip():
        t = packscan.Table(tbl, context=ctx)
        r = t.filter("x > 0 AND s IS NOT NULL")
        assert pa.table(r).num_rows == 16
        assert len(pa.array(r.row_ids())) == 16
        t.close()

    for _ in range(1000):
        trip()
    before = rss()
    for _ in range(10000):
        trip()
    grown = rss() - before
    assert grown < 8 << 20, f"resident set grew by {grown} bytes over 10^4 round trips"


def test_decimal_literals_exact(context):
    """Decimal literals from Python are exact (no double on the way): on a
    decimal(38, 2) column of values past 2^53 cents."""
    big = 9007199254740993  # 2^53 + 1: no double holds it
    tbl = pa.table({"p": pa.array([decimal.Decimal(big).scaleb(-2), decimal.Decimal(big - 1).scaleb(-2)],
                                  pa.decimal128(38, 2))})
    t = packscan.Table(tbl, context=context)
    assert pa.array(t.filter(t["p"] == decimal.Decimal(big).scaleb(-2)).row_ids()).to_pylist() == [0]
    assert t.count(t["p"] > decimal.Decimal(big - 1).scaleb(-2)) == 1
    assert t.count(t["p"] == decimal.Decimal("1.005")) == 0


def test_integer_literals_past_64_bits(context):
    """Python integers past int64/uint64 compare by value, as SQL and
    ps_literal_parse read them (an exact DECIMAL of scale 0), never after
    ctypes keeps their low 64 bits: every operator, both signs, on integer,
    unsigned, float and decimal columns, against plain Python. Past 38
    digits they are refused, naming the value."""
    import operator
    edges = [2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**64 + 1, 2**64 + 2, 2**70, 10**38 - 1,
             -(2**63), -(2**63) - 1, -(2**64) + 1, -(2**64) - 1, -(2**70), -(10**38) + 1]
    columns = [
        (pa.int64(), [1, 2, None, -5, 2**62, -(2**63), 2**63 - 1]),
        (pa.uint64(), [0, 1, 2**64 - 1, None, 7, 2**63]),
        (pa.int8(), [1, -128, None, 127]),
        (pa.float64(), [1.5, None, -2.25]),
        (pa.decimal128(10, 2), [decimal.Decimal("1.25"), None, decimal.Decimal("-3.50")]),
    ]
    ops = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
    for typ, vals in columns:
        t = packscan.Table(pa.table({"x": pa.array(vals, typ)}), context=context)
        x = t["x"]

        def want(pred):
            return sum(1 for a in vals if a is not None and pred(a))

        for v in edges:
            for op in ops:
                assert t.count(op(x, v)) == want(lambda a: op(a, v)), (typ, op.__name__, v)
            assert t.count(x.isin([v, 1])) == want(lambda a: a in (v, 1)), (typ, "isin", v)
            assert t.count(x.isin([v])) == want(lambda a: a == v), (typ, "isin", v)
            for lo, hi in [(v, min(v + 5, 10**38 - 1)), (-abs(v), abs(v)), (min(v, 0), max(v, 0))]:
                assert t.count(x.between(lo, hi)) == want(lambda a: lo <= a <= hi), (typ, "between", lo, hi)
    t = packscan.Table(pa.table({"x": [1, 2]}), context=context)
    for v in [10**38, -(10**38), 2**200]:
        for pred in [t["x"] == v, t["x"].isin([1, v]), t["x"].between(0, v)]:
            with pytest.raises(packscan.PackscanError, match=str(v)):
                t.count(pred)


def test_struct_array_with_null_rows(context):
    """A struct array's own null rows are null in every column (as
    pa.RecordBatch.from_struct_array reads them), sliced too."""
    arr = pa.StructArray.from_arrays([pa.array([1, 2, 3, 4]), pa.array(["a", "b", None, "d"])], names=["x", "s"],
                                     mask=pa.array([False, True, False, False]))
    for a in [arr, arr.slice(1)]:
        t = packscan.Table(a, context=context)
        want = pa.table(pa.RecordBatch.from_struct_array(a))
        every = t.filter(t["x"].is_not_null() | t["x"].is_null())
        assert pa.table(every).to_pylist() == want.to_pylist()
        assert t.count(t["x"].is_null()) == want["x"].null_count == 1
        assert t.count(t["s"].is_null()) == want["s"].null_count == 2


def test_streamed_results(context, rng):
    """to_batches / reader give the rows to_arrow gives, in batches of the
    size asked, made one at a time; past STREAM_BATCH_ROWS the Arrow stream
    interface streams them; DuckDB and polars read the stream."""
    n = 3000 + rng.randrange(100)
    data = pa.table({"x": pa.array([rng.randrange(-50, 50) if rng.random() > 0.1 else None for _ in range(n)]),
                     "s": pa.array([rng.choice(["a", "bb", None, "ccc"]) for _ in range(n)]),
                     "d": pa.array([decimal.Decimal(rng.randrange(-10**6, 10**6)).scaleb(-2) for _ in range(n)],
                                   pa.decimal128(12, 2))})
    t = packscan.Table(data, context=context)
    seed = f"PACKSCAN_SEED={rng.seed_value}"
    for result in (t.filter("x > 3 OR s = 'a'"), t.filter(None), t.filter("x > 1000")):
        whole = pa.table(result.to_arrow())
        for size in (1, 7, 1000, 10**7):
            batches = list(result.to_batches(size))
            assert all(b.num_rows == size for b in batches[:-1]) and all(0 < b.num_rows <= size for b in batches), seed
            assert len(batches) == -(-whole.num_rows // size), seed
            got = pa.Table.from_batches(batches, schema=whole.schema) if batches else whole.slice(0, 0)
            assert got.equals(whole), seed
        r = result.reader(500)
        assert r.schema == whole.schema
        assert r.read_all().equals(whole), seed
        r = result.reader(333)
        assert duckdb.sql("SELECT COUNT(*), SUM(d) FROM r").fetchall() == \
            duckdb.sql("SELECT COUNT(*), SUM(d) FROM whole").fetchall(), seed
        if whole.num_rows:  # polars's from_arrow refuses a stream of no batches
            assert pl.from_arrow(result.reader(777)).equals(pl.from_arrow(whole)), seed
    it = t.filter(None).to_batches(1000)
    assert next(it).num_rows == 1000  # lazily: one batch made
    old = packscan.STREAM_BATCH_ROWS
    try:
        packscan.STREAM_BATCH_ROWS = 1024
        stream = pa.RecordBatchReader.from_stream(t.filter("x > -100"))
        batches = list(stream)
        assert len(batches) > 1 and all(b.num_rows <= 1024 for b in batches), seed
        assert pa.Table.from_batches(batches).equals(pa.table(t.filter("x > -100").to_arrow())), seed
    finally:
        packscan.STREAM_BATCH_ROWS = old
    with pytest.raises(ValueError, match="batch_rows"):
        next(t.filter(None).to_batches(0))
