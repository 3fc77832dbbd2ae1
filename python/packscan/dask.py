"""packscan over Dask: one SELECT statement on a partitioned data set.

Each partition is read as Arrow on a worker, imported into packscan there and
run with ``Table.sql_partial``; the partials (small record batches, one row
per group) come back to the client and ``packscan.merge_partials`` makes the
Frame ``Table.sql`` would give on the whole data set, bit for bit::

    from distributed import Client
    import packscan.dask
    client = Client()                   # or any scheduler dask.compute uses
    frame = packscan.dask.sql("data/", "SELECT s, SUM(x) FROM t GROUP BY s")
    frame.to_pandas()

Dask is optional: this module imports it when called, and the rest of
packscan never does. Workers need packscan installed too.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import packscan

__all__ = ["sql", "partial_of_table", "partial_of_parquet"]

# Contexts of this process, by backend, idle ones only. A task takes one (or
# makes one) and gives it back: a worker process starts each backend once
# per thread that runs tasks at the same time, never for every partition, and
# no context is used by two threads at once (packscan.Context's rule).
_idle: Dict[Tuple[str, Optional[int], Optional[str]], List[packscan.Context]] = {}
_idle_lock = threading.Lock()


def _take_context(backend: str, device: Optional[int] = None,
                  kernel_cache_dir: Optional[str] = None) -> packscan.Context:
    with _idle_lock:
        pool = _idle.get((backend, device, kernel_cache_dir))
        if pool:
            return pool.pop()
    return packscan.Context(backend, device=device, kernel_cache_dir=kernel_cache_dir)


def _give_context(backend: str, ctx: packscan.Context, device: Optional[int] = None,
                  kernel_cache_dir: Optional[str] = None) -> None:
    with _idle_lock:
        _idle.setdefault((backend, device, kernel_cache_dir), []).append(ctx)


def partial_of_table(data: Any, statement: str, backend: str = "auto", float_scale: Optional[Union[int, str]] = None,
                     nan_as_null: bool = False, device: Optional[int] = None,
                     kernel_cache_dir: Optional[str] = None) -> Any:
    """One partition's partial: data (a pyarrow Table, a pandas DataFrame,
    anything packscan.Table takes) imported on this process's context for
    ``backend``, ``device`` and ``kernel_cache_dir`` (packscan.Context's) and
    run with Table.sql_partial."""
    if type(data).__module__.startswith("pandas"):
        import pyarrow as pa
        data = pa.Table.from_pandas(data, preserve_index=False)
    rows = packscan._rows_of(data)
    name = packscan.auto_backend(rows) if backend == "auto" else backend
    ctx = _take_context(name, device, kernel_cache_dir)
    try:
        with packscan.Table(data, context=ctx, float_scale=float_scale, nan_as_null=nan_as_null) as t:
            return t.sql_partial(statement)
    finally:
        _give_context(name, ctx, device, kernel_cache_dir)


def partial_of_parquet(path: str, statement: str, columns: Optional[Sequence[str]] = None, backend: str = "auto",
                       float_scale: Optional[Union[int, str]] = None, nan_as_null: bool = False,
                       device: Optional[int] = None, kernel_cache_dir: Optional[str] = None) -> Any:
    """One Parquet file's partial, read with pyarrow (its own Arrow types:
    decimals, dates, dictionaries) where this runs."""
    import pyarrow.parquet as pq
    table = pq.read_table(path, columns=list(columns) if columns is not None else None)
    return partial_of_table(table, statement, backend, float_scale, nan_as_null, device, kernel_cache_dir)


def _merge_to_partial(*partials: Any) -> Any:
    return packscan.merge_partials(partials, partial=True)


def _parquet_files(source: Any) -> List[str]:
    import pyarrow.dataset as ds
    paths = [os.fspath(p) for p in source] if isinstance(source, (list, tuple)) else os.fspath(source)
    return sorted(ds.dataset(paths, format="parquet").files)


def sql(source: Any, statement: str, *, columns: Optional[Sequence[str]] = None, backend: str = "auto",
        device: Optional[int] = None, kernel_cache_dir: Optional[str] = None, float_scale: Optional[Union[int, str]] = None,
        nan_as_null: bool = False, split_every: int = 8, merge_context: Optional[packscan.Context] = None,
        **compute_kwargs: Any) -> packscan.Frame:
    """Runs a SELECT statement of ``Table.sql`` over a partitioned data set
    with Dask and returns the merged Frame (what ``Table.sql`` gives on all
    the rows at once; errors too: a sum that overflows only once merged is
    PackscanError PS_ERR_OVERFLOW).

    ``source``: a Parquet file, a directory of them or a list of files (one
    task per file, read with pyarrow on the worker: ``columns`` limits what
    is read), or a dask DataFrame (one task per partition, converted with
    ``pyarrow.Table.from_pandas``: read it with ``dtype_backend="pyarrow"``
    to keep Arrow's types). ``backend``: each worker's ("auto": by the
    partition's rows, as Table). ``device``: each worker's device
    (packscan.Context's; None: the first the worker sees, which is the GPU a
    scheduler assigns through ``CUDA_VISIBLE_DEVICES``). ``kernel_cache_dir``:
    the workers' on-disk kernel cache (packscan.Context's): a directory on
    the node's disk that its worker processes share, so a query shape is
    compiled once per node, not once per process. ``float_scale``: float columns' decimal
    scale, the same in every partition (required for SUM / AVG / MIN / MAX
    or keys of a float column whose partitions would find different scales),
    or ``"lossless"`` for doubles that no decimal scale holds.
    ``split_every``: partials are merged on the workers in a tree, at most
    this many into one (as Dask's own reductions), so the client merges at
    most ``split_every`` of them however many partitions there are.
    ``compute_kwargs`` go to ``dask.compute`` (a distributed Client, when one
    is active, is its scheduler)."""
    import dask

    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ValueError(f"split_every must be an int >= 2, not {split_every!r}")
    opts = dict(backend=backend, float_scale=float_scale, nan_as_null=nan_as_null, device=device,
                kernel_cache_dir=None if kernel_cache_dir is None else os.fspath(kernel_cache_dir))
    if hasattr(source, "to_delayed") and hasattr(source, "npartitions"):
        tasks = [dask.delayed(partial_of_table)(part, statement, **opts) for part in source.to_delayed()]
    else:
        tasks = [dask.delayed(partial_of_parquet)(path, statement, columns, **opts)
                 for path in _parquet_files(source)]
    if not tasks:
        raise ValueError(f"no partitions in {source!r}")
    while len(tasks) > split_every:
        tasks = [dask.delayed(_merge_to_partial)(*tasks[i:i + split_every]) for i in range(0, len(tasks), split_every)]
    partials = dask.compute(*tasks, **compute_kwargs)
    return packscan.merge_partials(partials, context=merge_context)
