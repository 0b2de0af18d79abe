"""NDArray: an array on a device whose operations run on mx's dependency
engine; reading its values (asnumpy) waits for the operations that write it."""
from __future__ import annotations

import ctypes
from typing import Optional, Sequence, Tuple, Union

import numpy as np

from ..base import _LIB, MXNetError, NDArrayHandle, c_array, check_call, mx_uint
from ..context import Context, as_context

__all__ = ["NDArray", "empty", "array", "waitall", "DTYPE_NP_TO_MX", "DTYPE_MX_TO_NP"]

# MXNet's type flags, as the C API and .params files spell element types.
DTYPE_NP_TO_MX = {
    np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2,
    np.dtype(np.uint8): 3, np.dtype(np.int32): 4, np.dtype(np.int8): 5, np.dtype(np.int64): 6,
}
DTYPE_MX_TO_NP = {v: k for k, v in DTYPE_NP_TO_MX.items()}
mx_real_t = np.float32
# The element types of the registry's element-wise and scalar operators.
_FLOAT_OPS = (np.float32, np.float64)


def _dtype_flag(dtype) -> int:
    try:
        return DTYPE_NP_TO_MX[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"mx has no element type {dtype!r} (it has "
                        f"{', '.join(d.name for d in DTYPE_NP_TO_MX)})") from None


def _new_handle(shape: Sequence[int], ctx: Context, dtype) -> NDArrayHandle:
    handle = NDArrayHandle()
    shape = tuple(int(d) for d in shape)
    check_call(_LIB.MXNDArrayCreateEx(c_array(mx_uint, shape), mx_uint(len(shape)),
                                      ctypes.c_int(ctx.device_typeid),
                                      ctypes.c_int(ctx.device_id), ctypes.c_int(0),
                                      ctypes.c_int(_dtype_flag(dtype)), ctypes.byref(handle)))
    return handle


class NDArray:
    """An n-dimensional array of one element type on one device.

    Operators come from ``mx.nd`` (``mx.nd.FullyConnected(x, w, b,
    num_hidden=10)``); the arithmetic operators, indexing and the methods
    below call them too, so they are recorded by autograd like any call.
    """

    __slots__ = ("handle", "writable", "__weakref__")
    # numpy's binary operators defer to ours (ndarray + NDArray -> NDArray).
    __array_ufunc__ = None

    def __init__(self, handle: NDArrayHandle, writable: bool = True):
        self.handle = handle
        self.writable = writable

    def __del__(self):
        if getattr(self, "handle", None) is not None and _LIB is not None:
            _LIB.MXNDArrayFree(self.handle)
            self.handle = None

    # ---- what it is --------------------------------------------------------
    @property
    def shape(self) -> Tuple[int, ...]:
        ndim = ctypes.c_int()
        pdata = ctypes.POINTER(ctypes.c_int)()
        check_call(_LIB.MXNDArrayGetShapeEx(self.handle, ctypes.byref(ndim), ctypes.byref(pdata)))
        if ndim.value < 0:
            return ()
        return tuple(pdata[i] for i in range(ndim.value))

    @property
    def dtype(self) -> type:
        flag = ctypes.c_int()
        check_call(_LIB.MXNDArrayGetDType(self.handle, ctypes.byref(flag)))
        return DTYPE_MX_TO_NP[flag.value].type

    @property
    def context(self) -> Context:
        dev_type, dev_id = ctypes.c_int(), ctypes.c_int()
        check_call(_LIB.MXNDArrayGetContext(self.handle, ctypes.byref(dev_type),
                                            ctypes.byref(dev_id)))
        return Context.from_codes(dev_type.value, dev_id.value)

    ctx = context

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def stype(self) -> str:
        return "default"  # mx has dense storage only

    @property
    def T(self) -> "NDArray":
        return _op("transpose", self)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        shape = "x".join(str(d) for d in self.shape)
        return f"\n{self.asnumpy()}\n<NDArray {shape} @{self.context}>"

    # ---- values ------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the values (waits for the operations that write them)."""
        data = np.empty(self.shape, dtype=self.dtype)
        check_call(_LIB.MXNDArraySyncCopyToCPU(self.handle, data.ctypes.data_as(ctypes.c_void_p),
                                               ctypes.c_size_t(data.size)))
        return data

    def asscalar(self):
        if self.size != 1:
            raise ValueError(f"asscalar needs an array of one element, not shape {self.shape}")
        return self.asnumpy().reshape(()).item()

    item = asscalar

    def __float__(self) -> float:
        return float(self.asscalar())

    def __int__(self) -> int:
        return int(self.asscalar())

    def __bool__(self) -> bool:
        if self.size == 1:
            return bool(self.asscalar())
        raise ValueError("the truth value of an NDArray with more than one element is ambiguous")

    def _sync_copyfrom(self, source) -> None:
        """Copies host values in (numpy-broadcast to this array's shape)."""
        src = np.ascontiguousarray(np.broadcast_to(np.asarray(source, dtype=self.dtype), self.shape))
        check_call(_LIB.MXNDArraySyncCopyFromCPU(self.handle, src.ctypes.data_as(ctypes.c_void_p),
                                                 ctypes.c_size_t(src.size)))

    def wait_to_read(self) -> None:
        check_call(_LIB.MXNDArrayWaitToRead(self.handle))

    def wait_to_write(self) -> None:
        check_call(_LIB.MXNDArrayWaitToWrite(self.handle))

    # ---- copies and conversions -------------------------------------------
    def copy(self) -> "NDArray":
        return self.copyto(self.context)

    def copyto(self, other: Union["NDArray", Context]) -> "NDArray":
        """Copies into another array (same shape) or to a new array on a device."""
        if isinstance(other, Context):
            target = NDArray(_new_handle(self.shape, other, self.dtype))
        elif isinstance(other, NDArray):
            if other.handle.value == self.handle.value:
                return other
            target = other
        else:
            raise TypeError(f"copyto takes an NDArray or a Context, not {type(other).__name__}")
        if target.context == self.context and self.dtype in _FLOAT_OPS:
            _op("_copy", self, out=target)
        else:  # across devices, or a type _copy does not take: through host memory
            target._sync_copyfrom(self.asnumpy())
        return target

    def as_in_context(self, ctx: Context) -> "NDArray":
        return self if self.context == ctx else self.copyto(ctx)

    as_in_ctx = as_in_context

    def astype(self, dtype, copy: bool = True) -> "NDArray":
        if not copy and np.dtype(dtype) == np.dtype(self.dtype):
            return self
        return _op("Cast", self, dtype=np.dtype(dtype).name)

    def tostype(self, stype: str) -> "NDArray":
        if stype != "default":
            raise MXNetError(f"mx has dense storage only, not '{stype}'")
        return self

    # ---- views -------------------------------------------------------------
    def reshape(self, *shape, **kwargs) -> "NDArray":
        """Another shape of the same elements (a view; recorded as Reshape
        while autograd records). One dimension may be -1; MXNet's special
        values (0, -2, ...) go through the Reshape operator."""
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        shape = tuple(kwargs.pop("shape", shape))
        if kwargs:
            return _op("Reshape", self, shape=shape, **kwargs)
        if _is_recording() or any(d < -1 or d == 0 for d in shape):
            return _op("Reshape", self, shape=shape)
        handle = NDArrayHandle()
        dims = c_array(ctypes.c_int, shape)
        check_call(_LIB.MXNDArrayReshape(self.handle, ctypes.c_int(len(shape)), dims,
                                         ctypes.byref(handle)))
        return NDArray(handle, self.writable)

    def _slice(self, start: int, stop: int) -> "NDArray":
        handle = NDArrayHandle()
        check_call(_LIB.MXNDArraySlice(self.handle, mx_uint(start), mx_uint(stop),
                                       ctypes.byref(handle)))
        return NDArray(handle, self.writable)

    def _at(self, idx: int) -> "NDArray":
        handle = NDArrayHandle()
        check_call(_LIB.MXNDArrayAt(self.handle, mx_uint(idx), ctypes.byref(handle)))
        return NDArray(handle, self.writable)

    # ---- indexing ----------------------------------------------------------
    def _basic_key(self, key):
        """(begin, end, step) per leading axis for ints and slices, and the
        axes an int index drops."""
        if not isinstance(key, tuple):
            key = (key,)
        shape = self.shape
        if len(key) > len(shape):
            raise IndexError(f"too many indices ({len(key)}) for an array of shape {shape}")
        begin, end, step, dropped = [], [], [], []
        for axis, k in enumerate(key):
            n = shape[axis]
            if isinstance(k, (int, np.integer)):
                i = int(k) + n if k < 0 else int(k)
                if not 0 <= i < n:
                    raise IndexError(f"index {int(k)} is out of range for axis {axis} of size {n}")
                begin.append(i), end.append(i + 1), step.append(1), dropped.append(axis)
            elif isinstance(k, slice):
                b, e, s = k.indices(n)
                if s <= 0:
                    raise IndexError("mx's indexing takes positive steps only")
                begin.append(b), end.append(max(e, b)), step.append(s)
            else:
                raise IndexError(f"mx's NDArray indexing takes ints and slices, not "
                                 f"{type(k).__name__} (use mx.nd.take or pick for arrays)")
        return begin, end, step, dropped

    def __getitem__(self, key) -> "NDArray":
        # The first axis alone: views that share memory (as MXNet's), except
        # while recording, where the operators keep the gradient flowing.
        if not _is_recording():
            if isinstance(key, (int, np.integer)):
                n = self.shape[0]
                i = int(key) + n if key < 0 else int(key)
                if not 0 <= i < n:
                    raise IndexError(f"index {int(key)} is out of range for axis 0 of size {n}")
                return self._at(i)
            if isinstance(key, slice) and key.step in (None, 1):
                b, e, _ = key.indices(self.shape[0])
                return self._slice(b, max(b, e))
        begin, end, step, dropped = self._basic_key(key)
        out = _op("slice", self, begin=tuple(begin), end=tuple(end), step=tuple(step))
        if dropped:
            shape = [d for axis, d in enumerate(out.shape) if axis not in dropped]
            out = _op("Reshape", out, shape=tuple(shape) if shape else (1,))
        return out

    def __setitem__(self, key, value) -> None:
        if not self.writable:
            raise MXNetError("this NDArray is read-only")
        if key is Ellipsis or (isinstance(key, slice) and key == slice(None)):
            target = self
        elif isinstance(key, (int, np.integer)) or (isinstance(key, slice) and key.step in (None, 1)):
            target = self[key] if not _is_recording() else None
            if target is None:
                raise MXNetError("assigning to part of an array while recording is not supported")
        else:
            raise IndexError("mx assigns to x[:], x[i] and x[i:j] (first axis, step 1)")
        if isinstance(value, NDArray):
            if value.shape != target.shape:
                value = _op("broadcast_to", value, shape=target.shape)
            value.copyto(target)
        elif isinstance(value, (int, float, np.number, bool)) and target.dtype in _FLOAT_OPS:
            # On the engine, like any write (the scalar operators take these types).
            _op("zeros_like", target, out=target)
            if value != 0:
                _op("_plus_scalar", target, scalar=float(value), out=target)
        else:
            target._sync_copyfrom(value)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # ---- arithmetic --------------------------------------------------------
    def _binary(self, other, elem: str, bcast: str, scalar: str, out=None) -> "NDArray":
        if isinstance(other, NDArray):
            name = elem if other.shape == self.shape else bcast
            return _op(name, self, other, out=out)
        if isinstance(other, (int, float, np.number, bool)):
            return _op(scalar, self, scalar=float(other), out=out)
        if isinstance(other, np.ndarray):
            return self._binary(array(other, ctx=self.context, dtype=self.dtype), elem, bcast,
                                scalar, out)
        return NotImplemented

    def _rscalar(self, other, scalar: str) -> "NDArray":
        if isinstance(other, (int, float, np.number, bool)):
            return _op(scalar, self, scalar=float(other))
        return NotImplemented

    def __add__(self, other):
        return self._binary(other, "elemwise_add", "broadcast_add", "_plus_scalar")

    def __radd__(self, other):
        return self.__add__(other)

    def __sub__(self, other):
        return self._binary(other, "elemwise_sub", "broadcast_sub", "_minus_scalar")

    def __rsub__(self, other):
        if isinstance(other, np.ndarray):
            return array(other, ctx=self.context, dtype=self.dtype) - self
        return self._rscalar(other, "_rminus_scalar")

    def __mul__(self, other):
        return self._binary(other, "elemwise_mul", "broadcast_mul", "_mul_scalar")

    def __rmul__(self, other):
        return self.__mul__(other)

    def __truediv__(self, other):
        return self._binary(other, "elemwise_div", "broadcast_div", "_div_scalar")

    def __rtruediv__(self, other):
        if isinstance(other, np.ndarray):
            return array(other, ctx=self.context, dtype=self.dtype) / self
        return self._rscalar(other, "_rdiv_scalar")

    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __pow__(self, other):
        if isinstance(other, NDArray):
            return _op_or_missing("broadcast_power", self, other)
        return self._binary(other, "", "", "_power_scalar")

    def __rpow__(self, other):
        return self._rscalar(other, "_rpower_scalar")

    def __neg__(self):
        return _op("negative", self)

    def __abs__(self):
        return _op("abs", self)

    def __iadd__(self, other):
        return self._inplace(other, "elemwise_add", "broadcast_add", "_plus_scalar")

    def __isub__(self, other):
        return self._inplace(other, "elemwise_sub", "broadcast_sub", "_minus_scalar")

    def __imul__(self, other):
        return self._inplace(other, "elemwise_mul", "broadcast_mul", "_mul_scalar")

    def __itruediv__(self, other):
        return self._inplace(other, "elemwise_div", "broadcast_div", "_div_scalar")

    __idiv__ = __itruediv__

    def _inplace(self, other, elem, bcast, scalar):
        if not self.writable:
            raise MXNetError("this NDArray is read-only")
        result = self._binary(other, elem, bcast, scalar, out=self)
        return self if result is not NotImplemented else NotImplemented

    # Comparisons as MXNet's NDArray has them: broadcast_* for two arrays,
    # _*_scalar with a number; 1 or 0 in the array's type.
    def _compare(self, other, bcast: str, scalar: str):
        if isinstance(other, NDArray):
            return _op_or_missing(bcast, self, other)
        if isinstance(other, (int, float, np.number, bool)):
            return _op_or_missing(scalar, self, scalar=float(other))
        return NotImplemented

    def __eq__(self, other):
        if other is None:
            return False
        return self._compare(other, "broadcast_equal", "_equal_scalar")

    def __ne__(self, other):
        if other is None:
            return True
        return self._compare(other, "broadcast_not_equal", "_not_equal_scalar")

    def __lt__(self, other):
        return self._compare(other, "broadcast_lesser", "_lesser_scalar")

    def __le__(self, other):
        return self._compare(other, "broadcast_lesser_equal", "_lesser_equal_scalar")

    def __gt__(self, other):
        return self._compare(other, "broadcast_greater", "_greater_scalar")

    def __ge__(self, other):
        return self._compare(other, "broadcast_greater_equal", "_greater_equal_scalar")

    __hash__ = object.__hash__

    # ---- autograd ----------------------------------------------------------
    def attach_grad(self, grad_req: str = "write", stype=None) -> None:
        """Gives the array a gradient buffer (``.grad``, zeros) that backward fills."""
        from .. import autograd
        grad = zeros(self.shape, ctx=self.context, dtype=self.dtype)
        autograd.mark_variables([self], [grad], grad_req)

    @property
    def grad(self) -> Optional["NDArray"]:
        handle = NDArrayHandle()
        check_call(_LIB.MXNDArrayGetGrad(self.handle, ctypes.byref(handle)))
        return NDArray(handle) if handle.value else None

    def detach(self) -> "NDArray":
        handle = NDArrayHandle()
        check_call(_LIB.MXNDArrayDetach(self.handle, ctypes.byref(handle)))
        return NDArray(handle)

    def backward(self, out_grad: Optional["NDArray"] = None, retain_graph: bool = False,
                 train_mode: bool = True) -> None:
        from .. import autograd
        autograd.backward([self], None if out_grad is None else [out_grad], retain_graph,
                          train_mode)


# Filled by mx.ndarray once the operators are generated (ndarray.py cannot
# import them: they are made from the registry after this module loads).
_OPS: dict = {}


def _op(name: str, *args, **kwargs):
    return _OPS[name](*args, **kwargs)


def _op_or_missing(name: str, *args, **kwargs):
    if name not in _OPS:
        raise MXNetError(f"mx's operator registry has no '{name}' operator")
    return _OPS[name](*args, **kwargs)


def _is_recording() -> bool:
    cur = ctypes.c_bool()
    check_call(_LIB.MXAutogradIsRecording(ctypes.byref(cur)))
    return cur.value


def empty(shape, ctx: Optional[Context] = None, dtype=mx_real_t) -> NDArray:
    """An array whose values are undefined."""
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    return NDArray(_new_handle(shape, as_context(ctx), mx_real_t if dtype is None else dtype))


def zeros(shape, ctx: Optional[Context] = None, dtype=mx_real_t, **kwargs) -> NDArray:
    arr = empty(shape, ctx, dtype)
    if arr.size:
        _op("_zeros", shape=arr.shape, dtype=np.dtype(arr.dtype).name, out=arr)
    return arr


def ones(shape, ctx: Optional[Context] = None, dtype=mx_real_t, **kwargs) -> NDArray:
    arr = empty(shape, ctx, dtype)
    if arr.size:
        _op("_ones", shape=arr.shape, dtype=np.dtype(arr.dtype).name, out=arr)
    return arr


def full(shape, val, ctx: Optional[Context] = None, dtype=mx_real_t, out=None) -> NDArray:
    arr = empty(shape, ctx, dtype) if out is None else out
    arr[:] = val
    return arr


def array(source_array, ctx: Optional[Context] = None, dtype=None) -> NDArray:
    """An array with a copy of the values (numpy array, list, NDArray). The
    element type is dtype if given, else, as in MXNet 1.x, an NDArray's own
    type and float32 for anything else."""
    if isinstance(source_array, NDArray):
        dtype = source_array.dtype if dtype is None else dtype
        return source_array.astype(dtype).as_in_context(as_context(ctx)) \
            if np.dtype(dtype) != np.dtype(source_array.dtype) \
            else source_array.copyto(as_context(ctx))
    dtype = mx_real_t if dtype is None else dtype
    try:
        src = np.asarray(source_array, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"mx.nd.array: cannot make an array of {type(source_array).__name__}: "
                        f"{e}") from None
    arr = empty(src.shape, ctx, dtype)
    if arr.size:
        arr._sync_copyfrom(src)
    return arr


def waitall() -> None:
    """Waits for every pushed operation (and reports a failure nobody read)."""
    check_call(_LIB.MXNDArrayWaitAll())

