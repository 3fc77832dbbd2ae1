"""python -m packscan encode INPUT OUTPUT.pst: a Parquet, Arrow IPC (Feather)
or CSV file, read by pyarrow, encoded into the command line's table file, so
that ``packscan query OUTPUT.pst "..."`` runs on it."""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
from typing import List, Optional

import packscan
from packscan import _lib


def _read(path: str):
    try:
        import pyarrow as pa
    except ImportError:
        sys.exit("packscan encode: reading Parquet, Arrow IPC or CSV needs pyarrow (pip install pyarrow)")
    low = path.lower()
    if low.endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq
        return pq.read_table(path)
    if low.endswith((".feather", ".arrow", ".ipc")):
        import pyarrow.feather as feather
        return feather.read_table(path)
    if low.endswith((".csv", ".csv.gz")):
        import pyarrow.csv as pcsv
        return pcsv.read_csv(path)
    sys.exit(f"packscan encode: {path}: expected .parquet, .feather/.arrow/.ipc or .csv")


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m packscan")
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("encode", help="Parquet / Arrow IPC / CSV -> packscan table file")
    e.add_argument("input")
    e.add_argument("output")
    e.add_argument("--backend", default="reference", help="backend that encodes (default: reference)")
    e.add_argument("--nan-as-null", action="store_true", help="store float NaN and infinities as nulls")
    args = p.parse_args(argv)
    # The output must not be the input under any name (a symlink, a hard link):
    # checked before reading, and again when writing.
    err = ctypes.create_string_buffer(1024)
    if _lib.ps_py_check_output(os.fsencode(args.output), os.fsencode(args.input), err, len(err)) != 0:
        print(f"packscan encode: {err.value.decode(errors='replace')}", file=sys.stderr)
        return 1
    data = _read(args.input)
    # A table written to the standard output must not get the summary mixed in.
    summary = sys.stderr if _lib.ps_py_output_is_stdout(os.fsencode(args.output)) else sys.stdout
    try:
        t = packscan.Table(data, backend=args.backend, nan_as_null=args.nan_as_null)
        t._save(args.output, args.input)
    except packscan.PackscanError as err:
        print(f"packscan encode: {args.input}: {err}", file=sys.stderr)
        return 1
    print(f"{args.output}: {t.num_rows} rows, {len(t.columns)} columns "
          f"({', '.join(f'{n}:{f}' for n, f in t.schema)})", file=summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
