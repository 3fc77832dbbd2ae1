"""ctypes declarations of the C library (libpackscan_py: include/packscan.h,
include/packscan_arrow.h and the shim of python/src/packscan_py.c), the Arrow
C ABI structs, and Arrow PyCapsule helpers.

ctypes rather than a CPython extension: the library's API is plain C with
out-parameters, the Arrow exchange is C structs and function pointers either
way, and ctypes releases the GIL around every foreign call (so evaluation on a
device never holds it), while the native library stays independent of the
Python version (one build for every interpreter).
"""

from __future__ import annotations

import ctypes
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t,
                    c_uint32, c_uint64, c_void_p)

# ---- the Arrow C ABI ---------------------------------------------------------


class ArrowSchema(Structure):
    pass


ArrowSchema._fields_ = [
    ("format", c_char_p),
    ("name", c_char_p),
    ("metadata", c_char_p),
    ("flags", c_int64),
    ("n_children", c_int64),
    ("children", POINTER(POINTER(ArrowSchema))),
    ("dictionary", POINTER(ArrowSchema)),
    ("release", c_void_p),
    ("private_data", c_void_p),
]


class ArrowArray(Structure):
    pass


ArrowArray._fields_ = [
    ("length", c_int64),
    ("null_count", c_int64),
    ("offset", c_int64),
    ("n_buffers", c_int64),
    ("n_children", c_int64),
    ("buffers", POINTER(c_void_p)),
    ("children", POINTER(POINTER(ArrowArray))),
    ("dictionary", POINTER(ArrowArray)),
    ("release", c_void_p),
    ("private_data", c_void_p),
]


class ArrowArrayStream(Structure):
    _fields_ = [
        ("get_schema", c_void_p),
        ("get_next", c_void_p),
        ("get_last_error", c_void_p),
        ("release", c_void_p),
        ("private_data", c_void_p),
    ]


_RELEASE_SCHEMA = CFUNCTYPE(None, POINTER(ArrowSchema))
_RELEASE_ARRAY = CFUNCTYPE(None, POINTER(ArrowArray))
_RELEASE_STREAM = CFUNCTYPE(None, POINTER(ArrowArrayStream))


class ImportOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("float_scale", c_int), ("nan_as_null", c_int), ("encoding", c_int)]


class ArrowField(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("format", c_char_p),
        ("kind", c_int),
        ("type", c_int),
        ("scale", c_uint32),
        ("precision", c_uint32),
        ("unit", c_int),
        ("timezone", c_char_p),
    ]


class Allocator(Structure):
    _fields_ = [("alloc", c_void_p), ("free", c_void_p), ("opaque", c_void_p)]


class ContextOptions(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("backend", c_char_p),
        ("opencl_platform", c_int32),
        ("opencl_device", c_int32),
        ("cuda_device", c_int32),
        ("allocator", Allocator),
        ("max_chunk_rows", c_uint64),
        ("kernel_cache_dir", c_char_p),
        ("query_compile", c_int32),
        ("zone_pruning", c_int32),
        ("device_memory_limit", c_uint64),
        ("max_groups", c_uint64),
        ("device_count", c_uint32),
        ("devices", POINTER(c_int32)),
        ("progress", c_void_p),
        ("progress_user", c_void_p),
        ("opencl_platform_name", c_char_p),
    ]


class Literal(Structure):
    class _V(ctypes.Union):
        class _S(Structure):
            _fields_ = [("ptr", c_char_p), ("len", c_size_t)]

        class _D(Structure):
            _fields_ = [("lo", c_uint64), ("hi", c_int64), ("scale", c_uint32)]

        _fields_ = [("i", c_int64), ("u", c_uint64), ("f", c_double), ("s", _S), ("d", _D)]

    _fields_ = [("kind", c_int), ("v", _V)]


LIT_INT64, LIT_UINT64, LIT_FLOAT64, LIT_STRING, LIT_DECIMAL = 1, 2, 3, 4, 5
CMP = {"==": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
INDEX_UINT32, INDEX_UINT64 = 4, 8

# Arrow kinds (ps_arrow_kind) and packscan types (ps_type).
KIND_NAMES = {1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "uint8", 6: "uint16", 7: "uint32", 8: "uint64",
              9: "float32", 10: "float64", 11: "decimal128", 12: "date32", 13: "date64", 14: "timestamp",
              15: "utf8", 16: "large_utf8", 17: "string_view", 18: "dictionary"}
TYPE_STRING = 11
TYPE_UNSIGNED = {5, 6, 7, 8}
TYPE_FLOAT = {9, 10}
UNIT_NAMES = {0: None, 1: "D", 2: "s", 3: "ms", 4: "us", 5: "ns"}

# ---- loading ---------------------------------------------------------------------


def _load() -> ctypes.CDLL:
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.environ.get("PACKSCAN_LIBRARY") or os.path.join(here, "libpackscan_py.so")
    return ctypes.CDLL(path)


lib = _load()
_ctx_p, _tab_p, _expr_p, _col_p = c_void_p, c_void_p, c_void_p, c_void_p


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


ps_status_name = _fn("ps_status_name", c_char_p, c_int)
ps_version_string = _fn("ps_version_string", c_char_p)
ps_backend_count = _fn("ps_backend_count", c_size_t)
ps_backend_name = _fn("ps_backend_name", c_char_p, c_size_t)
ps_context_options_init_sized = _fn("ps_context_options_init_sized", None, POINTER(ContextOptions), c_size_t)
ps_context_create = _fn("ps_context_create", c_int, POINTER(ContextOptions), c_char_p, c_size_t, POINTER(c_void_p))
ps_context_destroy = _fn("ps_context_destroy", None, _ctx_p)
ps_context_backend = _fn("ps_context_backend", c_char_p, _ctx_p)
ps_context_device = _fn("ps_context_device", c_char_p, _ctx_p)
ps_context_last_error = _fn("ps_context_last_error", c_char_p, _ctx_p)

ps_arrow_import_options_init = _fn("ps_arrow_import_options_init", None, POINTER(ImportOptions))
ps_arrow_import = _fn("ps_arrow_import", c_int, _ctx_p, c_void_p, c_void_p, POINTER(ImportOptions), POINTER(c_void_p))
ps_arrow_import_stream = _fn("ps_arrow_import_stream", c_int, _ctx_p, c_void_p, POINTER(ImportOptions),
                             POINTER(c_void_p))
ps_arrow_table_destroy = _fn("ps_arrow_table_destroy", None, _tab_p)
ps_arrow_table_columns = _fn("ps_arrow_table_columns", c_size_t, _tab_p)
ps_arrow_table_rows = _fn("ps_arrow_table_rows", c_uint64, _tab_p)
ps_arrow_table_column = _fn("ps_arrow_table_column", _col_p, _tab_p, c_size_t)
ps_column_zones = _fn("ps_column_zones", c_int, _col_p, c_void_p)
ps_arrow_table_field = _fn("ps_arrow_table_field", POINTER(ArrowField), _tab_p, c_size_t)

ps_arrow_export_selection = _fn("ps_arrow_export_selection", c_int, _ctx_p, _expr_p, POINTER(ArrowSchema),
                                POINTER(ArrowArray), POINTER(c_uint64))
ps_arrow_export_row_ids = _fn("ps_arrow_export_row_ids", c_int, _ctx_p, _expr_p, c_int, POINTER(ArrowSchema),
                              POINTER(ArrowArray))
ps_arrow_export_gather = _fn("ps_arrow_export_gather", c_int, _ctx_p, _tab_p, c_size_t, c_void_p, c_int, c_uint64,
                             c_int, POINTER(ArrowSchema), POINTER(ArrowArray))
ps_arrow_export_filter = _fn("ps_arrow_export_filter", c_int, _ctx_p, _tab_p, _expr_p, c_int, POINTER(ArrowSchema),
                             POINTER(ArrowArray))
ps_arrow_export_aggregates = _fn("ps_arrow_export_aggregates", c_int, _ctx_p, _tab_p, c_size_t, _expr_p,
                                 POINTER(ArrowSchema), POINTER(ArrowArray))

ps_expr_compare = _fn("ps_expr_compare", c_int, _ctx_p, _col_p, c_int, Literal, POINTER(c_void_p))
ps_expr_compare_columns = _fn("ps_expr_compare_columns", c_int, _ctx_p, _col_p, c_int, _col_p, POINTER(c_void_p))
ps_expr_between = _fn("ps_expr_between", c_int, _ctx_p, _col_p, Literal, Literal, POINTER(c_void_p))
ps_expr_in = _fn("ps_expr_in", c_int, _ctx_p, _col_p, POINTER(Literal), c_size_t, POINTER(c_void_p))
ps_expr_like = _fn("ps_expr_like", c_int, _ctx_p, _col_p, c_char_p, c_size_t, c_int, c_int, POINTER(c_void_p))
ps_expr_is_null = _fn("ps_expr_is_null", c_int, _ctx_p, _col_p, c_int, POINTER(c_void_p))
ps_expr_and = _fn("ps_expr_and", c_int, _ctx_p, _expr_p, _expr_p, POINTER(c_void_p))
ps_expr_or = _fn("ps_expr_or", c_int, _ctx_p, _expr_p, _expr_p, POINTER(c_void_p))
ps_expr_not = _fn("ps_expr_not", c_int, _ctx_p, _expr_p, POINTER(c_void_p))
ps_expr_destroy = _fn("ps_expr_destroy", None, _expr_p)
ps_filter_count = _fn("ps_filter_count", c_int, _ctx_p, _expr_p, POINTER(c_uint64))

ps_py_where = _fn("ps_py_where", c_int, _ctx_p, _tab_p, c_char_p, c_size_t, POINTER(c_void_p), c_char_p, c_size_t,
                  POINTER(c_size_t))
ps_py_write_table = _fn("ps_py_write_table", c_int, _ctx_p, _tab_p, c_char_p, c_char_p, c_char_p, c_size_t)
ps_py_check_output = _fn("ps_py_check_output", c_int, c_char_p, c_char_p, c_char_p, c_size_t)
ps_py_output_is_stdout = _fn("ps_py_output_is_stdout", c_int, c_char_p)
ps_py_read_table = _fn("ps_py_read_table", c_int, _ctx_p, c_char_p, POINTER(c_void_p), c_char_p, c_size_t)
ps_py_read_table_host = _fn("ps_py_read_table_host", c_int, _ctx_p, c_char_p, POINTER(c_void_p), POINTER(c_void_p),
                            c_char_p, c_size_t)
ps_py_close_file = _fn("ps_py_close_file", None, c_void_p)
ps_py_stream_from_batch = _fn("ps_py_stream_from_batch", c_int, POINTER(ArrowSchema), POINTER(ArrowArray),
                              POINTER(ArrowArrayStream))
ps_py_select = _fn("ps_py_select", c_int, _ctx_p, _tab_p, c_char_p, c_size_t, c_void_p, c_void_p, c_char_p, c_size_t)
ps_py_select_partial = _fn("ps_py_select_partial", c_int, _ctx_p, _tab_p, c_char_p, c_size_t, c_void_p, c_void_p,
                           c_void_p, c_void_p, c_char_p, c_size_t, c_char_p, c_size_t)
ps_py_merged_frame = _fn("ps_py_merged_frame", c_int, _ctx_p, c_void_p, c_void_p, c_char_p, c_void_p, c_void_p,
                         c_char_p, c_size_t)
ps_query_merge_create = _fn("ps_query_merge_create", c_int, _ctx_p, POINTER(c_void_p))
ps_query_merge_add = _fn("ps_query_merge_add", c_int, c_void_p, c_void_p, c_void_p)
ps_query_merge_finish = _fn("ps_query_merge_finish", c_int, c_void_p, POINTER(c_void_p))
ps_query_merge_finish_partial = _fn("ps_query_merge_finish_partial", c_int, c_void_p, POINTER(c_void_p))
ps_query_result_export_partial = _fn("ps_query_result_export_partial", c_int, _ctx_p, c_void_p, c_void_p, c_void_p)
ps_query_merge_destroy = _fn("ps_query_merge_destroy", None, c_void_p)
ps_query_result_destroy = _fn("ps_query_result_destroy", None, c_void_p)
ps_py_hold = _fn("ps_py_hold", c_void_p, c_void_p, c_void_p)
ps_py_unhold = _fn("ps_py_unhold", None, c_void_p)
ps_py_held_export = _fn("ps_py_held_export", c_int, c_void_p, c_void_p, c_void_p)
ps_py_auto_backend = _fn("ps_py_auto_backend", c_int, c_uint64, c_char_p, c_size_t, c_char_p, c_size_t, c_char_p,
                         c_size_t)
ps_py_auto_device_rows = _fn("ps_py_auto_device_rows", c_uint64)
ps_py_cli_main = _fn("ps_py_cli_main", c_int, c_int, POINTER(c_char_p))

# ---- PyCapsules ----------------------------------------------------------------------

_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
_api.PyCapsule_IsValid.restype = c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, c_char_p]

_raw_get_pointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", _api))
_libc = ctypes.CDLL(None)
_libc.malloc.restype = c_void_p
_libc.malloc.argtypes = [c_size_t]
_libc.free.restype = None
_libc.free.argtypes = [c_void_p]

# ps_encode_for's and the Arrow import's float scale that always takes the lossless mapping
# (PS_FLOAT_SCALE_LOSSLESS, packscan.h)
FLOAT_SCALE_LOSSLESS = -2

# Capsule names must outlive the capsules: module-level bytes.
SCHEMA_NAME = b"arrow_schema"
ARRAY_NAME = b"arrow_array"
STREAM_NAME = b"arrow_array_stream"

_DESTRUCTOR = ctypes.PYFUNCTYPE(None, c_void_p)


def _make_destructor(name: bytes, struct_type, release_type):
    def destroy(capsule_ptr):
        ptr = _raw_get_pointer(capsule_ptr, name)
        if not ptr:
            return
        obj = struct_type.from_address(ptr)
        if obj.release:
            release_type(obj.release)(ctypes.cast(ptr, POINTER(struct_type)))
        _libc.free(ptr)

    return _DESTRUCTOR(destroy)


_destroy_schema = _make_destructor(SCHEMA_NAME, ArrowSchema, _RELEASE_SCHEMA)
_destroy_array = _make_destructor(ARRAY_NAME, ArrowArray, _RELEASE_ARRAY)
_destroy_stream = _make_destructor(STREAM_NAME, ArrowArrayStream, _RELEASE_STREAM)


def alloc_struct(struct_type):
    """A zeroed struct in malloc'd memory (a capsule frees it with free)."""
    ptr = _libc.malloc(ctypes.sizeof(struct_type))
    if not ptr:
        raise MemoryError("allocating an Arrow C struct")
    ctypes.memset(ptr, 0, ctypes.sizeof(struct_type))
    return ptr


def free_struct(ptr) -> None:
    _libc.free(ptr)


def capsule(ptr: int, name: bytes):
    """Wraps a malloc'd Arrow struct; the capsule releases and frees it."""
    destructor = {SCHEMA_NAME: _destroy_schema, ARRAY_NAME: _destroy_array, STREAM_NAME: _destroy_stream}[name]
    return _api.PyCapsule_New(ptr, name, ctypes.cast(destructor, c_void_p))


def capsule_pointer(cap, name: bytes) -> int:
    if not _api.PyCapsule_IsValid(cap, name):
        raise TypeError(f"expected a PyCapsule named {name.decode()!r}")
    return _api.PyCapsule_GetPointer(cap, name)


def release_schema(ptr: int) -> None:
    s = ArrowSchema.from_address(ptr)
    if s.release:
        _RELEASE_SCHEMA(s.release)(ctypes.cast(ptr, POINTER(ArrowSchema)))


def release_array(ptr: int) -> None:
    a = ArrowArray.from_address(ptr)
    if a.release:
        _RELEASE_ARRAY(a.release)(ctypes.cast(ptr, POINTER(ArrowArray)))
