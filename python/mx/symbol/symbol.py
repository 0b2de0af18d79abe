"""Symbol: a declarative graph of operators with free variables, bound to
arrays later (Symbol.bind / simple_bind -> Executor). MXNet's JSON format."""
from __future__ import annotations

import ctypes
import os
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..base import (_LIB, MXNetError, SymbolHandle, c_array, c_handle_array, c_str, c_str_array,
                    check_call, mx_uint, py_str, py_str_list)
from ..context import Context, as_context
from ..ndarray import zeros
from ..ndarray.ndarray import DTYPE_MX_TO_NP, DTYPE_NP_TO_MX

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json", "load_yaml"]


class Symbol:
    """A graph's outputs (one or more), built from variables and operators."""

    __slots__ = ("handle",)

    def __init__(self, handle: SymbolHandle):
        self.handle = handle

    def __del__(self):
        if getattr(self, "handle", None) is not None and _LIB is not None:
            _LIB.MXSymbolFree(self.handle)
            self.handle = None

    def __copy__(self) -> "Symbol":
        handle = SymbolHandle()
        check_call(_LIB.MXSymbolCopy(self.handle, ctypes.byref(handle)))
        return Symbol(handle)

    def __deepcopy__(self, memo) -> "Symbol":
        return self.__copy__()

    def __repr__(self) -> str:
        name = self.name
        if name is None:
            return "<Symbol group [" + ", ".join(self.list_outputs()) + "]>"
        return f"<Symbol {name}>"

    # ---- what it is --------------------------------------------------------
    @property
    def name(self) -> Optional[str]:
        out = ctypes.c_char_p()
        success = ctypes.c_int()
        check_call(_LIB.MXSymbolGetName(self.handle, ctypes.byref(out), ctypes.byref(success)))
        return py_str(out.value) if success.value else None

    def attr(self, key: str) -> Optional[str]:
        out = ctypes.c_char_p()
        success = ctypes.c_int()
        check_call(_LIB.MXSymbolGetAttr(self.handle, c_str(key), ctypes.byref(out),
                                        ctypes.byref(success)))
        return py_str(out.value) if success.value else None

    def _set_attr(self, **kwargs) -> None:
        for key, value in kwargs.items():
            check_call(_LIB.MXSymbolSetAttr(self.handle, c_str(key), c_str(str(value))))

    def _list(self, fn) -> List[str]:
        size = mx_uint()
        arr = ctypes.POINTER(ctypes.c_char_p)()
        check_call(fn(self.handle, ctypes.byref(size), ctypes.byref(arr)))
        return py_str_list(size.value, arr)

    def list_arguments(self) -> List[str]:
        return self._list(_LIB.MXSymbolListArguments)

    def list_outputs(self) -> List[str]:
        return self._list(_LIB.MXSymbolListOutputs)

    def list_auxiliary_states(self) -> List[str]:
        return self._list(_LIB.MXSymbolListAuxiliaryStates)

    def list_inputs(self) -> List[str]:
        return self.list_arguments() + self.list_auxiliary_states()

    @property
    def num_outputs(self) -> int:
        n = mx_uint()
        check_call(_LIB.MXSymbolGetNumOutputs(self.handle, ctypes.byref(n)))
        return n.value

    def __len__(self) -> int:
        return self.num_outputs

    def __getitem__(self, index: Union[int, str]) -> "Symbol":
        if isinstance(index, str):
            names = self.list_outputs()
            if index not in names:
                raise ValueError(f"no output named '{index}' (outputs: {', '.join(names)})")
            index = names.index(index)
        if not 0 <= index < self.num_outputs:
            raise IndexError(f"output {index} of a symbol with {self.num_outputs} outputs")
        handle = SymbolHandle()
        check_call(_LIB.MXSymbolGetOutput(self.handle, mx_uint(index), ctypes.byref(handle)))
        return Symbol(handle)

    def __iter__(self):
        return (self[i] for i in range(self.num_outputs))

    def get_internals(self) -> "Symbol":
        handle = SymbolHandle()
        check_call(_LIB.MXSymbolGetInternals(self.handle, ctypes.byref(handle)))
        return Symbol(handle)

    # ---- files -------------------------------------------------------------
    def tojson(self) -> str:
        out = ctypes.c_char_p()
        check_call(_LIB.MXSymbolSaveToJSON(self.handle, ctypes.byref(out)))
        return py_str(out.value)

    def save(self, fname: Union[str, os.PathLike], remove_amp_cast: bool = True) -> None:
        check_call(_LIB.MXSymbolSaveToFile(self.handle, c_str(os.fspath(fname))))

    # ---- inference ---------------------------------------------------------
    def _arg_keys(self, args, kwargs) -> Tuple[Optional[List[str]], list]:
        if args and kwargs:
            raise ValueError("give the shapes or types by position or by name, not both")
        if kwargs:
            return list(kwargs), list(kwargs.values())
        return None, list(args)

    def infer_shape_partial(self, *args, **kwargs):
        """(arg_shapes, out_shapes, aux_shapes) with () for unknown shapes."""
        return self._infer_shape(args, kwargs)[:3]

    def infer_shape(self, *args, **kwargs):
        """(arg_shapes, out_shapes, aux_shapes) from some arguments' shapes
        (by position or name); (None, None, None) when they do not fix every
        shape, as MXNet."""
        arg, out, aux, complete = self._infer_shape(args, kwargs)
        return (arg, out, aux) if complete else (None, None, None)

    def _infer_shape(self, args, kwargs):
        keys, shapes = self._arg_keys(args, kwargs)
        indptr, data = [0], []
        for s in shapes:
            s = () if s is None else tuple(s)
            data += list(s)
            indptr.append(len(data))
        counts = [mx_uint() for _ in range(3)]
        ndims = [ctypes.POINTER(ctypes.c_int)() for _ in range(3)]
        datas = [ctypes.POINTER(ctypes.POINTER(ctypes.c_int))() for _ in range(3)]
        complete = ctypes.c_int()
        check_call(_LIB.MXSymbolInferShapeEx(
            self.handle, mx_uint(len(shapes)), c_str_array(keys) if keys else None,
            c_array(mx_uint, indptr), c_array(ctypes.c_int, data),
            ctypes.byref(counts[0]), ctypes.byref(ndims[0]), ctypes.byref(datas[0]),
            ctypes.byref(counts[1]), ctypes.byref(ndims[1]), ctypes.byref(datas[1]),
            ctypes.byref(counts[2]), ctypes.byref(ndims[2]), ctypes.byref(datas[2]),
            ctypes.byref(complete)))

        def shapes_of(k):
            result = []
            for i in range(counts[k].value):
                nd = ndims[k][i]
                result.append(tuple(datas[k][i][j] for j in range(nd)) if nd >= 0 else ())
            return result

        return shapes_of(0), shapes_of(1), shapes_of(2), bool(complete.value)

    def infer_type(self, *args, **kwargs):
        """(arg_types, out_types, aux_types) as numpy types from some
        arguments' types; (None, None, None) when not every type is known."""
        keys, types = self._arg_keys(args, kwargs)
        flags = [DTYPE_NP_TO_MX[np.dtype(t)] if t is not None else -1 for t in types]
        counts = [mx_uint() for _ in range(3)]
        datas = [ctypes.POINTER(ctypes.c_int)() for _ in range(3)]
        complete = ctypes.c_int()
        check_call(_LIB.MXSymbolInferType(
            self.handle, mx_uint(len(types)), c_str_array(keys) if keys else None,
            c_array(ctypes.c_int, flags),
            ctypes.byref(counts[0]), ctypes.byref(datas[0]), ctypes.byref(counts[1]),
            ctypes.byref(datas[1]), ctypes.byref(counts[2]), ctypes.byref(datas[2]),
            ctypes.byref(complete)))
        if not complete.value:
            return None, None, None
        return tuple([DTYPE_MX_TO_NP[datas[k][i]].type for i in range(counts[k].value)]
                     for k in range(3))

    # ---- binding -----------------------------------------------------------
    def bind(self, ctx: Context, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """An Executor over the given arrays (lists in list_arguments /
        list_auxiliary_states order, or dicts by name)."""
        from ..executor import Executor
        if group2ctx:
            raise MXNetError("bind: mx binds a symbol to one device (group2ctx is not supported)")
        return Executor.bind(self, Context(ctx), args, args_grad, grad_req, aux_states)

    def simple_bind(self, ctx: Context, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None, shared_buffer=None,
                    **kwargs):
        """Binds with new arrays (zeros) whose shapes are inferred from the
        given input shapes (``data=(100, 784)``); gradient arrays for every
        argument whose grad_req is not 'null'."""
        ctx = Context(ctx)
        arg_shapes, _, aux_shapes = self.infer_shape(**kwargs)
        if arg_shapes is None:
            partial = dict(zip(self.list_arguments(), self.infer_shape_partial(**kwargs)[0]))
            missing = [n for n, s in partial.items() if not s or 0 in s or -1 in s]
            raise MXNetError("simple_bind: cannot infer the shapes of " + ", ".join(missing) +
                             " from " + ", ".join(f"{k}={v}" for k, v in kwargs.items()))
        names = self.list_arguments()
        type_dict = dict(type_dict or {})
        arg_types, _, aux_types = self.infer_type(**{k: v for k, v in type_dict.items()
                                                     if k in names}) \
            if type_dict else (None, None, None)
        if arg_types is None:
            arg_types = [np.float32] * len(names)
            aux_types = [np.float32] * len(aux_shapes)
        args = [zeros(s, ctx, t) for s, t in zip(arg_shapes, arg_types)]
        reqs = _grad_req_list(grad_req, names)
        grads = [zeros(s, ctx, t) if r != "null" else None
                 for s, t, r in zip(arg_shapes, arg_types, reqs)]
        aux = [zeros(s, ctx, t) for s, t in zip(aux_shapes, aux_types)]
        return self.bind(ctx, args, grads, reqs, aux)

    def eval(self, ctx: Optional[Context] = None, **kwargs):
        """Runs the graph once on the given arrays; a list of outputs."""
        exe = self.bind(as_context(ctx), kwargs)
        exe.forward()
        return exe.outputs

    # ---- arithmetic (MXNet's operators on symbols) -------------------------
    def _binary(self, other, elem: str, scalar: str) -> "Symbol":
        from . import _OPS
        if isinstance(other, Symbol):
            if not elem:
                raise MXNetError(f"mx's operator registry has no {scalar[1:-7]} of two symbols")
            return _OPS[elem](self, other)
        if isinstance(other, (int, float, np.number)):
            return _OPS[scalar](self, scalar=float(other))
        return NotImplemented

    def __add__(self, other):
        return self._binary(other, "elemwise_add", "_plus_scalar")

    __radd__ = __add__

    def __sub__(self, other):
        return self._binary(other, "elemwise_sub", "_minus_scalar")

    def __rsub__(self, other):
        return self._binary(other, "", "_rminus_scalar")

    def __mul__(self, other):
        return self._binary(other, "elemwise_mul", "_mul_scalar")

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._binary(other, "elemwise_div", "_div_scalar")

    def __rtruediv__(self, other):
        return self._binary(other, "", "_rdiv_scalar")

    def __pow__(self, other):
        return self._binary(other, "", "_power_scalar")

    def __neg__(self):
        from . import _OPS
        return _OPS["negative"](self)

    # Comparisons as MXNet's Symbol has them: element-wise (same shapes; the
    # broadcast_* operators broadcast), 1 or 0 in the input's type.
    def __eq__(self, other):
        return self._binary(other, "_equal", "_equal_scalar")

    def __ne__(self, other):
        return self._binary(other, "_not_equal", "_not_equal_scalar")

    def __lt__(self, other):
        return self._binary(other, "_lesser", "_lesser_scalar")

    def __le__(self, other):
        return self._binary(other, "_lesser_equal", "_lesser_equal_scalar")

    def __gt__(self, other):
        return self._binary(other, "_greater", "_greater_scalar")

    def __ge__(self, other):
        return self._binary(other, "_greater_equal", "_greater_equal_scalar")

    # Symbols stay usable as dictionary keys (MXNet's are unhashable).
    __hash__ = object.__hash__


def _grad_req_list(grad_req, names: Sequence[str]) -> List[str]:
    if isinstance(grad_req, str):
        return [grad_req] * len(names)
    if isinstance(grad_req, dict):
        return [grad_req.get(n, "null") for n in names]
    grad_req = list(grad_req)
    if len(grad_req) != len(names):
        raise ValueError(f"grad_req has {len(grad_req)} entries for {len(names)} arguments")
    return grad_req


def var(name: str, attr: Optional[Dict[str, str]] = None, shape=None, lr_mult=None,
        wd_mult=None, dtype=None, init=None, stype=None, **kwargs) -> Symbol:
    """A free variable (an input or a parameter of the graph)."""
    if not isinstance(name, str):
        raise TypeError("mx.sym.var: name must be a str")
    handle = SymbolHandle()
    check_call(_LIB.MXSymbolCreateVariable(c_str(name), ctypes.byref(handle)))
    sym = Symbol(handle)
    attrs = dict(attr or {})
    if shape is not None:
        attrs["__shape__"] = str(tuple(shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        attrs["__dtype__"] = str(DTYPE_NP_TO_MX[np.dtype(dtype)])
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            attrs[k] = str(v)
        else:
            raise ValueError(f"mx.sym.var: unknown argument '{k}' (attributes are __name__)")
    if attrs:
        sym._set_attr(**attrs)
    return sym


Variable = var


def Group(symbols: Sequence[Symbol]) -> Symbol:
    """The outputs of several symbols as one symbol."""
    symbols = list(symbols)
    if not symbols or not all(isinstance(s, Symbol) for s in symbols):
        raise TypeError("mx.sym.Group takes a non-empty list of Symbols")
    handle = SymbolHandle()
    check_call(_LIB.MXSymbolCreateGroup(mx_uint(len(symbols)), c_handle_array(symbols),
                                        ctypes.byref(handle)))
    return Symbol(handle)


def load(fname: Union[str, os.PathLike]) -> Symbol:
    """A symbol from MXNet's JSON file (PREFIX-symbol.json)."""
    handle = SymbolHandle()
    check_call(_LIB.MXSymbolCreateFromFile(c_str(os.fspath(fname)), ctypes.byref(handle)))
    return Symbol(handle)


def load_json(json_str: str) -> Symbol:
    """A symbol from MXNet's JSON text."""
    handle = SymbolHandle()
    check_call(_LIB.MXSymbolCreateFromJSON(c_str(json_str), ctypes.byref(handle)))
    return Symbol(handle)


def load_yaml(yaml_str: str) -> Symbol:
    """mx's own: a symbol from a network in mx's YAML language (the mapping
    under a config's ``network:`` key, with ``layers:``)."""
    handle = SymbolHandle()
    check_call(_LIB.MXSymbolCreateFromYAML(c_str(yaml_str), ctypes.byref(handle)))
    return Symbol(handle)
