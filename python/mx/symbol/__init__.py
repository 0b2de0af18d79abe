"""mx.sym: symbolic graphs, with every operator of the registry as a
function that composes symbols (generated at import, MXNet 1.x's names)."""
import types as _types

from . import register as _register
from .register import NameManager
from .symbol import Group, Symbol, Variable, load, load_json, load_yaml, var

_OPS = _register.generate()

_internal = _types.ModuleType("mx.symbol._internal", "Operators whose names begin with '_'.")
contrib = _types.ModuleType("mx.symbol.contrib", "MXNet's contrib operators (_contrib_*).")
for _name, _fn in _OPS.items():
    if _name.startswith("_"):
        setattr(_internal, _name, _fn)
    if _name.startswith("_contrib_"):
        setattr(contrib, _name[len("_contrib_"):], _fn)
    if _name not in globals():
        globals()[_name] = _fn


def zeros(shape, dtype=None, **kwargs) -> Symbol:
    return _OPS["_zeros"](shape=shape, dtype=dtype, **kwargs)


def ones(shape, dtype=None, **kwargs) -> Symbol:
    return _OPS["_ones"](shape=shape, dtype=dtype, **kwargs)


__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json", "load_yaml", "zeros",
           "ones"] + sorted(n for n in _OPS if not n.startswith("_"))
