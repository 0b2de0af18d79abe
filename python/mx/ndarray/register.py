"""Generates mx.nd's operator functions from the registry (op_info), as
MXNet generates them from its C API at import: ``mx.nd.FullyConnected(data,
weight, bias, num_hidden=10, out=None)``."""
from __future__ import annotations

import ctypes
from typing import Callable, Dict, List

from ..base import _LIB, NDArrayHandle, c_handle_array, c_str_array, check_call
from ..op_info import OpInfo, op_infos, split_call
from .ndarray import NDArray


def invoke(info: OpInfo, inputs: List[NDArray], params: Dict[str, str], out=None):
    """MXImperativeInvoke: the outputs are new arrays, or `out` (an array or
    a list of them) receives them. One output comes back as an NDArray, more
    as a list."""
    in_handles = c_handle_array(inputs)
    keys = c_str_array(list(params))
    vals = c_str_array(list(params.values()))
    if out is not None:
        outs = [out] if isinstance(out, NDArray) else list(out)
        for o in outs:
            if not isinstance(o, NDArray):
                raise TypeError(f"{info.name}: out must be NDArrays, got {type(o).__name__}")
        out_array = c_handle_array(outs)
        out_ptr = ctypes.cast(out_array, ctypes.POINTER(ctypes.c_void_p))
        num_out = ctypes.c_int(len(outs))
    else:
        out_ptr = ctypes.POINTER(ctypes.c_void_p)()
        num_out = ctypes.c_int(0)
    check_call(_LIB.MXImperativeInvoke(info.handle, ctypes.c_int(len(inputs)), in_handles,
                                       ctypes.byref(num_out), ctypes.byref(out_ptr),
                                       ctypes.c_int(len(params)), keys, vals))
    if out is not None:
        return out
    results = [NDArray(NDArrayHandle(out_ptr[i])) for i in range(num_out.value)]
    return results[0] if len(results) == 1 else results


def make_function(info: OpInfo) -> Callable:
    def op_function(*args, out=None, name=None, **kwargs):
        inputs, _, params = split_call(info, args, kwargs, NDArray)
        return invoke(info, inputs, params, out)

    op_function.__name__ = info.name
    op_function.__qualname__ = info.name
    op_function.__doc__ = info.docstring("NDArray")
    try:
        op_function.__signature__ = info.signature("NDArray")
    except ValueError:  # a name Python cannot spell as a parameter: no signature shown
        pass
    op_function.__module__ = "mx.ndarray"
    return op_function


def generate() -> Dict[str, Callable]:
    """A function per operator name and alias."""
    return {name: make_function(info) for name, info in op_infos().items()}
