"""Executor: a symbol bound to arrays on one device; forward and backward
passes run on the engine (MXNet's Executor)."""
from __future__ import annotations

import ctypes
from typing import Dict, List, Optional

import numpy as np

from .base import (_LIB, MXNetError, ExecutorHandle, NDArrayHandle, c_array, c_handle_array,
                   check_call, mx_uint)
from .context import Context
from .ndarray import NDArray

_GRAD_REQ = {"null": 0, "write": 1, "inplace": 2, "add": 3}


def _by_name(what: str, values, names: List[str], allow_missing: bool) -> List[Optional[NDArray]]:
    """A list in `names` order from a list or a dict of arrays."""
    if values is None:
        if allow_missing:
            return [None] * len(names)
        raise MXNetError(f"bind: {what} are needed ({', '.join(names)})")
    if isinstance(values, dict):
        unknown = [k for k in values if k not in names]
        if unknown:
            raise MXNetError(f"bind: {what}: {', '.join(unknown)} not in the symbol's "
                             f"({', '.join(names) or 'none'})")
        missing = [n for n in names if n not in values]
        if missing and not allow_missing:
            raise MXNetError(f"bind: {what}: no array for {', '.join(missing)}")
        return [values.get(n) for n in names]
    values = list(values)
    if len(values) != len(names):
        raise MXNetError(f"bind: {len(values)} {what} given, the symbol has {len(names)} "
                         f"({', '.join(names)})")
    return values


class Executor:
    """Made by Symbol.bind / simple_bind. arg_dict, grad_dict and aux_dict
    are the bound arrays themselves: write inputs into them, read gradients."""

    def __init__(self, handle: ExecutorHandle, symbol, ctx: Context, arg_arrays, grad_arrays,
                 aux_arrays, grad_req):
        self.handle = handle
        self._symbol = symbol
        self._ctx = ctx
        self.arg_arrays: List[NDArray] = arg_arrays
        self.grad_arrays: List[Optional[NDArray]] = grad_arrays
        self.aux_arrays: List[NDArray] = aux_arrays
        self._grad_req = grad_req
        self.outputs: List[NDArray] = self._get_outputs()

    @staticmethod
    def bind(symbol, ctx: Context, args, args_grad, grad_req, aux_states) -> "Executor":
        arg_names = symbol.list_arguments()
        aux_names = symbol.list_auxiliary_states()
        args = _by_name("arguments", args, arg_names, False)
        grads = _by_name("gradient arrays", args_grad, arg_names, True)
        aux = _by_name("auxiliary states", aux_states, aux_names, not aux_names)
        if isinstance(grad_req, str):
            reqs = [grad_req] * len(arg_names)
        elif isinstance(grad_req, dict):
            reqs = [grad_req.get(n, "null") for n in arg_names]
        else:
            reqs = list(grad_req)
        reqs = [r if g is not None else "null" for r, g in zip(reqs, grads)]
        for r in reqs:
            if r not in _GRAD_REQ:
                raise MXNetError(f"bind: grad_req '{r}' is not one of {', '.join(_GRAD_REQ)}")
        for n, a in zip(arg_names, args):
            if not isinstance(a, NDArray):
                raise MXNetError(f"bind: argument '{n}' needs an NDArray, got {type(a).__name__}")
        handle = ExecutorHandle()
        check_call(_LIB.MXExecutorBind(
            symbol.handle, ctypes.c_int(ctx.device_typeid), ctypes.c_int(ctx.device_id),
            mx_uint(len(args)), c_handle_array(args), c_handle_array(grads),
            c_array(mx_uint, [_GRAD_REQ[r] for r in reqs]), mx_uint(len(aux)),
            c_handle_array(aux), ctypes.byref(handle)))
        return Executor(handle, symbol, ctx, args, grads, aux, reqs)

    def __del__(self):
        if getattr(self, "handle", None) is not None and _LIB is not None:
            _LIB.MXExecutorFree(self.handle)
            self.handle = None

    def _get_outputs(self) -> List[NDArray]:
        size = mx_uint()
        handles = ctypes.POINTER(ctypes.c_void_p)()
        check_call(_LIB.MXExecutorOutputs(self.handle, ctypes.byref(size), ctypes.byref(handles)))
        return [NDArray(NDArrayHandle(handles[i])) for i in range(size.value)]

    @property
    def arg_dict(self) -> Dict[str, NDArray]:
        return dict(zip(self._symbol.list_arguments(), self.arg_arrays))

    @property
    def grad_dict(self) -> Dict[str, NDArray]:
        return {n: g for n, g in zip(self._symbol.list_arguments(), self.grad_arrays)
                if g is not None}

    @property
    def aux_dict(self) -> Dict[str, NDArray]:
        return dict(zip(self._symbol.list_auxiliary_states(), self.aux_arrays))

    @property
    def output_dict(self) -> Dict[str, NDArray]:
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    def forward(self, is_train: bool = False, **kwargs) -> List[NDArray]:
        """Runs the graph; keyword arrays (or numpy arrays) are first copied
        into the arguments of those names."""
        arg_dict = self.arg_dict
        for name, value in kwargs.items():
            if name not in arg_dict:
                raise MXNetError(f"forward: '{name}' is not an argument "
                                 f"({', '.join(arg_dict)})")
            if isinstance(value, NDArray):
                value.copyto(arg_dict[name])
            else:
                arg_dict[name][:] = np.asarray(value)
        check_call(_LIB.MXExecutorForward(self.handle, ctypes.c_int(bool(is_train))))
        return self.outputs

    def backward(self, out_grads=None, is_train: bool = True) -> None:
        """The gradients of the outputs (times out_grads, default ones) into
        grad_dict's arrays; follows a forward(is_train=True)."""
        if out_grads is None:
            grads = []
        elif isinstance(out_grads, NDArray):
            grads = [out_grads]
        else:
            grads = list(out_grads)
        check_call(_LIB.MXExecutorBackwardEx(self.handle, mx_uint(len(grads)),
                                             c_handle_array(grads), ctypes.c_int(bool(is_train))))

    def copy_params_from(self, arg_params: Dict[str, NDArray],
                         aux_params: Optional[Dict[str, NDArray]] = None,
                         allow_extra_params: bool = False) -> None:
        for params, targets in ((arg_params, self.arg_dict), (aux_params or {}, self.aux_dict)):
            for name, value in params.items():
                if name in targets:
                    value.copyto(targets[name])
                elif not allow_extra_params:
                    raise MXNetError(f"copy_params_from: '{name}' is not in the executor")
