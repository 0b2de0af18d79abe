"""mx.nd.save / mx.nd.load: MXNet's .params files (a list or a dict of arrays)."""
from __future__ import annotations

import ctypes
import os
from typing import Dict, List, Union

from ..base import _LIB, NDArrayHandle, c_handle_array, c_str, c_str_array, check_call, mx_uint, \
    py_str_list
from .ndarray import NDArray


def save(fname: Union[str, os.PathLike], data) -> None:
    """Writes an NDArray, a list of them or a dict name -> NDArray in MXNet's
    .params format (written to a temporary name and renamed into place)."""
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, dict):
        keys = list(data)
        arrays = [data[k] for k in keys]
        for k in keys:
            if not isinstance(k, str):
                raise TypeError(f"mx.nd.save: dict keys must be str, got {type(k).__name__}")
        c_keys = c_str_array(keys)
    elif isinstance(data, (list, tuple)):
        arrays, c_keys = list(data), None
    else:
        raise TypeError("mx.nd.save: data must be an NDArray, a list or a dict of NDArrays")
    for a in arrays:
        if not isinstance(a, NDArray):
            raise TypeError(f"mx.nd.save: every value must be an NDArray, got {type(a).__name__}")
    check_call(_LIB.MXNDArraySave(c_str(os.fspath(fname)), mx_uint(len(arrays)),
                                  c_handle_array(arrays), c_keys))


def load(fname: Union[str, os.PathLike]) -> Union[List[NDArray], Dict[str, NDArray]]:
    """Reads a .params / .nd file (mx's or MXNet's): a dict when the arrays
    have names, else a list. The arrays are on the CPU."""
    size = mx_uint()
    handles = ctypes.POINTER(ctypes.c_void_p)()
    name_size = mx_uint()
    names = ctypes.POINTER(ctypes.c_char_p)()
    check_call(_LIB.MXNDArrayLoad(c_str(os.fspath(fname)), ctypes.byref(size),
                                  ctypes.byref(handles), ctypes.byref(name_size),
                                  ctypes.byref(names)))
    arrays = [NDArray(NDArrayHandle(handles[i])) for i in range(size.value)]
    if name_size.value == 0:
        return arrays
    return dict(zip(py_str_list(name_size.value, names), arrays))
