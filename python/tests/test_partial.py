"""Table.sql_partial and packscan.merge_partials: random partitionings of
random tables (empty partitions, all-null partitions, groups that live in one
partition only, rows dealt at random), each partition imported on its own
(its own dictionaries), partials through pickle and Arrow IPC, merged and
compared with Table.sql on the whole table exactly (schema and values) and
with DuckDB; sums that overflow only after the merge, or only before it;
partials that must be refused."""

import io
import pickle

import duckdb
import pyarrow as pa
import pytest

import packscan
from test_duckdb import random_table

FLOAT_SCALE = 3  # random_table's floats are multiples of 1/8

STATEMENTS = [
    "SELECT s, COUNT(*) AS n, SUM(dec) AS sd, MIN(dec), MAX(i32) AS hi, AVG(dec) AS av, MIN(d) FROM t GROUP BY s",
    "SELECT cat, i32, COUNT(u16), SUM(i32 * 2 + dec), MIN(s) AS lo, MAX(s) AS hi FROM t "
    "WHERE dec BETWEEN -2000.00 AND 5000 OR s IS NULL GROUP BY cat, i32",
    "SELECT d, MAX(cat), MIN(cat), SUM(f), AVG(f), MAX(f) FROM t WHERE i32 > -20 GROUP BY d",
    "SELECT i32, COUNT(*), SUM(f), MIN(f), SUM(u16) FROM t GROUP BY i32",
    "SELECT COUNT(*), SUM(dec), AVG(i32), MIN(s), MAX(cat), SUM(f) FROM t WHERE s <> 'zz'",
]


def all_null_rows(schema, n):
    return pa.table({f.name: pa.nulls(n, f.type) if f.name != "id" else pa.array(range(n), f.type)
                     for f in schema})


def partitions(rng, table):
    """Row subsets of table that together hold each row once, by one of
    several ways of cutting, empty ones included."""
    n = table.num_rows
    how = rng.choice(["cuts", "dealt", "by key", "one"])
    if how == "one":
        return how, [table]
    k = rng.randrange(2, 7)
    if how == "cuts":  # contiguous, repeated cut points give empty partitions
        cuts = sorted([0, n] + [rng.randrange(0, n + 1) for _ in range(k - 1)])
        return how, [table.slice(a, b - a) for a, b in zip(cuts, cuts[1:])]
    if how == "dealt":  # rows dealt at random
        owner = [rng.randrange(k) for _ in range(n)]
        return how, [table.take(pa.array([i for i in range(n) if owner[i] == p], pa.int64())) for p in range(k)]
    # by key: every group of s in one partition only
    words = sorted({w for w in table.column("s").to_pylist() if w is not None})
    home = {w: rng.randrange(k) for w in words}
    s = table.column("s").to_pylist()
    return how, [table.take(pa.array([i for i in range(n) if home.get(s[i], 0) == p], pa.int64())) for p in range(k)]


def roundtrip(rng, partial):
    """A partial as another process gets it."""
    how = rng.randrange(3)
    if how == 0:
        return pickle.loads(pickle.dumps(partial))
    if how == 1:
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, partial.schema) as w:
            w.write_batch(partial)
        return pa.ipc.open_stream(sink.getvalue()).read_all()
    return partial


@pytest.mark.parametrize("statement", STATEMENTS)
def test_merge_is_the_whole_tables_result(context, rng, statement):
    for case in range(6):
        n = rng.choice([0, 1, 40, 300, 1500])
        table = random_table(rng, n)
        if rng.random() < 0.4:  # a block of rows null in every column, often a partition of its own
            table = pa.concat_tables([table, all_null_rows(table.schema, rng.randrange(1, 40))])
        how, parts = partitions(rng, table)
        whole = pa.table(packscan.Table(table, context=context, float_scale=FLOAT_SCALE).sql(statement))
        partials = [roundtrip(rng, packscan.Table(p, context=context, float_scale=FLOAT_SCALE).sql_partial(statement))
                    for p in parts]
        rng.shuffle(partials)
        merged = pa.table(packscan.merge_partials(partials))
        where = f"PACKSCAN_SEED={rng.seed_value} case {case}: {how}, {[p.num_rows for p in parts]} rows"
        assert merged.schema == whole.schema, where
        assert merged.equals(whole), f"{where}\n{merged.to_pylist()}\n!=\n{whole.to_pylist()}"


def tree_merge(rng, partials):
    """Merges partials in a random tree: random groups merged into partials
    (partial=True), each through a random round trip, until one group is
    left for the final merge."""
    level = list(partials)
    while len(level) > 1 and rng.random() < 0.8:
        rng.shuffle(level)
        cut = sorted(rng.sample(range(1, len(level)), rng.randrange(0, len(level) - 1)))
        groups = [level[a:b] for a, b in zip([0] + cut, cut + [len(level)])]
        level = [roundtrip(rng, packscan.merge_partials(g, partial=True)) if len(g) > 1 or rng.random() < 0.5
                 else g[0] for g in groups]
    return packscan.merge_partials(level)


@pytest.mark.parametrize("statement", STATEMENTS)
def test_tree_of_merges_is_the_whole_tables_result(context, rng, statement):
    for case in range(4):
        table = random_table(rng, rng.choice([0, 40, 300, 1500]))
        if rng.random() < 0.4:
            table = pa.concat_tables([table, all_null_rows(table.schema, rng.randrange(1, 40))])
        how, parts = partitions(rng, table)
        whole = pa.table(packscan.Table(table, context=context, float_scale=FLOAT_SCALE).sql(statement))
        partials = [packscan.Table(p, context=context, float_scale=FLOAT_SCALE).sql_partial(statement) for p in parts]
        merged = pa.table(tree_merge(rng, partials))
        where = f"PACKSCAN_SEED={rng.seed_value} case {case}: {how}, {[p.num_rows for p in parts]} rows"
        assert merged.equals(whole), f"{where}\n{merged.to_pylist()}\n!=\n{whole.to_pylist()}"


def test_tree_of_merges_overflow_and_strings(context):
    """A sum past 38 digits in an inner merge stays in its state; string MIN /
    MAX keep their strings through inner merges of other dictionaries."""
    big_ = NINE * NINE
    table = big([big_, big_, -big_, NINE]).append_column("k", pa.array([1, 1, 1, 2]))
    table = table.append_column("s", pa.array(["m", "b", "z", None]))
    statement = "SELECT k, SUM(a * b) AS s, MIN(s), MAX(s) FROM t GROUP BY k"
    whole = pa.table(packscan.Table(table, context=context).sql(statement))
    parts = [packscan.Table(table.slice(i, 1), context=context).sql_partial(statement) for i in range(4)]
    inner = packscan.merge_partials(parts[:2], partial=True)  # 1.62e38: past 38 digits, no error yet
    assert pa.table(packscan.merge_partials([inner] + parts[2:])).equals(whole)
    assert pa.table(packscan.merge_partials([parts[3], packscan.merge_partials(parts[1:3], partial=True),
                                             parts[0]])).equals(whole)
    with pytest.raises(packscan.PackscanError) as e:
        packscan.merge_partials(parts[:2])
    assert e.value.status == "PS_ERR_OVERFLOW"


def test_merge_matches_duckdb(context, rng):
    data = random_table(rng, 2000)
    _, parts = partitions(rng, data)
    got = packscan.merge_partials([packscan.Table(p, context=context).sql_partial(
        "SELECT cat, s, COUNT(*), SUM(dec), MIN(s), MAX(d), MIN(i32) FROM t GROUP BY cat, s") for p in parts])
    want = duckdb.sql("SELECT cat, s, COUNT(*), SUM(dec), MIN(s), MAX(d), MIN(i32) FROM data GROUP BY cat, s "
                      "ORDER BY cat NULLS LAST, s NULLS LAST").fetchall()
    rows = [tuple(r.values()) for r in pa.table(got).to_pylist()]
    assert rows == [tuple(r) for r in want], f"PACKSCAN_SEED={rng.seed_value}"


NINE = 9 * 10**18  # NINE * NINE (8.1e37) fits 38 digits, twice that does not


def big(v):
    """Rows whose SUM(a * b) is v: a = NINE, b = v / NINE."""
    return pa.table({"a": pa.array([None if x is None else NINE for x in v], pa.int64()),
                     "b": pa.array([None if x is None else x // NINE for x in v], pa.int64())})


def test_overflow_only_after_the_merge(context):
    big_ = NINE * NINE
    table = big([NINE, big_, big_, -NINE, None]).append_column("k", pa.array([1, 2, 2, 1, 2]))
    statement = "SELECT k, SUM(a * b) AS s, AVG(b) AS m FROM t GROUP BY k"
    with pytest.raises(packscan.PackscanError) as whole:
        packscan.Table(table, context=context).sql(statement)
    assert whole.value.status == "PS_ERR_OVERFLOW"
    parts = [table.slice(0, 2), table.slice(2)]  # group 2: 8.1e37 in each
    for p in parts:  # each partition's sums fit 38 digits
        packscan.Table(p, context=context).sql(statement)
    partials = [packscan.Table(p, context=context).sql_partial(statement) for p in parts]
    assert all(pa.table(p).num_rows == 2 for p in partials)
    with pytest.raises(packscan.PackscanError) as merged:
        packscan.merge_partials(partials)
    assert merged.value.status == "PS_ERR_OVERFLOW"
    assert str(merged.value) == str(whole.value)


def test_overflow_only_before_the_merge(context):
    big_ = NINE * NINE
    table = big([big_, big_, -big_, NINE]).append_column("k", pa.array([1, 1, 1, 2]))
    statement = "SELECT k, SUM(a * b) AS s, AVG(b) AS m, MAX(a * b) FROM t GROUP BY k"
    whole = pa.table(packscan.Table(table, context=context).sql(statement))
    assert whole.column("s").to_pylist() == [big_, NINE]
    # The first partition's sum, 1.62e38, does not fit 38 digits: no error there.
    partials = [packscan.Table(table.slice(0, 2), context=context).sql_partial(statement),
                packscan.Table(table.slice(2), context=context).sql_partial(statement)]
    assert pa.table(packscan.merge_partials(partials)).equals(whole)
    assert pa.table(packscan.merge_partials(partials[::-1])).equals(whole)


def test_string_min_max_across_dictionaries(context):
    """Each partition's dictionary numbers its own strings: index 0 is "m" in
    one and "a" in the other; merged by index, MIN would be either."""
    a = pa.table({"k": [1, 1, 2], "s": ["m", "z", "q"]})
    b = pa.table({"k": [1, 2, 2], "s": ["a", "zz", None]})
    statement = "SELECT k, MIN(s), MAX(s), COUNT(s) FROM t GROUP BY k"
    whole = pa.table(packscan.Table(pa.concat_tables([a, b]), context=context).sql(statement))
    assert whole.to_pylist()[0]["MIN(s)"] == "a" and whole.to_pylist()[1]["MAX(s)"] == "zz"
    for order in ([a, b], [b, a]):
        partials = [packscan.Table(p, context=context).sql_partial(statement) for p in order]
        assert pa.table(packscan.merge_partials(partials)).equals(whole)


def test_refused(context):
    t = packscan.Table(random_table(__import__("random").Random(7), 50), context=context, float_scale=FLOAT_SCALE)
    one = t.sql_partial("SELECT s, SUM(dec) FROM t GROUP BY s")
    other = t.sql_partial("SELECT s, SUM(i32) FROM t GROUP BY s")
    with pytest.raises(packscan.PackscanError, match="another statement") as e:
        packscan.merge_partials([one, other])
    assert e.value.status == "PS_ERR_INVALID_ARGUMENT"
    with pytest.raises(packscan.PackscanError, match="not a result of Table.sql_partial"):
        packscan.merge_partials([one, pa.table({"x": [1]})])
    with pytest.raises(ValueError):
        packscan.merge_partials([])
    # A float column imported at different scales: refused, never summed at two scales.
    p1 = packscan.Table(pa.table({"f": [0.5]}), context=context).sql_partial("SELECT SUM(f) FROM t")
    p2 = packscan.Table(pa.table({"f": [0.25]}), context=context).sql_partial("SELECT SUM(f) FROM t")
    with pytest.raises(packscan.PackscanError, match="float_scale"):
        packscan.merge_partials([p1, p2])
    # The statement's own errors are sql()'s.
    with pytest.raises(packscan.PackscanError, match="error at column"):
        t.sql_partial("SELECT nope FROM t")


def test_lossless_float_partials(context, rng):
    """SUM, AVG, MIN and MAX of a float column no decimal scale holds (a
    lossless mapping), over partitions of different magnitudes (each sums in
    its own unit): merged, one merge and a tree, equal to the whole table's."""
    n = 2000
    scales = [1.0, 2.0 ** -20, 2.0 ** 20]
    part = [rng.randrange(3) for _ in range(n)]
    x = [None if rng.random() < 0.1 else rng.random() * scales[part[i]] * (-1 if rng.random() < 0.3 else 1)
         for i in range(n)]
    table = pa.table({"k": pa.array([rng.randrange(3) for _ in range(n)], pa.int32()), "x": pa.array(x, pa.float64())})
    parts = [table.take(pa.array([i for i in range(n) if part[i] == p], pa.int64())) for p in range(3)]
    for statement in ["SELECT COUNT(*), SUM(x), AVG(x), MIN(x), MAX(x) FROM t",
                      "SELECT k, COUNT(x), SUM(x) AS s, AVG(x), MIN(x), MAX(x) FROM t GROUP BY k"]:
        whole = pa.table(packscan.Table(table, context=context).sql(statement))
        partials = [roundtrip(rng, packscan.Table(p, context=context).sql_partial(statement)) for p in parts]
        for merged in (pa.table(packscan.merge_partials(partials)), pa.table(tree_merge(rng, partials))):
            assert merged.equals(whole), f"PACKSCAN_SEED={rng.seed_value}\n{merged.to_pylist()}\n!=\n{whole.to_pylist()}"


def test_lossless_partitions_of_any_values(context, rng):
    """float_scale="lossless": partitions whose values a decimal scale holds,
    an empty one and an all-null one still encode like the others (a lossless
    mapping), so their partials merge into the whole table's result."""
    n = 900
    x = [rng.choice([0.5, 1.25, -3.75, rng.random() * 100, None]) for _ in range(n)]
    table = pa.table({"k": pa.array([rng.randrange(3) for _ in range(n)], pa.int32()), "x": pa.array(x, pa.float64())})
    parts = [table.slice(0, 300), table.slice(300, 0), pa.table({"k": pa.array([1, 2], pa.int32()),
                                                                 "x": pa.array([None, None], pa.float64())}),
             pa.table({"k": pa.array([0, 1], pa.int32()), "x": pa.array([0.5, 1.25], pa.float64())}),
             table.slice(300)]
    whole_table = pa.concat_tables(parts)
    for statement in ["SELECT COUNT(*), SUM(x), AVG(x), MIN(x), MAX(x) FROM t",
                      "SELECT k, COUNT(x), SUM(x) AS s, MIN(x), MAX(x) FROM t GROUP BY k"]:
        whole = pa.table(packscan.Table(whole_table, context=context, float_scale="lossless").sql(statement))
        partials = [packscan.Table(p, context=context, float_scale="lossless").sql_partial(statement) for p in parts]
        merged = pa.table(packscan.merge_partials(partials))
        assert merged.equals(whole), f"{statement}\n{merged.to_pylist()}\n!=\n{whole.to_pylist()}"
    with pytest.raises(ValueError):
        packscan.Table(table, context=context, float_scale="exact")
