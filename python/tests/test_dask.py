"""packscan.dask.sql on a distributed.LocalCluster of two worker processes,
over a small Parquet data set (files of their own dictionaries, an empty one,
one of rows null in every column): the merged Frame equals Table.sql on all
the rows at once exactly, and DuckDB's answer over the same files. Skipped
only where dask[distributed] is not installed."""

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import packscan
from test_duckdb import MERGE_STATEMENT as STATEMENT
from test_duckdb import assert_merged_matches_duckdb, random_table

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
import packscan.dask  # noqa: E402

FLOAT_SCALE = 3


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    import random
    from conftest import SEED, case_seed
    r = random.Random(case_seed("test_dask"))
    root = tmp_path_factory.mktemp("parquet")
    tables = [random_table(r, n) for n in (700, 0, 300, 1200)]
    schema = tables[0].schema
    tables.append(pa.table({f.name: pa.nulls(25, f.type) for f in schema}))
    for i, t in enumerate(tables):
        pq.write_table(t.cast(schema), os.path.join(root, f"part-{i}.parquet"))
    return str(root), pa.concat_tables(tables), SEED




def test_parquet_files(client, dataset):
    root, whole, seed = dataset
    got = packscan.dask.sql(root, STATEMENT, float_scale=FLOAT_SCALE)
    assert isinstance(got, packscan.Frame)
    want = pa.table(packscan.Table(whole, float_scale=FLOAT_SCALE).sql(STATEMENT))
    assert pa.table(got).equals(want), f"PACKSCAN_SEED={seed}"
    # Five files, and each worker process made one context (one thread each) and reused it.
    pools = client.run(lambda: {k: len(v) for k, v in packscan.dask._idle.items()})
    assert len(pools) == 2 and all(set(p.values()) <= {1} for p in pools.values()), pools
    assert sum(sum(p.values()) for p in pools.values()) >= 1, pools
    assert_merged_matches_duckdb(got, f"read_parquet('{root}/*.parquet')", seed)


def test_dask_dataframe_and_overflow(client, tmp_path):
    nine = 9 * 10**18  # nine * nine fits 38 digits, twice that does not
    t = pa.table({"k": [1, 2, 2, 1], "a": pa.array([nine] * 4, pa.int64()), "b": pa.array([1, nine, nine, 2])})
    pq.write_table(t.slice(0, 2), tmp_path / "a.parquet")
    pq.write_table(t.slice(2), tmp_path / "b.parquet")
    ddf = dd.read_parquet(str(tmp_path), dtype_backend="pyarrow")
    got = packscan.dask.sql(ddf, "SELECT k, SUM(b), COUNT(*) FROM t GROUP BY k")
    assert pa.table(got).equals(pa.table(packscan.Table(t).sql("SELECT k, SUM(b), COUNT(*) FROM t GROUP BY k")))
    with pytest.raises(packscan.PackscanError) as e:
        packscan.dask.sql(str(tmp_path), "SELECT k, SUM(a * b) FROM t GROUP BY k")
    assert e.value.status == "PS_ERR_OVERFLOW"


def test_tree_of_merges_and_device(client, dataset):
    """split_every=2: the five files' partials merged on the workers in a tree
    (five, three, two) before the client's merge; an explicit device."""
    root, whole, seed = dataset
    want = pa.table(packscan.Table(whole, float_scale=FLOAT_SCALE).sql(STATEMENT))
    got = packscan.dask.sql(root, STATEMENT, float_scale=FLOAT_SCALE, split_every=2, backend="reference", device=0)
    assert pa.table(got).equals(want), f"PACKSCAN_SEED={seed}"
    pools = client.run(lambda: list(packscan.dask._idle))
    assert any(("reference", 0, None) in keys for keys in pools.values()), pools
    with pytest.raises(ValueError, match="split_every"):
        packscan.dask.sql(root, STATEMENT, split_every=1)


def test_kernel_cache_dir_reaches_the_workers(client, dataset, tmp_path):
    """kernel_cache_dir= reaches each worker's context: a directory is used
    (contexts pooled by it), a path that is a file is refused there, naming
    the option, and the error comes back to the caller."""
    root, whole, seed = dataset
    got = packscan.dask.sql(root, STATEMENT, float_scale=FLOAT_SCALE, backend="reference",
                            kernel_cache_dir=str(tmp_path))
    assert pa.table(got).equals(pa.table(packscan.Table(whole, float_scale=FLOAT_SCALE).sql(STATEMENT))), \
        f"PACKSCAN_SEED={seed}"
    pools = client.run(lambda: list(packscan.dask._idle))
    assert any(("reference", None, str(tmp_path)) in keys for keys in pools.values()), pools
    f = tmp_path / "a-file"
    f.write_bytes(b"x")
    with pytest.raises(packscan.PackscanError) as e:
        packscan.dask.sql(root, STATEMENT, backend="reference", kernel_cache_dir=str(f))
    assert "kernel_cache_dir" in str(e.value) and f.read_bytes() == b"x"


def test_lossless_doubles(client, tmp_path):
    """Doubles that no decimal scale holds, float_scale="lossless": files of
    different magnitudes, an empty one, one all null and one of decimals
    merge into Table.sql's answer on all the rows at once, bit for bit; the
    sums agree with DuckDB's to rounding; GROUP BY the doubles themselves
    (a hashed plan over wide codes) too."""
    import random
    from conftest import case_seed
    r = random.Random(case_seed("test_dask_lossless"))
    scales = [1.0, 2.0 ** -30, 2.0 ** 30]
    tables = []
    for i in range(3):
        n = 400
        tables.append(pa.table({"k": pa.array([r.randrange(4) for _ in range(n)], pa.int32()),
                                "x": pa.array([None if r.random() < 0.1 else r.uniform(-1, 1) * scales[i]
                                               for _ in range(n)], pa.float64())}))
    schema = tables[0].schema
    tables += [pa.table({"k": pa.array([], pa.int32()), "x": pa.array([], pa.float64())}),
               pa.table({"k": pa.array([1, 2], pa.int32()), "x": pa.nulls(2, pa.float64())}),
               pa.table({"k": pa.array([0, 3], pa.int32()), "x": pa.array([0.5, 1.25], pa.float64())})]
    for i, t in enumerate(tables):
        pq.write_table(t.cast(schema), tmp_path / f"part-{i}.parquet")
    whole = pa.concat_tables(tables)
    for statement in ["SELECT k, COUNT(*), SUM(x) AS s, AVG(x), MIN(x), MAX(x) FROM t GROUP BY k",
                      "SELECT x, COUNT(*) AS n FROM t GROUP BY x"]:
        got = pa.table(packscan.dask.sql(str(tmp_path), statement, float_scale="lossless"))
        want = pa.table(packscan.Table(whole, float_scale="lossless").sql(statement))
        assert got.equals(want), statement
    import duckdb
    ref = duckdb.sql(f"SELECT k, SUM(x) FROM read_parquet('{tmp_path}/*.parquet') GROUP BY k ORDER BY k").fetchall()
    got = pa.table(packscan.dask.sql(str(tmp_path), "SELECT k, SUM(x) AS s FROM t GROUP BY k",
                                     float_scale="lossless")).to_pylist()
    assert [g["k"] for g in got] == [w[0] for w in ref]
    for g, w in zip(got, ref):
        assert abs(float(g["s"]) - w[1]) <= 1e-12 * max(1.0, abs(w[1])), (g, w)
