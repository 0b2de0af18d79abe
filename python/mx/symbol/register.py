"""Generates mx.sym's operator functions from the registry (op_info):
``mx.sym.FullyConnected(data=x, num_hidden=10, name='fc1')`` makes the
operator's node and composes it with the given symbols; inputs not given
become variables named NAME_INPUT (fc1_weight), as in MXNet."""
from __future__ import annotations

import ctypes
import threading
from typing import Callable, Dict, Optional

from ..base import _LIB, SymbolHandle, c_handle_array, c_str, c_str_array, check_call, mx_uint
from ..op_info import OpInfo, op_infos, split_call
from .symbol import Symbol


class NameManager:
    """Default node names: the operator's name in lower case and a counter
    per name (fullyconnected0, fullyconnected1), as MXNet's NameManager."""

    _local = threading.local()

    def __init__(self):
        self._counter: Dict[str, int] = {}

    def get(self, name: Optional[str], hint: str) -> str:
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    @classmethod
    def current(cls) -> "NameManager":
        if not hasattr(cls._local, "value"):
            cls._local.value = NameManager()
        return cls._local.value


def compose(info: OpInfo, inputs, names, params: Dict[str, str], name: Optional[str],
            attr: Optional[Dict[str, str]]) -> Symbol:
    handle = SymbolHandle()
    check_call(_LIB.MXSymbolCreateAtomicSymbol(info.handle, mx_uint(len(params)),
                                               c_str_array(list(params)),
                                               c_str_array(list(params.values())),
                                               ctypes.byref(handle)))
    sym = Symbol(handle)
    node_name = NameManager.current().get(name, info.name.lower())
    keys = c_str_array(names) if names is not None else None
    check_call(_LIB.MXSymbolCompose(sym.handle, c_str(node_name), mx_uint(len(inputs)), keys,
                                    c_handle_array(inputs)))
    if attr:
        sym._set_attr(**attr)
    return sym


def make_function(info: OpInfo) -> Callable:
    def op_function(*args, name=None, attr=None, **kwargs):
        inputs, names, params = split_call(info, args, kwargs, Symbol)
        return compose(info, inputs, names, params, name, attr)

    op_function.__name__ = info.name
    op_function.__qualname__ = info.name
    op_function.__doc__ = info.docstring("Symbol")
    try:
        op_function.__signature__ = info.signature("Symbol")
    except ValueError:  # a name Python cannot spell as a parameter: no signature shown
        pass
    op_function.__module__ = "mx.symbol"
    return op_function


def generate() -> Dict[str, Callable]:
    return {name: make_function(info) for name, info in op_infos().items()}
