"""packscan.spark.sql on a local Spark (local[2], two executor threads):
partitions dealt by hash of a key (some empty, groups in one partition only)
and round robin, merged into a Frame that equals Table.sql on all the rows at
once exactly, and DuckDB's answer; an empty DataFrame; a sum that overflows
only once merged. Skipped where pyspark or a Java runtime is missing (CI does
not install pyspark; ci/spark.sh does and runs this file)."""

import os
import shutil
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import packscan
from test_duckdb import MERGE_STATEMENT as STATEMENT
from test_duckdb import assert_merged_matches_duckdb, random_table

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("no Java runtime for Spark", allow_module_level=True)
import packscan.spark  # noqa: E402

FLOAT_SCALE = 3


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession
    # Executors' Python is this one (packscan installed), as the driver's.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    s = (SparkSession.builder.master("local[2]").appName("packscan-test")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
         .config("spark.sql.execution.arrow.maxRecordsPerBatch", "256").getOrCreate())
    yield s
    s.stop()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    import random
    from conftest import SEED, case_seed
    r = random.Random(case_seed("test_spark"))
    # The types Spark gives back as Arrow: no unsigned integers, strings plain.
    whole = pa.concat_tables([random_table(r, n) for n in (900, 1300)]).drop_columns(["u16"])
    whole = whole.set_column(whole.schema.get_field_index("cat"), "cat", whole["cat"].cast(pa.string()))
    root = tmp_path_factory.mktemp("parquet")
    pq.write_table(whole, os.path.join(root, "part-0.parquet"))
    return str(root), whole, SEED


def check(got, whole, seed):
    assert isinstance(got, packscan.Frame)
    want = pa.table(packscan.Table(whole, float_scale=FLOAT_SCALE).sql(STATEMENT))
    assert pa.table(got).equals(want), f"PACKSCAN_SEED={seed}"
    assert_merged_matches_duckdb(got, whole, seed)


@pytest.mark.parametrize("deal", ["hash", "round_robin"])
def test_partitions(spark, dataset, deal):
    root, whole, seed = dataset
    df = spark.read.parquet(root)
    # Hash of cat into 6 partitions: 7 values and NULL, so groups sit in one
    # partition each and some partitions may be empty; round robin deals
    # every group's rows over all 5.
    df = df.repartition(6, "cat") if deal == "hash" else df.repartition(5)
    assert df.rdd.getNumPartitions() > 1
    parts = packscan.spark.partials(df, STATEMENT, float_scale=FLOAT_SCALE)
    assert 1 < len(parts) <= df.rdd.getNumPartitions(), f"PACKSCAN_SEED={seed}"
    check(packscan.merge_partials(parts), whole, seed)
    check(packscan.spark.sql(df, STATEMENT, float_scale=FLOAT_SCALE), whole, seed)


def test_empty_dataframe(spark, dataset):
    root, whole, seed = dataset
    df = spark.read.parquet(root).where("false")
    got = packscan.spark.sql(df, STATEMENT, float_scale=FLOAT_SCALE)
    want = packscan.Table(whole.slice(0, 0), float_scale=FLOAT_SCALE).sql(STATEMENT)
    assert pa.table(got).equals(pa.table(want))
    got = packscan.spark.sql(df, "SELECT COUNT(*) AS n, SUM(dec) AS sd FROM t")
    assert pa.table(got).to_pylist() == [{"n": 0, "sd": None}]


def test_overflow_after_merge(spark, tmp_path):
    nine = 9 * 10**18  # nine * nine fits 38 digits, twice that does not
    t = pa.table({"k": pa.array([1, 2, 2, 1], pa.int64()), "a": pa.array([nine] * 4, pa.int64()),
                  "b": pa.array([1, nine, nine, 2], pa.int64())})
    df = spark.createDataFrame(t.to_pandas()).repartition(2)
    got = packscan.spark.sql(df, "SELECT k, SUM(b), COUNT(*) FROM t GROUP BY k")
    assert pa.table(got).equals(pa.table(packscan.Table(t).sql("SELECT k, SUM(b), COUNT(*) FROM t GROUP BY k")))
    with pytest.raises(packscan.PackscanError) as e:
        packscan.spark.sql(df, "SELECT k, SUM(a * b) FROM t GROUP BY k")
    assert e.value.status == "PS_ERR_OVERFLOW"
