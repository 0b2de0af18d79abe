"""mx.autograd: record imperative calls and differentiate them (MXNet's
names). Recording and training are switches of the calling thread."""
from __future__ import annotations

import ctypes
from typing import List, Optional, Sequence, Union

from .base import _LIB, NDArrayHandle, c_array, c_handle_array, check_call, mx_uint
from .ndarray import NDArray

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad"]

_GRAD_REQ = {"null": 0, "write": 1, "inplace": 2, "add": 3}


def set_recording(is_recording: bool) -> bool:
    """Sets this thread's recording switch; returns the previous value."""
    prev = ctypes.c_int()
    check_call(_LIB.MXAutogradSetIsRecording(ctypes.c_int(bool(is_recording)), ctypes.byref(prev)))
    return bool(prev.value)


def set_training(train_mode: bool) -> bool:
    """Sets this thread's training switch; returns the previous value."""
    prev = ctypes.c_int()
    check_call(_LIB.MXAutogradSetIsTraining(ctypes.c_int(bool(train_mode)), ctypes.byref(prev)))
    return bool(prev.value)


def is_recording() -> bool:
    cur = ctypes.c_bool()
    check_call(_LIB.MXAutogradIsRecording(ctypes.byref(cur)))
    return cur.value


def is_training() -> bool:
    cur = ctypes.c_bool()
    check_call(_LIB.MXAutogradIsTraining(ctypes.byref(cur)))
    return cur.value


class _Scope:
    """Sets the switches on entry and restores them on exit (None: unchanged)."""

    def __init__(self, recording: Optional[bool], training: Optional[bool]):
        self._enter = (recording, training)
        self._prev = (None, None)

    def __enter__(self):
        recording, training = self._enter
        prev_rec = set_recording(recording) if recording is not None else None
        prev_train = set_training(training) if training is not None else None
        self._prev = (prev_rec, prev_train)
        return self

    def __exit__(self, *exc):
        prev_rec, prev_train = self._prev
        if prev_rec is not None:
            set_recording(prev_rec)
        if prev_train is not None:
            set_training(prev_train)


def record(train_mode: bool = True) -> _Scope:
    """``with autograd.record():`` records the calls on arrays that need
    gradients; train_mode sets the training switch (Dropout, BatchNorm)."""
    return _Scope(True, train_mode)


def pause(train_mode: bool = False) -> _Scope:
    """Stops recording inside a record() block."""
    return _Scope(False, train_mode)


def train_mode() -> _Scope:
    """Training behaviour without changing recording."""
    return _Scope(None, True)


def predict_mode() -> _Scope:
    """Inference behaviour without changing recording."""
    return _Scope(None, False)


def mark_variables(variables: Union[NDArray, Sequence[NDArray]],
                   gradients: Union[NDArray, Sequence[NDArray]],
                   grad_reqs: Union[str, Sequence[str]] = "write") -> None:
    """Makes arrays variables whose gradients backward writes into `gradients`."""
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise ValueError("mark_variables: variables, gradients and grad_reqs differ in length")
    for r in grad_reqs:
        if r not in _GRAD_REQ:
            raise ValueError(f"grad_req '{r}' is not one of {', '.join(_GRAD_REQ)}")
    reqs = c_array(mx_uint, [_GRAD_REQ[r] for r in grad_reqs])
    check_call(_LIB.MXAutogradMarkVariables(mx_uint(len(variables)), c_handle_array(variables),
                                            reqs, c_handle_array(gradients)))


def _heads(heads, head_grads):
    if isinstance(heads, NDArray):
        heads = [heads]
        if head_grads is not None and isinstance(head_grads, NDArray):
            head_grads = [head_grads]
    heads = list(heads)
    if head_grads is None:
        return heads, None
    head_grads = list(head_grads)
    if len(head_grads) != len(heads):
        raise ValueError(f"backward: {len(heads)} heads but {len(head_grads)} head gradients")
    return heads, c_handle_array(head_grads)


def backward(heads, head_grads=None, retain_graph: bool = False, train_mode: bool = True) -> None:
    """Gradients of the heads (times head_grads, default ones) into the
    marked variables' .grad."""
    heads, ograds = _heads(heads, head_grads)
    check_call(_LIB.MXAutogradBackwardEx(
        mx_uint(len(heads)), c_handle_array(heads), ograds, mx_uint(0), None,
        ctypes.c_int(bool(retain_graph)), ctypes.c_int(0), ctypes.c_int(bool(train_mode)),
        None, None))


def grad(heads, variables, head_grads=None, retain_graph: Optional[bool] = None,
         create_graph: bool = False, train_mode: bool = True) -> List[NDArray]:
    """The gradients of the heads with respect to marked variables, as new
    arrays (their .grad is left alone). create_graph is not supported."""
    heads, ograds = _heads(heads, head_grads)
    single = isinstance(variables, NDArray)
    variables = [variables] if single else list(variables)
    retain = create_graph if retain_graph is None else retain_graph
    out = ctypes.POINTER(ctypes.c_void_p)()
    check_call(_LIB.MXAutogradBackwardEx(
        mx_uint(len(heads)), c_handle_array(heads), ograds, mx_uint(len(variables)),
        c_handle_array(variables), ctypes.c_int(bool(retain)), ctypes.c_int(bool(create_graph)),
        ctypes.c_int(bool(train_mode)), ctypes.byref(out), None))
    grads = [NDArray(NDArrayHandle(out[i])) for i in range(len(variables))]
    return grads
