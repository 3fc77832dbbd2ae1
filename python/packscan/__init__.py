"""packscan: SQL predicates evaluated directly on compressed columns.

Data comes in from anything that speaks the Arrow PyCapsule interface
(``__arrow_c_stream__`` or ``__arrow_c_array__``: pyarrow tables, record
batches and arrays, polars data frames, DuckDB relations) and is encoded once
into packscan's compressed columns; predicates are WHERE strings (the
command line's grammar) or built from Python operators; results come back as
objects that speak the same interface (``pyarrow.table(r)``,
``pyarrow.array(r)``, ``polars.from_arrow(r)``) and as numpy arrays.

    >>> import pyarrow as pa, packscan
    >>> t = packscan.Table(pa.table({"x": [1, 5, 9], "s": ["a", "b", "c"]}))
    >>> pa.table(t.filter("x > 2 AND s <> 'c'"))
    pyarrow.Table
    x: int64
    s: string
    ----
    x: [[5]]
    s: [["b"]]

Evaluation runs inside the C library with the GIL released (ctypes drops it
around every call), on the backend picked by name ("reference", "opencl",
"cuda", or "auto": the ``packscan`` command's choice, see auto_backend).
"""

from __future__ import annotations

import ctypes
import datetime
import decimal
import os
from ctypes import byref, c_size_t, c_uint64, c_void_p, sizeof
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._lib import ArrowArray, ArrowSchema

__all__ = ["PackscanError", "Context", "Table", "Column", "Predicate", "Result", "ArrowData", "Frame", "backends",
           "auto_backend", "version", "encode", "read_table", "merge_partials"]


class PackscanError(Exception):
    """A failed library call. ``status`` is the status name
    ("PS_ERR_INVALID_ARGUMENT", ...); the message is the library's own, naming
    the field and the value."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message if message.startswith(status) else f"{status}: {message}" if message else status)
        self.status = status
        self.message = message


def version() -> str:
    """The C library's version ("MAJOR.MINOR.PATCH")."""
    return _lib.ps_version_string().decode()


def backends() -> List[str]:
    """Names of the backends compiled into the library ("reference", "opencl", "cuda")."""
    return [_lib.ps_backend_name(i).decode() for i in range(_lib.ps_backend_count())]


class Context:
    """A packscan context on one backend and device. Tables made on it must be
    used with it; a context is used by one thread at a time. ``backend``:
    "reference", "opencl", "cuda" or "auto" (see auto_backend). ``device``:
    which device of the backend (None: the backend's first; a number the
    backend does not have is PackscanError PS_ERR_NO_DEVICE; the reference
    backend has no devices to choose and ignores it). ``device_memory_limit``:
    the device memory, in bytes, that host-resident columns (``read_table(...,
    host_resident=True)``) are streamed through (0, the default: 3 x 64 MiB;
    at least 65536 otherwise). ``devices``: several devices (a list of
    device numbers, e.g. [0, 1]; ``device`` then None): every table made on
    the context is split by rows across them and each call runs on all of
    them at once, with one device's results. ``opencl_platform``: on the
    OpenCL backend, the platform whose devices ``device`` and ``devices``
    number: an index, or a part of its name such as "NVIDIA" (None: the
    library's choice, a GPU first)."""

    def __init__(self, backend: str = "auto", *, device: Optional[int] = None, max_chunk_rows: int = 0,
                 kernel_cache_dir: Optional[str] = None, device_memory_limit: int = 0,
                 devices: Optional[Sequence[int]] = None, opencl_platform: Union[int, str, None] = None) -> None:
        opts = _lib.ContextOptions()
        _lib.ps_context_options_init_sized(byref(opts), sizeof(opts))
        # "auto" as the command means it (auto_backend), not the C library's
        # first backend that starts, which would pick PoCL on a CPU.
        opts.backend = (auto_backend() if backend == "auto" else backend).encode()
        if device is not None:
            # The device among those the process sees: a CUDA ordinal (after
            # CUDA_VISIBLE_DEVICES, which engines set per worker) or an
            # OpenCL device of the first platform that has one. The reference
            # backend has one device, 0.
            if isinstance(device, bool) or not isinstance(device, int) or device < 0:
                raise ValueError(f"device must be an int >= 0 or None, not {device!r}")
            opts.cuda_device = opts.opencl_device = device
        dev_array = None
        if devices is not None:
            devs = list(devices)
            if device is not None or not devs or not all(
                    isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**31 for d in devs):
                raise ValueError(f"devices must be a non-empty list of device numbers, with device None; not {devices!r}")
            dev_array = (ctypes.c_int32 * len(devs))(*devs)  # read by ps_context_create only
            opts.device_count = len(devs)
            opts.devices = ctypes.cast(dev_array, ctypes.POINTER(ctypes.c_int32))
        if opencl_platform is not None:
            # An index, or a part of the platform's name ("NVIDIA"), which the
            # library matches and, when none does, names the installed ones.
            if isinstance(opencl_platform, bool) or not isinstance(opencl_platform, (int, str)) or \
                    (isinstance(opencl_platform, int) and not 0 <= opencl_platform < 2**31) or opencl_platform == "":
                raise ValueError(f"opencl_platform must be a platform index >= 0 or a part of its name, "
                                 f"not {opencl_platform!r}")
            if isinstance(opencl_platform, int):
                opts.opencl_platform = opencl_platform
            else:
                opts.opencl_platform_name = opencl_platform.encode()
        opts.max_chunk_rows = max_chunk_rows
        if isinstance(device_memory_limit, bool) or not isinstance(device_memory_limit, int) or \
                not 0 <= device_memory_limit < 2**64:
            raise ValueError(f"device_memory_limit must be an int of bytes >= 0, not {device_memory_limit!r}")
        opts.device_memory_limit = device_memory_limit  # the library refuses 1..65535, naming the value
        if kernel_cache_dir is not None:  # the library copies the path
            opts.kernel_cache_dir = kernel_cache_dir.encode()
        err = ctypes.create_string_buffer(1024)
        handle = c_void_p()
        st = _lib.ps_context_create(byref(opts), err, len(err), byref(handle))
        if st != 0:
            raise PackscanError(_lib.ps_status_name(st).decode(), err.value.decode(errors="replace"))
        self._h: Optional[int] = handle.value

    @property
    def handle(self) -> int:
        if not self._h:
            raise ValueError("the context is closed")
        return self._h

    @property
    def backend(self) -> str:
        """The backend in use."""
        return _lib.ps_context_backend(self.handle).decode()

    @property
    def device(self) -> str:
        """A description of the device."""
        return _lib.ps_context_device(self.handle).decode(errors="replace")

    def check(self, status: int) -> None:
        """Raises PackscanError with the context's last message if status is not PS_OK."""
        if status != 0:
            msg = _lib.ps_context_last_error(self.handle).decode(errors="replace")
            raise PackscanError(_lib.ps_status_name(status).decode(), msg)

    def close(self) -> None:
        """Destroys the context (its tables must be closed first)."""
        if self._h:
            _lib.ps_context_destroy(self._h)
            self._h = None

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"packscan.Context({self.backend!r}, device={self.device!r})" if self._h else "packscan.Context(closed)"


_default_contexts: Dict[str, Context] = {}


_auto_device: Optional[str] = None  # what "auto" picks for a large table here, probed once


def auto_backend(rows: Optional[int] = None) -> str:
    """The backend "auto" means for a table of ``rows`` rows, as in the
    ``packscan`` command: "reference" below 2**22 rows (starting a device costs
    more than the scan), else "cuda", else "opencl" on a device that is not a
    CPU, else "reference". A CPU OpenCL device (PoCL) is used only when asked
    for by name. ``rows=None``: the choice for a large table."""
    global _auto_device
    if rows is not None and rows < _lib.ps_py_auto_device_rows():
        return "reference"
    if _auto_device is None:
        name, why, err = (ctypes.create_string_buffer(64), ctypes.create_string_buffer(1024),
                          ctypes.create_string_buffer(1024))
        if _lib.ps_py_auto_backend(_lib.ps_py_auto_device_rows(), name, len(name), why, len(why), err, len(err)):
            raise PackscanError("PS_ERR_NO_DEVICE", err.value.decode(errors="replace"))
        _auto_device = name.value.decode()
    return _auto_device


def _rows_of(data: Any) -> Optional[int]:
    """The row count of data when it tells it without being read, else None."""
    for attr in ("num_rows", "height"):
        n = getattr(data, attr, None)
        if isinstance(n, int):
            return n
    try:
        return len(data)
    except Exception:
        return None


def _context_for(context: Optional[Context], backend: Optional[str], rows: Optional[int] = None) -> Context:
    if context is not None:
        return context
    name = backend or "auto"
    if name == "auto":
        name = auto_backend(rows)
    if name not in _default_contexts:
        _default_contexts[name] = Context(name)
    return _default_contexts[name]


# ---- Arrow results ------------------------------------------------------------------

_NUMPY_FORMATS = {"c": np.int8, "s": np.int16, "i": np.int32, "l": np.int64, "C": np.uint8, "S": np.uint16,
                  "I": np.uint32, "L": np.uint64, "f": np.float32, "g": np.float64, "tdD": np.int32,
                  "tdm": np.int64}


def _buffer(ptr: Optional[int], nbytes: int) -> np.ndarray:
    if nbytes == 0 or not ptr:
        return np.zeros(0, dtype=np.uint8)
    return np.frombuffer((ctypes.c_char * nbytes).from_address(ptr), dtype=np.uint8).copy()


_DECIMAL_MODES = ("object", "int", "float")


def _decimals_to_numpy(buf: np.ndarray, scale: int, decimals: str) -> Any:
    """decimal128 values (16 bytes each, little-endian two's complement) as
    numpy: "object" exact decimal.Decimal values, "int" the unscaled integers
    (int64 when every value fits, else Python ints in an object array),
    "float" the nearest float64 of each."""
    lo = buf[:, 0].astype(np.uint64)
    hi = buf[:, 1]
    if decimals == "float" or decimals == "int":
        # hi is the sign extension of lo exactly where the value fits int64.
        fits = hi == (lo.view(np.int64) >> 63)
        if decimals == "float" and bool(fits.all()):
            return lo.view(np.int64) / (10.0 ** scale)
        if decimals == "int" and bool(fits.all()):
            return lo.view(np.int64).copy()
    ints = [(int(h) << 64) | int(l) for h, l in zip(hi.tolist(), lo.tolist())]
    if decimals == "int":
        return np.array(ints, dtype=object)
    if decimals == "float":
        return np.array([float(decimal.Decimal(v).scaleb(-scale)) for v in ints], dtype=np.float64)
    return np.array([decimal.Decimal(v).scaleb(-scale) for v in ints], dtype=object)


def _array_to_numpy(s: ArrowSchema, a: ArrowArray, decimals: str = "object") -> Any:
    """A copy of an exported array as numpy (strings: object arrays; decimals:
    as _decimals_to_numpy; nulls: a masked array)."""
    fmt = s.format.decode()
    n, off = a.length, a.offset
    valid = None
    if a.null_count and a.buffers[0]:
        bits = _buffer(a.buffers[0], (off + n + 7) // 8)
        valid = np.unpackbits(bits, bitorder="little")[off:off + n].astype(bool)
    if fmt == "b":
        bits = _buffer(a.buffers[1], (off + n + 7) // 8)
        out: Any = np.unpackbits(bits, bitorder="little")[off:off + n].astype(bool)
    elif fmt in _NUMPY_FORMATS or fmt.startswith("ts"):
        dt = np.dtype(_NUMPY_FORMATS.get(fmt, np.int64))
        out = _buffer(a.buffers[1], (off + n) * dt.itemsize).view(dt)[off:]
    elif fmt.startswith("d:"):
        scale = int(fmt[2:].split(",")[1])
        raw = _buffer(a.buffers[1], (off + n) * 16).view(np.int64).reshape(-1, 2)[off:]
        out = _decimals_to_numpy(raw, scale, decimals)
    elif fmt in ("u", "U") or s.dictionary:
        if s.dictionary:
            d = _array_to_numpy(s.dictionary.contents, a.dictionary.contents, decimals)
            idx = _buffer(a.buffers[1], (off + n) * 4).view(np.int32)[off:]
            out = np.array([d[k] if valid is None or valid[j] else "" for j, k in enumerate(idx)], dtype=object)
        else:
            ow = 8 if fmt == "U" else 4
            offs = _buffer(a.buffers[1], (off + n + 1) * ow).view(np.int64 if ow == 8 else np.int32)[off:]
            total = int(offs[-1]) if len(offs) else 0
            data = _buffer(a.buffers[2], total).tobytes()
            out = np.array([data[offs[j]:offs[j + 1]].decode("utf-8", errors="replace") for j in range(n)],
                           dtype=object)
    else:
        raise TypeError(f"no numpy conversion for Arrow format {fmt!r}")
    if valid is not None:
        return np.ma.MaskedArray(out, mask=~valid)
    return out


class ArrowData:
    """A result in Arrow form: an array or a record batch, exported afresh on
    each request through the Arrow PyCapsule interface, so it can be consumed
    any number of times (``pyarrow.array(d)``, ``pyarrow.record_batch(d)``,
    ``pyarrow.table(d)``, ``polars.from_arrow(d)``). ``to_numpy()`` copies it
    into numpy. Keeps its table alive."""

    def __init__(self, produce: Callable[[int, int], None], owner: Any, kind: str) -> None:
        self._produce = produce
        self._owner = owner
        self.kind = kind

    def _export(self) -> Tuple[int, int]:
        sp = _lib.alloc_struct(ArrowSchema)
        ap = _lib.alloc_struct(ArrowArray)
        try:
            self._produce(sp, ap)
        except BaseException:
            _lib.free_struct(sp)
            _lib.free_struct(ap)
            raise
        return sp, ap

    def __arrow_c_array__(self, requested_schema: Any = None) -> Tuple[Any, Any]:
        """The Arrow PyCapsule array protocol: (schema capsule, array capsule)."""
        sp, ap = self._export()
        return _lib.capsule(sp, _lib.SCHEMA_NAME), _lib.capsule(ap, _lib.ARRAY_NAME)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream protocol: a stream of this one array or batch."""
        sp, ap = self._export()
        stp = _lib.alloc_struct(_lib.ArrowArrayStream)
        rc = _lib.ps_py_stream_from_batch(ctypes.cast(sp, ctypes.POINTER(ArrowSchema)),
                                          ctypes.cast(ap, ctypes.POINTER(ArrowArray)),
                                          ctypes.cast(stp, ctypes.POINTER(_lib.ArrowArrayStream)))
        _lib.free_struct(sp)  # moved into the stream (or released below)
        _lib.free_struct(ap)
        if rc != 0:
            _lib.free_struct(stp)
            raise MemoryError("making an Arrow stream")
        return _lib.capsule(stp, _lib.STREAM_NAME)

    def to_numpy(self, *, decimals: str = "object") -> Any:
        """A numpy copy: an array, or for a record batch a dict of column name to
        array. Nulls make a masked array. Decimal columns are exact by default:
        ``decimals="object"`` gives decimal.Decimal values, ``"int"`` the
        unscaled integers (value * 10**scale; int64, or Python ints where a
        value does not fit), ``"float"`` the nearest float64 (inexact)."""
        if decimals not in _DECIMAL_MODES:
            raise ValueError(f"decimals must be one of {', '.join(map(repr, _DECIMAL_MODES))}, not {decimals!r}")
        sp, ap = self._export()
        try:
            s, a = ArrowSchema.from_address(sp), ArrowArray.from_address(ap)
            if s.format == b"+s":
                return {s.children[i].contents.name.decode(): _array_to_numpy(s.children[i].contents,
                                                                              a.children[i].contents, decimals)
                        for i in range(s.n_children)}
            return _array_to_numpy(s, a, decimals)
        finally:
            _lib.release_schema(sp)
            _lib.release_array(ap)
            _lib.free_struct(sp)
            _lib.free_struct(ap)

    def __repr__(self) -> str:
        return f"<packscan.ArrowData {self.kind}>"


# Rows per batch of a result streamed through the Arrow stream interface.
STREAM_BATCH_ROWS = 1 << 20


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise ImportError("this needs pyarrow (pip install pyarrow)") from None
    return pyarrow


class _TableOps:
    """Table operations of a result that is a record batch (a Frame, a
    Result): through the Arrow PyCapsule stream, so every consumer reads it as
    a table (``pyarrow.table(r)``, ``polars.DataFrame(r)``, DuckDB's
    ``FROM r``); select / head / sort / to_pandas go through pyarrow."""

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        raise NotImplementedError

    def to_pyarrow(self) -> Any:
        """A pyarrow.Table."""
        return _pyarrow().table(self)

    def to_pandas(self) -> Any:
        """A pandas DataFrame (decimals as decimal.Decimal objects, as pyarrow
        converts them)."""
        return self.to_pyarrow().to_pandas()

    def to_polars(self) -> Any:
        """A polars DataFrame (``polars.from_arrow`` reads any object other than
        pyarrow's as a Series; ``polars.DataFrame(r)`` is this)."""
        import polars
        return polars.DataFrame(self)

    def select(self, *columns: str) -> "Frame":
        """The named columns, in that order."""
        cols = list(columns[0]) if len(columns) == 1 and not isinstance(columns[0], str) else list(columns)
        t = self.to_pyarrow()
        missing = [c for c in cols if c not in t.column_names]
        if missing:
            raise KeyError(f"no column {missing[0]!r} (columns: {', '.join(t.column_names)})")
        return Frame(t.select(cols))

    def head(self, n: int = 5) -> "Frame":
        """The first n rows."""
        return Frame(self.to_pyarrow().slice(0, max(0, n)))

    def sort(self, by: Union[str, Sequence[str]], descending: Union[bool, Sequence[bool]] = False) -> "Frame":
        """Rows ordered by the columns ``by`` (nulls last), each ascending unless
        ``descending`` (one flag, or one per column) says otherwise."""
        keys = [by] if isinstance(by, str) else list(by)
        desc = [descending] * len(keys) if isinstance(descending, bool) else list(descending)
        if len(desc) != len(keys):
            raise ValueError("descending needs one flag per sort column")
        t = self.to_pyarrow()
        return Frame(t.sort_by([(k, "descending" if d else "ascending") for k, d in zip(keys, desc)]))


class Frame(_TableOps, ArrowData):
    """A table-shaped result held in memory: what ``Table.sql`` returns and
    what ``select``, ``head`` and ``sort`` give. Speaks the Arrow PyCapsule
    interface as a table (``__arrow_c_stream__``: one record batch) and as
    that batch (``__arrow_c_array__``); ``to_numpy()``, ``to_pandas()``,
    ``to_pyarrow()``, ``to_polars()``; ``columns``, ``len()``."""

    def __init__(self, data: Any) -> None:
        if isinstance(data, int):  # a ps_py_hold holder: the batch is kept in C
            self._holder: Optional[int] = data
            produce = self._produce_held
        else:  # a pyarrow.Table
            self._holder = None
            batch = data.combine_chunks().to_batches()
            self._batch = batch[0] if batch else _pyarrow().RecordBatch.from_pylist([], schema=data.schema)
            produce = self._produce_pyarrow
        super().__init__(produce, None, "record batch")

    def _produce_held(self, sp: int, ap: int) -> None:
        if _lib.ps_py_held_export(self._holder, sp, ap) != 0:
            raise MemoryError("exporting a result")

    def _produce_pyarrow(self, sp: int, ap: int) -> None:
        self._batch._export_to_c(ap, sp)

    def _schema(self) -> Tuple[List[str], int]:
        sp, ap = self._export()
        try:
            s = ArrowSchema.from_address(sp)
            names = [s.children[i].contents.name.decode() for i in range(s.n_children)]
            return names, ArrowArray.from_address(ap).length
        finally:
            _lib.release_schema(sp)
            _lib.release_array(ap)
            _lib.free_struct(sp)
            _lib.free_struct(ap)

    @property
    def columns(self) -> List[str]:
        """The column names."""
        return self._schema()[0]

    def __len__(self) -> int:
        return self._schema()[1]

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return ArrowData.__arrow_c_stream__(self, requested_schema)

    def __del__(self) -> None:
        if getattr(self, "_holder", None):
            _lib.ps_py_unhold(self._holder)
            self._holder = None

    def __repr__(self) -> str:
        try:
            names, n = self._schema()
        except Exception:
            return "<packscan.Frame>"
        return f"<packscan.Frame {n} rows: {', '.join(names)}>"


# ---- predicates -----------------------------------------------------------------------

_Scalar = Union[int, float, str, bytes, datetime.date, decimal.Decimal]


class Predicate:
    """A predicate over a table's columns, combined with ``&``, ``|`` and ``~``
    (SQL three-valued logic: a row is selected where the whole predicate is
    TRUE). Built from Column operators or ``Table.where(text)``."""

    def __init__(self, build: Callable[["Table"], int], text: str) -> None:
        self._build = build
        self._text = text

    def __and__(self, other: "Predicate") -> "Predicate":
        return _combine(_lib.ps_expr_and, self, other, "AND")

    def __or__(self, other: "Predicate") -> "Predicate":
        return _combine(_lib.ps_expr_or, self, other, "OR")

    def __invert__(self) -> "Predicate":
        def build(t: "Table") -> int:
            a = self._build(t)
            out = c_void_p()
            st = _lib.ps_expr_not(t.context.handle, a, byref(out))
            if st != 0:
                _lib.ps_expr_destroy(a)
                t.context.check(st)
            return out.value

        return Predicate(build, f"NOT ({self._text})")

    def __bool__(self) -> bool:
        raise TypeError("a packscan Predicate has no truth value: use & | ~ instead of and / or / not")

    def __repr__(self) -> str:
        return f"<packscan.Predicate {self._text}>"


def _combine(fn: Any, a: Predicate, b: Predicate, word: str) -> Predicate:
    if not isinstance(b, Predicate):
        return NotImplemented

    def build(t: "Table") -> int:
        x = a._build(t)
        try:
            y = b._build(t)
        except BaseException:
            _lib.ps_expr_destroy(x)
            raise
        out = c_void_p()
        st = fn(t.context.handle, x, y, byref(out))
        if st != 0:
            _lib.ps_expr_destroy(x)
            _lib.ps_expr_destroy(y)
            t.context.check(st)
        return out.value

    return Predicate(build, f"({a._text}) {word} ({b._text})")


_DECIMAL_MAX_DIGITS = 38  # PS_DECIMAL_MAX_DIGITS


def _set_decimal(lit: _lib.Literal, unscaled: int, scale: int) -> None:
    """An exact DECIMAL literal: the 128-bit unscaled value (two's complement
    hi:lo) and the scale."""
    u = unscaled & (2**128 - 1)
    lit.kind = _lib.LIT_DECIMAL
    lit.v.d.lo = u & (2**64 - 1)
    lit.v.d.hi = (u >> 64) - (2**64 if u >> 127 else 0)
    lit.v.d.scale = scale


def _literal(value: _Scalar, keep: list) -> _lib.Literal:
    lit = _lib.Literal()
    if isinstance(value, bool):
        raise TypeError("booleans are not packscan literals")
    if isinstance(value, int):
        # As ps_literal_parse reads the same digits: int64, else uint64, else
        # an exact DECIMAL of scale 0 (x == 2**64 + 1 selects nothing on any
        # column, x < 2**70 every non-null row), else refused. ctypes would
        # silently keep only the low 64 bits.
        if -(2**63) <= value <= 2**63 - 1:
            lit.kind, lit.v.i = _lib.LIT_INT64, value
        elif 0 <= value <= 2**64 - 1:
            lit.kind, lit.v.u = _lib.LIT_UINT64, value
        elif abs(value) < 10**_DECIMAL_MAX_DIGITS:
            _set_decimal(lit, value, 0)
        else:
            raise PackscanError("PS_ERR_NOT_REPRESENTABLE",
                                f"integer literal {value} has more than {_DECIMAL_MAX_DIGITS} digits; "
                                f"packscan literals hold at most {_DECIMAL_MAX_DIGITS}")
    elif isinstance(value, decimal.Decimal):
        # Exact: the unscaled integer and the scale, as SQL's DECIMAL literal.
        if not value.is_finite():
            lit.kind, lit.v.f = _lib.LIT_FLOAT64, float(value)
        else:
            sign, digits, exp = value.as_tuple()
            scale = max(0, -exp)
            unscaled = int(value.scaleb(scale))
            if not -(2**127) <= unscaled < 2**127:
                raise ValueError(f"{value} has more digits than a 128-bit decimal holds")
            _set_decimal(lit, unscaled, scale)
    elif isinstance(value, float):
        lit.kind, lit.v.f = _lib.LIT_FLOAT64, value
    elif isinstance(value, datetime.datetime):
        raise TypeError("a datetime compares with a timestamp or date column only (or pass an int in the column's unit)")
    elif isinstance(value, datetime.date):
        lit.kind, lit.v.i = _lib.LIT_INT64, (value - datetime.date(1970, 1, 1)).days
    elif isinstance(value, (str, bytes)):
        b = value.encode() if isinstance(value, str) else value
        keep.append(b)
        lit.kind = _lib.LIT_STRING
        lit.v.s.ptr = b
        lit.v.s.len = len(b)
    else:
        raise TypeError(f"unsupported literal {value!r}")
    return lit


_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
# Nanoseconds in one value of each date / timestamp Arrow format.
_NS_PER_UNIT = {"tdD": 86400 * 10**9, "tdm": 10**6, "tss": 10**9, "tsm": 10**6, "tsu": 10**3, "tsn": 1}


def _time_value(value: Any, fmt: str) -> Any:
    """A date or datetime as a value of a date / timestamp column of Arrow
    format fmt (any other value, or column, unchanged). A date is its midnight;
    a datetime without a zone is taken as UTC (as TIMESTAMP '...' in WHERE
    text), one with a zone as its UTC instant (the values of a zoned timestamp
    are UTC instants; a naive column is compared as if its values were UTC);
    pandas Timestamps keep their nanoseconds. A point between two values of the
    column's unit becomes the exact decimal halfway between them, so every
    comparison stays exact (== matches nothing, < holds up to the lower one)."""
    per = _NS_PER_UNIT.get(fmt[:3] if fmt.startswith("ts") else fmt)
    if per is None or not isinstance(value, datetime.date):
        return value
    if isinstance(value, datetime.datetime):
        td = value - (_EPOCH if value.tzinfo is None else _EPOCH_UTC)
        ns = (td.days * 86400 + td.seconds) * 10**9 + td.microseconds * 1000 + int(getattr(value, "nanosecond", 0))
    else:
        ns = (value - datetime.date(1970, 1, 1)).days * 86400 * 10**9
    q, r = divmod(ns, per)
    return q if r == 0 else decimal.Decimal(q) + decimal.Decimal("0.5")


class Column:
    """A column of a Table, for building predicates with Python operators:
    ``t["x"] > 5``, ``t["s"].like("a%")``, ``t["x"].isin([1, 2])``,
    ``t["a"] < t["b"]``."""

    def __init__(self, table: "Table", index: int) -> None:
        self.table = table
        self.index = index
        self.name = table.columns[index]

    def _handle(self, t: "Table") -> int:
        if t is not self.table:
            raise ValueError(f"column {self.name!r} belongs to another table")
        return _lib.ps_arrow_table_column(t._handle(), self.index)

    def _value(self, value: Any) -> Any:
        """value as a literal for this column (dates and datetimes in its unit)."""
        return _time_value(value, self.table._fields[self.index].format.decode())

    def _cmp(self, op: str, other: Any) -> Predicate:
        def build(t: "Table") -> int:
            out = c_void_p()
            if isinstance(other, Column):
                st = _lib.ps_expr_compare_columns(t.context.handle, self._handle(t), _lib.CMP[op],
                                                  other._handle(t), byref(out))
            else:
                keep: list = []
                st = _lib.ps_expr_compare(t.context.handle, self._handle(t), _lib.CMP[op],
                                          _literal(self._value(other), keep), byref(out))
            t.context.check(st)
            return out.value

        rhs = other.name if isinstance(other, Column) else repr(other)
        return Predicate(build, f"{self.name} {op} {rhs}")

    def __eq__(self, other: Any) -> Predicate:  # type: ignore[override]
        return self._cmp("==", other)

    def __ne__(self, other: Any) -> Predicate:  # type: ignore[override]
        return self._cmp("!=", other)

    def __lt__(self, other: Any) -> Predicate:
        return self._cmp("<", other)

    def __le__(self, other: Any) -> Predicate:
        return self._cmp("<=", other)

    def __gt__(self, other: Any) -> Predicate:
        return self._cmp(">", other)

    def __ge__(self, other: Any) -> Predicate:
        return self._cmp(">=", other)

    __hash__ = None  # type: ignore[assignment]

    def between(self, lo: _Scalar, hi: _Scalar) -> Predicate:
        """lo <= column AND column <= hi."""
        def build(t: "Table") -> int:
            keep: list = []
            out = c_void_p()
            t.context.check(_lib.ps_expr_between(t.context.handle, self._handle(t), _literal(self._value(lo), keep),
                                                 _literal(self._value(hi), keep), byref(out)))
            return out.value

        return Predicate(build, f"{self.name} BETWEEN {lo!r} AND {hi!r}")

    def isin(self, values: Iterable[_Scalar]) -> Predicate:
        """column IN (values)."""
        vals = list(values)

        def build(t: "Table") -> int:
            keep: list = []
            arr = (_lib.Literal * max(len(vals), 1))(*[_literal(self._value(v), keep) for v in vals])
            out = c_void_p()
            t.context.check(_lib.ps_expr_in(t.context.handle, self._handle(t), arr, len(vals), byref(out)))
            return out.value

        return Predicate(build, f"{self.name} IN {tuple(vals)!r}")

    def like(self, pattern: str, escape: Optional[str] = None, *, negate: bool = False) -> Predicate:
        """column LIKE pattern ('%' any sequence, '_' one character), case-sensitive."""
        p = pattern.encode()

        def build(t: "Table") -> int:
            out = c_void_p()
            esc = -1 if escape is None else ord(escape)
            t.context.check(_lib.ps_expr_like(t.context.handle, self._handle(t), p, len(p), esc, int(negate),
                                              byref(out)))
            return out.value

        return Predicate(build, f"{self.name} {'NOT ' if negate else ''}LIKE {pattern!r}")

    def not_like(self, pattern: str, escape: Optional[str] = None) -> Predicate:
        """column NOT LIKE pattern."""
        return self.like(pattern, escape, negate=True)

    def _null(self, negate: bool) -> Predicate:
        def build(t: "Table") -> int:
            out = c_void_p()
            t.context.check(_lib.ps_expr_is_null(t.context.handle, self._handle(t), int(negate), byref(out)))
            return out.value

        return Predicate(build, f"{self.name} IS {'NOT ' if negate else ''}NULL")

    def is_null(self) -> Predicate:
        """column IS NULL."""
        return self._null(False)

    def is_not_null(self) -> Predicate:
        """column IS NOT NULL."""
        return self._null(True)

    def __repr__(self) -> str:
        return f"<packscan.Column {self.name!r}>"


# ---- tables -------------------------------------------------------------------------------


def _arrow_capsules(data: Any) -> Tuple[str, Any]:
    if hasattr(data, "__arrow_c_stream__"):
        return "stream", data.__arrow_c_stream__()
    if hasattr(data, "__arrow_c_array__"):
        return "array", data.__arrow_c_array__()
    # pandas and other frames: through pyarrow when it is installed.
    try:
        import pyarrow as pa  # noqa: F401
    except ImportError:
        pa = None
    if pa is not None and type(data).__module__.startswith("pandas"):
        return _arrow_capsules(pa.Table.from_pandas(data, preserve_index=False))
    raise TypeError(f"{type(data).__name__} does not speak the Arrow PyCapsule interface "
                    "(__arrow_c_stream__ / __arrow_c_array__)")


class Table:
    """Columns encoded by packscan from Arrow data.

    ``data`` is any object with ``__arrow_c_stream__`` or ``__arrow_c_array__``
    (a record batch / struct array gives one column per field; any other array
    one column), or a pandas DataFrame (through pyarrow). Values are copied
    and compressed: integers, floats (the smallest exact decimal scale is
    found; ``nan_as_null`` maps NaN/inf to nulls), decimal128, dates,
    timestamps, strings of every Arrow layout and dictionaries. ``float_scale``:
    None finds each float column's smallest exact decimal scale, else a
    lossless mapping; an integer demands that scale; ``"lossless"`` always
    takes the lossless mapping (every double bit-exact), so that partitions
    of one table encode alike whatever their values. ``encoding``
    (numeric columns): ``"for"`` (default), ``"delta"`` (sorted columns:
    dates, timestamps, keys) or ``"auto"`` (the smaller); queries read FOR
    columns only so far, filters both."""

    def __init__(self, data: Any, *, context: Optional[Context] = None, backend: Optional[str] = None,
                 nan_as_null: bool = False, float_scale: Optional[Union[int, str]] = None,
                 encoding: str = "for") -> None:
        encodings = {"for": 0, "delta": 1, "auto": -1}
        if encoding not in encodings:
            raise ValueError(f"encoding {encoding!r}: expected 'for', 'delta' or 'auto'")
        self.context = _context_for(context, backend, _rows_of(data))
        opts = _lib.ImportOptions()
        _lib.ps_arrow_import_options_init(byref(opts))
        opts.encoding = encodings[encoding]
        opts.nan_as_null = int(nan_as_null)
        if float_scale == "lossless":  # every float column bit-exact (ALP or ordered bits), never FOR-decimal
            opts.float_scale = _lib.FLOAT_SCALE_LOSSLESS
        elif float_scale is not None:
            if isinstance(float_scale, str):
                raise ValueError(f"float_scale {float_scale!r}: expected an integer 0..18 or 'lossless'")
            opts.float_scale = float_scale
        if isinstance(data, _Opened):
            self._adopt(data.handle)
            self._file = data.file
            return
        how, caps = _arrow_capsules(data)
        out = c_void_p()
        ctx = self.context.handle
        if how == "stream":
            st = _lib.ps_arrow_import_stream(ctx, _lib.capsule_pointer(caps, _lib.STREAM_NAME), byref(opts),
                                             byref(out))
        else:
            sc, ac = caps
            st = _lib.ps_arrow_import(ctx, _lib.capsule_pointer(sc, _lib.SCHEMA_NAME),
                                      _lib.capsule_pointer(ac, _lib.ARRAY_NAME), byref(opts), byref(out))
        self.context.check(st)
        self._adopt(out.value)

    def _adopt(self, handle: int) -> None:
        self._h: Optional[int] = handle
        n = _lib.ps_arrow_table_columns(self._h)
        self._fields = [_lib.ps_arrow_table_field(self._h, i).contents for i in range(n)]
        self.columns: List[str] = [f.name.decode() for f in self._fields]

    def _handle(self) -> int:
        if not self._h:
            raise ValueError("the table is closed")
        return self._h

    @property
    def num_rows(self) -> int:
        """Rows in the table."""
        return int(_lib.ps_arrow_table_rows(self._handle()))

    def __len__(self) -> int:
        return self.num_rows

    @property
    def zone_maps(self) -> Dict[str, bool]:
        """Whether each column has zone maps (per block of 4,096 rows, its
        smallest and largest code and whether it holds nulls): import and
        table files give every column them, and a query then skips the blocks
        its WHERE rules out, which pays on data sorted or clustered by the
        columns it filters on."""
        h = self._handle()
        return {name: bool(_lib.ps_column_zones(_lib.ps_arrow_table_column(h, i), None))
                for i, name in enumerate(self.columns)}

    @property
    def has_zone_maps(self) -> bool:
        """Whether every column has zone maps (see zone_maps)."""
        return all(self.zone_maps.values())

    @property
    def schema(self) -> List[Tuple[str, str]]:
        """(name, Arrow format string) of each column, as imported."""
        return [(f.name.decode(), f.format.decode()) for f in self._fields]

    def field(self, name: str) -> Dict[str, Any]:
        """What import recorded about a column: kind, scale, time unit, time zone."""
        f = self._fields[self._index(name)]
        return {"name": f.name.decode(), "format": f.format.decode(), "kind": _lib.KIND_NAMES.get(f.kind),
                "scale": f.scale, "unit": _lib.UNIT_NAMES.get(f.unit),
                "timezone": f.timezone.decode() or None}

    def _index(self, name: str) -> int:
        try:
            return self.columns.index(name)
        except ValueError:
            raise KeyError(f"no column {name!r} (columns: {', '.join(self.columns)})") from None

    def __getitem__(self, name: str) -> Column:
        return Column(self, self._index(name))

    def column(self, name: str) -> Column:
        """The column called name, for building predicates."""
        return self[name]

    def where(self, text: str) -> Predicate:
        """A predicate from a WHERE clause in the command line's grammar:
        comparisons, BETWEEN, IN, LIKE [ESCAPE], IS [NOT] NULL, AND / OR / NOT,
        'strings', DATE 'yyyy-mm-dd' (date columns, or midnight of a timestamp column),
        TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.fff][Z|+hh:mm]' (timestamp and date64 columns; no zone
        is UTC), numbers."""
        src = text.encode()

        def build(t: "Table") -> int:
            if t is not self:
                raise ValueError("the WHERE predicate belongs to another table")
            out = c_void_p()
            err = ctypes.create_string_buffer(1024)
            pos = c_size_t(0)
            if _lib.ps_py_where(t.context.handle, t._handle(), src, len(src), byref(out), err, len(err),
                                byref(pos)) != 0:
                raise PackscanError("PS_ERR_INVALID_ARGUMENT",
                                    f"{err.value.decode(errors='replace')} (at byte {pos.value} of {text!r})")
            return out.value

        return Predicate(build, text)

    def _predicate(self, where: Union[str, Predicate, None]) -> Optional[Predicate]:
        if where is None or isinstance(where, Predicate):
            return where
        if isinstance(where, str):
            return self.where(where)
        raise TypeError(f"where must be a string or a Predicate, not {type(where).__name__}")

    def filter(self, where: Union[str, Predicate, None] = None) -> "Result":
        """The rows where the predicate is TRUE (every row for None)."""
        return Result(self, self._predicate(where))

    def count(self, where: Union[str, Predicate, None] = None) -> int:
        """How many rows the predicate selects."""
        return self.filter(where).count

    def aggregate(self, column: str, where: Union[str, Predicate, None] = None) -> ArrowData:
        """count, sum, min, max of a numeric column over the selected rows, as a
        one-row record batch (sum is decimal128, exact, for integers and
        decimals; float64 for floats; absent for dates and timestamps)."""
        idx = self._index(column)
        pred = self._predicate(where)

        def produce(sp: int, ap: int) -> None:
            e = pred._build(self) if pred is not None else None
            try:
                self.context.check(_lib.ps_arrow_export_aggregates(
                    self.context.handle, self._handle(), idx, e, ctypes.cast(sp, ctypes.POINTER(ArrowSchema)),
                    ctypes.cast(ap, ctypes.POINTER(ArrowArray))))
            finally:
                if e:
                    _lib.ps_expr_destroy(e)

        return ArrowData(produce, self, "aggregates")

    def sql(self, statement: str) -> Frame:
        """Runs a SELECT statement of ``packscan query`` on this table (the same
        parser, binder and fused query; tools/README.md): aggregates
        (COUNT(*), COUNT, SUM, MIN, MAX, AVG) of exact arithmetic (+ - *, CASE)
        over the rows where WHERE is TRUE, GROUP BY one or two columns (one row
        per group, in ascending key order, NULL keys last), then HAVING (exact
        comparisons, three-valued logic), ORDER BY (aliases, positions or
        aggregates, ASC / DESC, NULLs last unless NULLS FIRST, ties in key
        order), LIMIT and OFFSET; items may compute on aggregates and keys
        (+ - * /, abs, coalesce; a quotient at scale max(6, the operands'),
        rounded half away from zero, NULL for a zero divisor). FROM's name is
        ignored. The result is a Frame: GROUP BY keys and MIN / MAX of a column
        keep the column's type; COUNT is int64; SUM, AVG and arithmetic are
        decimal128(38, scale), exact (float64 where they read a float column).
        Columns are named by their alias, else their text. A statement that
        does not parse or bind raises PackscanError with the position
        ("error at column N: ..." and a caret under it)."""
        src = statement.encode()
        err = ctypes.create_string_buffer(4096)
        sp = _lib.alloc_struct(ArrowSchema)
        ap = _lib.alloc_struct(ArrowArray)
        try:
            if _lib.ps_py_select(self.context.handle, self._handle(), src, len(src), sp, ap, err, len(err)) != 0:
                msg = err.value.decode(errors="replace")
                status = msg.split(":", 1)[0] if msg.startswith("PS_ERR_") else "PS_ERR_INVALID_ARGUMENT"
                raise PackscanError(status, msg)
            holder = _lib.ps_py_hold(sp, ap)
            if not holder:
                _lib.release_schema(sp)
                _lib.release_array(ap)
                raise MemoryError("keeping a SELECT result")
        finally:
            _lib.free_struct(sp)
            _lib.free_struct(ap)
        return Frame(holder)

    def sql_partial(self, statement: str) -> Any:
        """Runs a SELECT statement as sql() does, on this table taken as one
        partition of a larger one, and returns the exact per-group state of its
        result: a pyarrow.RecordBatch (needs pyarrow) that pickles, goes
        through Arrow IPC and speaks the Arrow PyCapsule interface.
        ``merge_partials`` of the partials of every partition gives the Frame
        ``sql()`` gives on the whole table, bit for bit.

        Columns: the C library's partial (``ps_query_result_export_partial``:
        "key<k>", "agg<a>_sum", "_count", "_min", "_max"), then for each MIN /
        MAX of a string column "item<i>_string" (its string here: partitions
        have their own dictionaries). Schema metadata: the library's
        ("packscan.partial", "packscan.keys", "packscan.aggs") and what the
        merged Frame needs ("packscan.items", "packscan.frame": its columns'
        names and types). A sum past 38 digits is no error here (another
        partition may bring it back); the merge raises it. Float columns: give
        every partition the same ``float_scale`` (Table's argument), since a
        partial keeps exact sums at the scale its partition was imported
        with; ``"lossless"`` suits any doubles (each partition's exact sums
        merge whatever its magnitudes)."""
        pa = _pyarrow()
        src = statement.encode()
        err = ctypes.create_string_buffer(4096)
        items = ctypes.create_string_buffer(1024)
        structs = [_lib.alloc_struct(t) for t in (ArrowSchema, ArrowArray, ArrowSchema, ArrowArray)]
        sp, ap, psp, pap = structs
        try:
            if _lib.ps_py_select_partial(self.context.handle, self._handle(), src, len(src), sp, ap, psp, pap, items,
                                         len(items), err, len(err)) != 0:
                msg = err.value.decode(errors="replace")
                status = msg.split(":", 1)[0] if msg.startswith("PS_ERR_") else "PS_ERR_INVALID_ARGUMENT"
                raise PackscanError(status, msg)
            frame = pa.RecordBatch._import_from_c(ap, sp)
            part = pa.RecordBatch._import_from_c(pap, psp)
        finally:
            for ptr in structs:  # imported (released by pyarrow), or released here
                _lib.release_schema(ptr) if ptr in (sp, psp) else _lib.release_array(ptr)
                _lib.free_struct(ptr)
        sources = items.value.decode()
        fields, columns = list(part.schema), list(part.columns)
        for i, source in enumerate(sources.split(",")):
            if source.endswith("s"):
                fields.append(pa.field(f"item{i}_string", pa.string()))
                columns.append(frame.column(i))
        metadata = dict(part.schema.metadata or {})
        metadata[_ITEMS_KEY] = sources.encode()
        metadata[_FRAME_KEY] = frame.schema.serialize().to_pybytes()
        return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields, metadata=metadata))

    def query(self, statement: str) -> Frame:
        """Same as sql()."""
        return self.sql(statement)

    def save(self, path: str) -> None:
        """Writes the table as the command line's table file (docs/table-format.md),
        from its compressed columns as they are: ``packscan query PATH "..."``
        reads it. Date32 columns are dates, timestamps timestamps of their unit and
        decimal128 columns decimals there; date64 is a timestamp in milliseconds. A
        timestamp's time zone is kept (table file 1.3); ``read_table`` gives date64
        back as ``timestamp[ms]``.

        An existing regular file (or the file a symlink points to) is replaced
        atomically and keeps its mode; a device or FIFO (``/dev/stdout``) is
        written in place; a symlink to nothing is refused."""
        self._save(path, None)

    def _save(self, path: str, not_input: Optional[str]) -> None:
        """save(), refusing a path that is the file ``not_input`` (encode's input)."""
        err = ctypes.create_string_buffer(1024)
        if _lib.ps_py_write_table(self.context.handle, self._handle(), os.fsencode(path),
                                  None if not_input is None else os.fsencode(not_input), err, len(err)) != 0:
            raise PackscanError("PS_ERR_INVALID_ARGUMENT", err.value.decode(errors="replace"))

    def to_arrow(self, *, dictionary: bool = False) -> ArrowData:
        """Every row back as a record batch (strings as dictionaries if asked)."""
        return self.filter(None).to_arrow(dictionary=dictionary)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.to_arrow().__arrow_c_stream__(requested_schema)

    def close(self) -> None:
        """Frees the table's columns now (otherwise when it is collected)."""
        if getattr(self, "_h", None):
            _lib.ps_arrow_table_destroy(self._h)
            self._h = None
        if getattr(self, "_file", None):  # after the columns that read it
            _lib.ps_py_close_file(self._file)
            self._file = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> "Table":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<packscan.Table {len(self.columns)} columns, {self.num_rows if self._h else 'closed'} rows>"


_ITEMS_KEY = b"packscan.items"
_FRAME_KEY = b"packscan.frame"


def merge_partials(partials: Iterable[Any], *, context: Optional[Context] = None, partial: bool = False) -> Any:
    """Merges the partials of one statement (``Table.sql_partial`` on each
    partition of a table, in any order; anything pyarrow reads as a table,
    e.g. after pickling or Arrow IPC) into the Frame ``Table.sql`` gives on the
    whole table: the same groups in the same order, the same exact values,
    the same PackscanError (a sum that overflows 38 digits only once merged
    is PS_ERR_OVERFLOW, whatever each partition held). Keys merge by value,
    so partitions imported separately (their own dictionaries) merge
    correctly; MIN / MAX of a string column too (its strings are renumbered
    in one sorted order before the library merges them). Partials of another
    statement, or whose columns had other types, are refused
    (PS_ERR_INVALID_ARGUMENT). The merge runs on the host, on ``context``
    (default: the "reference" backend's).

    ``partial=True`` gives a partial instead of a Frame: the merged state in
    sql_partial's format (a pyarrow.RecordBatch), for an inner node of a tree
    of merges. Merging such partials in any grouping gives the same Frame as
    merging the leaves at once; a sum past 38 digits stays in the state (the
    final merge raises it if it still does not fit)."""
    pa = _pyarrow()
    import pyarrow.compute as pc

    tables = [p if isinstance(p, pa.Table) else pa.Table.from_batches([p]) if isinstance(p, pa.RecordBatch)
              else pa.table(p) for p in partials]
    if not tables:
        raise ValueError("merge_partials needs at least one partial")
    metadata = [t.schema.metadata or {} for t in tables]
    for i, md in enumerate(metadata):
        if _FRAME_KEY not in md or _ITEMS_KEY not in md:
            raise PackscanError("PS_ERR_INVALID_ARGUMENT", f"partial {i} is not a result of Table.sql_partial "
                                "(no packscan.frame / packscan.items in its schema's metadata)")
    frame_schema = pa.ipc.read_schema(pa.py_buffer(metadata[0][_FRAME_KEY]))
    for i, md in enumerate(metadata[1:], 1):
        if md[_ITEMS_KEY] != metadata[0][_ITEMS_KEY] or md[_FRAME_KEY] != metadata[0][_FRAME_KEY]:
            other = pa.ipc.read_schema(pa.py_buffer(md[_FRAME_KEY]))
            raise PackscanError("PS_ERR_INVALID_ARGUMENT", f"partial {i} is of another statement or of columns of "
                                f"other types than partial 0: ({_describe(other)}) vs ({_describe(frame_schema)})")
        for key in (b"packscan.keys", b"packscan.aggs"):
            if md.get(key) != metadata[0].get(key):
                raise PackscanError("PS_ERR_INVALID_ARGUMENT", f"partial {i}: {key.decode()} is "
                                    f"{md.get(key, b'').decode()!r}, partial 0's {metadata[0].get(key, b'').decode()!r} "
                                    "(scales differ: were float columns imported with different scales? "
                                    "give every partition the same float_scale)")
    sources = metadata[0][_ITEMS_KEY].decode()
    core = [n for n in tables[0].schema.names if not n.startswith("item")]
    # MIN / MAX of a string column: each partial's index names its own
    # dictionary's string; renumbered here in the strings' one sorted order
    # (bytewise, as the library sorts dictionaries), the library's merge of
    # the numbers is the merge of the strings.
    strings: Dict[int, Any] = {}
    for i, source in enumerate(sources.split(",")):
        if not source.endswith("s"):
            continue
        agg = int(source[1:-1])
        name = f"agg{agg}_min" if f"agg{agg}_min" in core else f"agg{agg}_max"
        values = pa.chunked_array([c for t in tables for c in t.column(f"item{i}_string").chunks], type=pa.string())
        uniq = pc.unique(values).drop_null()
        strings[i] = uniq = uniq.take(pc.sort_indices(uniq))
        for j, t in enumerate(tables):
            rank = pc.index_in(t.column(f"item{i}_string"), value_set=uniq)
            tables[j] = t.set_column(t.schema.get_field_index(name), t.schema.field(name),
                                     rank.cast(t.schema.field(name).type))
    ctx = _context_for(context, "reference")
    merge, result = c_void_p(), c_void_p()
    ctx.check(_lib.ps_query_merge_create(ctx.handle, byref(merge)))
    try:
        for t in tables:
            part = t.select(core).replace_schema_metadata(t.schema.metadata)
            for batch in part.to_batches() or [pa.RecordBatch.from_pylist([], schema=part.schema)]:
                sc, ac = batch.__arrow_c_array__()
                ctx.check(_lib.ps_query_merge_add(merge, _lib.capsule_pointer(sc, _lib.SCHEMA_NAME),
                                                  _lib.capsule_pointer(ac, _lib.ARRAY_NAME)))
        ctx.check((_lib.ps_query_merge_finish_partial if partial else _lib.ps_query_merge_finish)(merge, byref(result)))
    finally:
        _lib.ps_query_merge_destroy(merge)
    if partial:
        return _merged_partial(ctx, result, metadata[0], sources, strings)
    err = ctypes.create_string_buffer(1024)
    structs = [_lib.alloc_struct(t) for t in (ArrowSchema, ArrowSchema, ArrowArray)]
    lp, sp, ap = structs
    try:
        frame_schema._export_to_c(lp)
        if _lib.ps_py_merged_frame(ctx.handle, result, lp, sources.encode(), sp, ap, err, len(err)) != 0:
            raise PackscanError("PS_ERR_INVALID_ARGUMENT", err.value.decode(errors="replace"))
        out = pa.Table.from_batches([pa.RecordBatch._import_from_c(ap, sp)])
    finally:
        _lib.ps_query_result_destroy(result)
        for ptr in structs:
            _lib.release_schema(ptr) if ptr != ap else _lib.release_array(ptr)
            _lib.free_struct(ptr)
    for i, uniq in strings.items():
        out = out.set_column(i, frame_schema.field(i), pc.take(uniq, out.column(i).combine_chunks()))
    return Frame(out)


def _merged_partial(ctx: Context, result: c_void_p, metadata: Dict[bytes, bytes], sources: str,
                    strings: Dict[int, Any]) -> Any:
    """A merged result (consumed) as a partial of sql_partial's format: the
    library's export, then the strings of MIN / MAX of string columns (the
    merged state holds their rank in ``strings[i]``, the sorted strings the
    merge renumbered them into)."""
    pa = _pyarrow()
    structs = [_lib.alloc_struct(t) for t in (ArrowSchema, ArrowArray)]
    sp, ap = structs
    try:
        ctx.check(_lib.ps_query_result_export_partial(ctx.handle, result, sp, ap))
        part = pa.RecordBatch._import_from_c(ap, sp)
    finally:
        _lib.ps_query_result_destroy(result)
        for ptr in structs:  # imported (released by pyarrow), or released here
            _lib.release_schema(ptr) if ptr == sp else _lib.release_array(ptr)
            _lib.free_struct(ptr)
    fields, columns = list(part.schema), list(part.columns)
    for i, source in enumerate(sources.split(",")):
        if i in strings:
            agg = int(source[1:-1])
            name = f"agg{agg}_min" if f"agg{agg}_min" in part.schema.names else f"agg{agg}_max"
            rank = part.column(name).cast(pa.int64())
            fields.append(pa.field(f"item{i}_string", pa.string()))
            columns.append(strings[i].take(rank))
    out_md = dict(part.schema.metadata or {})
    out_md[_ITEMS_KEY] = metadata[_ITEMS_KEY]
    out_md[_FRAME_KEY] = metadata[_FRAME_KEY]
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields, metadata=out_md))


def _describe(schema: Any) -> str:
    return ", ".join(f"{f.name}: {f.type}" for f in schema)


class _Opened:
    def __init__(self, handle: int, file: Optional[int] = None) -> None:
        self.handle = handle
        self.file = file  # the mapped file host-resident columns read, closed after them


def read_table(path: str, *, context: Optional[Context] = None, backend: Optional[str] = None,
               host_resident: bool = False) -> Table:
    """Opens a table file of the command line (``packscan encode``, Table.save)
    as a Table, its compressed columns used as they are (checksums verified).
    ``host_resident=True``: the columns are not copied to the device but read
    from the file's memory map, streamed through the context's
    ``device_memory_limit`` by every call, for tables larger than the device
    (DELTA columns are still copied); the results are the same. The file stays
    mapped until the table is closed."""
    ctx = _context_for(context, backend)
    out, file = c_void_p(), c_void_p()
    err = ctypes.create_string_buffer(1024)
    if host_resident:
        rc = _lib.ps_py_read_table_host(ctx.handle, os.fsencode(path), byref(out), byref(file), err, len(err))
    else:
        rc = _lib.ps_py_read_table(ctx.handle, os.fsencode(path), byref(out), err, len(err))
    if rc != 0:
        raise PackscanError("PS_ERR_INVALID_ARGUMENT", err.value.decode(errors="replace"))
    return Table(_Opened(out.value, file.value), context=ctx)


def encode(data: Any, **kwargs: Any) -> Table:
    """Same as Table(data, **kwargs)."""
    return Table(data, **kwargs)


class Result(_TableOps):
    """The rows a predicate selects. Speaks the Arrow PyCapsule interface as
    the table of the selected rows (``pyarrow.table(result)``,
    ``polars.DataFrame(result)``, DuckDB's ``FROM result``; ``polars.from_arrow``
    reads any non-pyarrow object as a Series, of structs here); ``select``,
    ``head``, ``sort``, ``to_pandas`` as Frame."""

    def __init__(self, table: Table, predicate: Optional[Predicate]) -> None:
        self.table = table
        self.predicate = predicate
        self._count: Optional[int] = None

    def _with_expr(self, fn: Callable[[Optional[int]], Any]) -> Any:
        e = self.predicate._build(self.table) if self.predicate is not None else None
        try:
            return fn(e)
        finally:
            if e:
                _lib.ps_expr_destroy(e)

    @property
    def count(self) -> int:
        """Number of selected rows."""
        if self._count is None:
            if self.predicate is None:
                self._count = self.table.num_rows
            else:
                def run(e: Optional[int]) -> int:
                    c = c_uint64()
                    self.table.context.check(_lib.ps_filter_count(self.table.context.handle, e, byref(c)))
                    return c.value

                self._count = self._with_expr(run)
        return self._count

    def __len__(self) -> int:
        return self.count

    def to_arrow(self, *, dictionary: bool = False) -> ArrowData:
        """The selected rows of every column as a record batch."""
        t = self.table

        def produce(sp: int, ap: int) -> None:
            self._with_expr(lambda e: t.context.check(_lib.ps_arrow_export_filter(
                t.context.handle, t._handle(), e, int(dictionary), ctypes.cast(sp, ctypes.POINTER(ArrowSchema)),
                ctypes.cast(ap, ctypes.POINTER(ArrowArray)))))

        return ArrowData(produce, t, "record batch")

    def selection(self) -> ArrowData:
        """The selection as an Arrow boolean array (one entry per table row)."""
        t = self.table
        if self.predicate is None:
            raise ValueError("a filter without a predicate selects every row")

        def produce(sp: int, ap: int) -> None:
            self._with_expr(lambda e: t.context.check(_lib.ps_arrow_export_selection(
                t.context.handle, e, ctypes.cast(sp, ctypes.POINTER(ArrowSchema)),
                ctypes.cast(ap, ctypes.POINTER(ArrowArray)), None)))

        return ArrowData(produce, t, "boolean array")

    def row_ids(self, dtype: str = "uint64") -> ArrowData:
        """Ids of the selected rows, ascending, as an Arrow uint32 or uint64 array."""
        if dtype not in ("uint32", "uint64"):
            raise ValueError("dtype must be 'uint32' or 'uint64'")
        if self.predicate is None:
            raise ValueError("a filter without a predicate selects every row")
        t = self.table
        it = _lib.INDEX_UINT32 if dtype == "uint32" else _lib.INDEX_UINT64

        def produce(sp: int, ap: int) -> None:
            self._with_expr(lambda e: t.context.check(_lib.ps_arrow_export_row_ids(
                t.context.handle, e, it, ctypes.cast(sp, ctypes.POINTER(ArrowSchema)),
                ctypes.cast(ap, ctypes.POINTER(ArrowArray)))))

        return ArrowData(produce, t, "row ids")

    def to_numpy(self, *, decimals: str = "object") -> Dict[str, Any]:
        """The selected rows as numpy arrays, by column name (decimals as in
        ArrowData.to_numpy)."""
        return self.to_arrow().to_numpy(decimals=decimals)

    def _gather(self, column: int, ids: Any, dictionary: bool) -> Any:
        """Rows ids (a contiguous numpy uint64 array) of one column, as pyarrow."""
        pa, t = _pyarrow(), self.table
        sp, ap = _lib.alloc_struct(ArrowSchema), _lib.alloc_struct(ArrowArray)
        try:
            t.context.check(_lib.ps_arrow_export_gather(
                t.context.handle, t._handle(), column, ids.ctypes.data if len(ids) else None, _lib.INDEX_UINT64,
                len(ids), int(dictionary), ctypes.cast(sp, ctypes.POINTER(ArrowSchema)),
                ctypes.cast(ap, ctypes.POINTER(ArrowArray))))
            return pa.Array._import_from_c(ap, sp)
        finally:
            _lib.free_struct(sp)
            _lib.free_struct(ap)

    def to_batches(self, batch_rows: Optional[int] = None, *, dictionary: bool = False) -> Iterator[Any]:
        """The selected rows as pyarrow record batches of at most batch_rows
        rows each (default STREAM_BATCH_ROWS), made one at a time as the
        iterator is advanced: memory holds the selected rows' ids (8 bytes a
        row) and one batch, never the whole result. No batch when no row is
        selected."""
        if batch_rows is None:
            batch_rows = STREAM_BATCH_ROWS
        if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows < 1:
            raise ValueError(f"batch_rows must be an int >= 1, not {batch_rows!r}")
        pa = _pyarrow()
        names = self.table.columns
        if self.predicate is None:
            ids, n = None, self.table.num_rows
        else:
            ids = np.asarray(pa.array(self.row_ids("uint64")))
            n = len(ids)
        for start in range(0, n, batch_rows):
            stop = min(n, start + batch_rows)
            chunk = np.arange(start, stop, dtype=np.uint64) if ids is None else \
                np.ascontiguousarray(ids[start:stop], dtype=np.uint64)
            yield pa.RecordBatch.from_arrays([self._gather(c, chunk, dictionary) for c in range(len(names))],
                                             names=names)

    def reader(self, batch_rows: Optional[int] = None, *, dictionary: bool = False) -> Any:
        """The selected rows as a pyarrow.RecordBatchReader over to_batches:
        a stream that DuckDB, polars and pyarrow consume batch by batch."""
        pa = _pyarrow()
        empty = np.zeros(0, dtype=np.uint64)
        schema = pa.schema([pa.field(name, self._gather(c, empty, dictionary).type)
                            for c, name in enumerate(self.table.columns)])
        return pa.RecordBatchReader.from_batches(schema, self.to_batches(batch_rows, dictionary=dictionary))

    def __arrow_c_array__(self, requested_schema: Any = None) -> Tuple[Any, Any]:
        return self.to_arrow().__arrow_c_array__(requested_schema)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """One record batch, or past STREAM_BATCH_ROWS selected rows (with
        pyarrow installed) a stream of batches of that many rows made as the
        consumer reads them."""
        if self.count > STREAM_BATCH_ROWS:
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                pass
            else:
                return self.reader().__arrow_c_stream__(requested_schema)
        return self.to_arrow().__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        return f"<packscan.Result of {self.predicate!r}>"
