"""mx.nd: imperative arrays and every operator of the registry as a function
(generated at import), with MXNet 1.x's names.

Operators whose names begin with ``_`` are also in ``mx.nd._internal``, and
``_contrib_X`` is ``mx.nd.contrib.X``, as in MXNet."""
import types as _types

from . import ndarray as _nd_module
from . import register as _register
from . import update as _update
from .io import load, save
from .ndarray import NDArray, array, empty, full, ones, waitall, zeros
from .ndarray import mx_real_t

_OPS = _register.generate()
_nd_module._OPS.update(_OPS)

_internal = _types.ModuleType("mx.ndarray._internal", "Operators whose names begin with '_'.")
contrib = _types.ModuleType("mx.ndarray.contrib", "MXNet's contrib operators (_contrib_*).")

for _name, _fn in _OPS.items():
    if _name.startswith("_"):
        setattr(_internal, _name, _fn)
    if _name.startswith("_contrib_"):
        setattr(contrib, _name[len("_contrib_"):], _fn)
    if _name not in globals():  # the hand-written functions above come first
        globals()[_name] = _fn

# Update operators written in Python where the registry has none of that name.
for _name, _fn in _update.UPDATES.items():
    if _name not in _OPS:
        globals()[_name] = _fn

# NDArray methods that call an operator on the array (x.sum(axis=1), x.relu()),
# as MXNet's, for the operators the registry has.
_FLUENT = ["abs", "argmax", "broadcast_axis", "broadcast_like", "broadcast_to", "clip", "exp",
           "expand_dims", "flatten", "log", "log_softmax", "max", "mean", "min", "norm",
           "one_hot", "relu", "repeat", "sigmoid", "slice", "slice_axis", "softmax", "sqrt",
           "square", "squeeze", "sum", "take", "tanh", "tile", "topk", "transpose", "reciprocal",
           "swapaxes", "split", "zeros_like", "ones_like", "erf", "where", "pick", "sign"]
_FLUENT_OPS = {"flatten": "Flatten", "swapaxes": "SwapAxis", "split": "SliceChannel"}


def _fluent(op):
    def method(self, *args, **kwargs):
        return op(self, *args, **kwargs)

    method.__name__ = op.__name__
    method.__doc__ = f"Calls mx.nd.{op.__name__} on this array.\n\n" + (op.__doc__ or "")
    return method


for _name in _FLUENT:
    _op_name = _FLUENT_OPS.get(_name, _name)
    if _op_name in _OPS and not hasattr(NDArray, _name):
        setattr(NDArray, _name, _fluent(_OPS[_op_name]))


def arange(start, stop=None, step=1.0, repeat=1, ctx=None, dtype=mx_real_t) -> NDArray:
    """Evenly spaced values in [start, stop), each repeated `repeat` times
    (MXNet's mx.nd.arange, through _arange)."""
    from ..context import as_context
    out = _OPS["_arange"](start=start, stop=stop, step=step, repeat=repeat, dtype=dtype)
    return out.as_in_context(as_context(ctx))


def concatenate(arrays, axis: int = 0, always_copy: bool = True) -> NDArray:
    """Joins arrays along an axis (MXNet's mx.nd.concatenate, through Concat)."""
    return _OPS["Concat"](*arrays, dim=axis)


def moveaxis(tensor, source: int, destination: int) -> NDArray:
    axes = list(range(tensor.ndim))
    axes.insert(destination % tensor.ndim, axes.pop(source % tensor.ndim))
    return _OPS["transpose"](tensor, axes=tuple(axes))


__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "waitall", "save",
           "load", "concatenate", "moveaxis", "sgd_update", "sgd_mom_update", "adam_update"] + sorted(n for n in _OPS if not n.startswith("_"))
