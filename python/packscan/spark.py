"""packscan over Spark: one SELECT statement on a Spark DataFrame.

Each partition runs on its executor through ``DataFrame.mapInArrow``
(pyspark 3.3 or later): its Arrow record batches become a packscan Table
there, ``Table.sql_partial`` gives the partition's partial, and the partial
leaves the executor as Arrow IPC bytes in one binary column (mapInArrow's
output schema is fixed, a partial's depends on the statement). The driver
collects them and ``packscan.merge_partials`` makes the Frame ``Table.sql``
would give on all the rows at once, bit for bit::

    import packscan.spark
    df = spark.read.parquet("data/")
    frame = packscan.spark.sql(df, "SELECT s, SUM(x) FROM t GROUP BY s")
    frame.to_pandas()

pyspark is optional: this module imports it when called, and the rest of
packscan never does. Executors need packscan (and pyarrow) installed too.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Union

import packscan
from packscan.dask import partial_of_table

__all__ = ["sql", "partials", "partial_to_ipc", "partial_of_ipc"]

_COLUMN = "packscan_partial"


def partial_to_ipc(partial: Any) -> bytes:
    """A partial (the RecordBatch of Table.sql_partial) as one Arrow IPC
    stream; its schema's metadata, which the merge needs, goes with it."""
    import pyarrow as pa
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, partial.schema) as writer:
        writer.write_batch(partial)
    return sink.getvalue().to_pybytes()


def partial_of_ipc(data: Any) -> Any:
    """The partial that partial_to_ipc wrote (bytes, bytearray or memoryview)."""
    import pyarrow as pa
    return pa.ipc.open_stream(pa.py_buffer(bytes(data))).read_next_batch()


def partials(df: Any, statement: str, *, backend: str = "auto", device: Optional[int] = None,
             kernel_cache_dir: Optional[str] = None, float_scale: Optional[Union[int, str]] = None,
             nan_as_null: bool = False) -> List[Any]:
    """The partials of df's non-empty partitions, computed on the executors
    and collected to the driver (an empty partition sends none: it would add
    nothing to the merge)."""
    import pyarrow as pa

    opts = dict(backend=backend, float_scale=float_scale, nan_as_null=nan_as_null, device=device,
                kernel_cache_dir=kernel_cache_dir)

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        batches = [b for b in batches if b.num_rows > 0]
        if not batches:
            return
        table = pa.Table.from_batches(batches)
        blob = partial_to_ipc(partial_of_table(table, statement, **opts))
        yield pa.RecordBatch.from_arrays([pa.array([blob], pa.binary())], names=[_COLUMN])

    rows = df.mapInArrow(run, f"{_COLUMN} binary").collect()
    return [partial_of_ipc(row[0]) for row in rows]


def sql(df: Any, statement: str, *, backend: str = "auto", device: Optional[int] = None,
        kernel_cache_dir: Optional[str] = None, float_scale: Optional[Union[int, str]] = None, nan_as_null: bool = False,
        merge_context: Optional[packscan.Context] = None) -> packscan.Frame:
    """Runs a SELECT statement of ``Table.sql`` over a Spark DataFrame, one
    partition per task, and returns the merged Frame (what ``Table.sql``
    gives on all the rows at once; errors too: a sum that overflows only once
    merged is PackscanError PS_ERR_OVERFLOW).

    Spark hands each partition to Python as Arrow (decimals, dates and
    strings keep their types). Select the columns the statement reads first
    (``df.select(...)``) so that Spark sends no others. ``backend``: each
    executor's ("auto": by the partition's rows, as Table); a Python worker
    makes one context per backend and reuses it for its next partitions.
    ``device``: each executor's device (packscan.Context's; None: the first
    it sees — Spark's GPU scheduling hands an executor its GPU through
    ``CUDA_VISIBLE_DEVICES`` or its resources, pass that address here).
    ``kernel_cache_dir``: the executors' on-disk kernel cache, shared by the
    Python workers of a node.
    ``float_scale``: float columns' decimal scale, the same in every
    partition (required for SUM / AVG / MIN / MAX or keys of a float column
    whose partitions would find different scales), or ``"lossless"`` for
    doubles that no decimal scale holds. A DataFrame without rows
    gives Table.sql's answer on an empty table of its schema."""
    got = partials(df, statement, backend=backend, device=device, kernel_cache_dir=kernel_cache_dir,
                   float_scale=float_scale, nan_as_null=nan_as_null)
    if not got:
        from pyspark.sql.pandas.types import to_arrow_schema
        empty = to_arrow_schema(df.schema).empty_table()
        got = [partial_of_table(empty, statement, **dict(backend=backend, float_scale=float_scale,
                                                         nan_as_null=nan_as_null))]
    return packscan.merge_partials(got, context=merge_context)
