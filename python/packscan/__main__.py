"""The ``packscan`` command, installed with the package as a console script
(``python -m packscan`` is the same): every subcommand of the C command
(``query``, ``shell``, ``info``, ``encode INPUT.csv``, ``demo``, ``backends``,
``version``; tools/README.md) runs in this process from the package's own
library, and ``encode`` of a Parquet or Arrow IPC (Feather) file, which the C
command hands to Python, reads it with pyarrow here and writes the same table
file (``--backend``, ``--nan-as-null``; a CSV with either option goes this way
too)."""

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


_ARROW_INPUTS = (".parquet", ".pq", ".feather", ".arrow", ".ipc")


def _python_encode(args: List[str]) -> bool:
    """Whether ``encode args`` is this module's (Arrow inputs, or its options)."""
    if any(a in ("--backend", "--nan-as-null") or a.startswith("--backend=") for a in args):
        return True
    paths = [a for a in args if not a.startswith("-")]
    return bool(paths) and paths[0].lower().endswith(_ARROW_INPUTS)


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["encode"] and _python_encode(args[1:]):
        return _encode(args[1:])
    # The C command, in this process. Its own hand-off of Parquet files runs
    # `$PYTHON -m packscan encode`: this interpreter.
    os.environ.setdefault("PYTHON", sys.executable)
    sys.stdout.flush()
    sys.stderr.flush()
    cargs = [b"packscan"] + [os.fsencode(a) for a in args]
    arr = (ctypes.c_char_p * (len(cargs) + 1))(*cargs, None)
    return _lib.ps_py_cli_main(len(cargs), arr)


def _encode(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="packscan")
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("encode", help="Parquet / Arrow IPC / CSV -> packscan table file")
    e.add_argument("input")
    e.add_argument("output")
    e.add_argument("--backend", default="reference", help="backend that encodes (default: reference)")
    e.add_argument("--nan-as-null", action="store_true", help="store float NaN and infinities as nulls")
    e.add_argument("-q", "--quiet", action="store_true", help="no summary (as the C command's -q)")
    args = p.parse_args(["encode", *argv])
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
    if not args.quiet:
        print(f"{args.output}: {t.num_rows} rows, {len(t.columns)} columns "
              f"({', '.join(f'{n}:{f}' for n, f in t.schema)})", file=summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
