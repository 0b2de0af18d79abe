"""The ctypes boundary: the loaded library, error checking, handle types and
the conversions every module needs (strings, lists of handles)."""
from __future__ import annotations

import atexit
import ctypes
from typing import Iterable, List, Sequence

from .libinfo import load_library

__all__ = ["MXNetError", "check_call", "c_str", "c_str_array", "py_str", "c_array",
           "c_handle_array", "mx_uint", "mx_float", "NDArrayHandle", "SymbolHandle",
           "ExecutorHandle", "KVStoreHandle", "DataIterHandle", "OpHandle"]


class MXNetError(RuntimeError):
    """An error reported by libmx (the message of MXGetLastError), under
    MXNet's name so that ``except mx.base.MXNetError`` works as it did."""


_LIB = load_library()
_LIB.MXGetLastError.restype = ctypes.c_char_p
# Pushed operations finish before the interpreter exits (as MXNet's front end does).
atexit.register(_LIB.MXNotifyShutdown)

mx_uint = ctypes.c_uint
mx_float = ctypes.c_float
NDArrayHandle = ctypes.c_void_p
SymbolHandle = ctypes.c_void_p
ExecutorHandle = ctypes.c_void_p
KVStoreHandle = ctypes.c_void_p
DataIterHandle = ctypes.c_void_p
OpHandle = ctypes.c_void_p


def check_call(ret: int) -> None:
    """Raises MXNetError with libmx's message when a C call returned -1."""
    if ret != 0:
        raise MXNetError(py_str(_LIB.MXGetLastError()))


def c_str(s: str) -> bytes:
    return s.encode("utf-8")


def py_str(b: bytes) -> str:
    return b.decode("utf-8")


def c_str_array(strings: Sequence[str]):
    """A `const char**` of the strings (keeps the bytes alive with the array)."""
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [c_str(s) for s in strings]
    return arr


def c_array(ctype, values: Iterable):
    values = list(values)
    return (ctype * len(values))(*values)


def c_handle_array(objects: Sequence) -> ctypes.Array:
    """A `void**` of the objects' handles (None gives a NULL entry)."""
    return c_array(ctypes.c_void_p, [o.handle if o is not None else None for o in objects])


def py_str_list(size: int, array) -> List[str]:
    """A list of `size` strings from a returned `const char**`."""
    return [py_str(array[i]) for i in range(size)]
