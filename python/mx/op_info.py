"""The operator registry as libmx describes it (MXSymbolGetAtomicSymbolInfo):
each operator's inputs, parameters, defaults and descriptions, read once at
import. mx.nd and mx.sym generate their functions from these records, so an
operator added to the registry needs no Python code."""
from __future__ import annotations

import ctypes
import inspect
import re
import textwrap
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from .base import _LIB, check_call, c_str, py_str, py_str_list, mx_uint


@dataclass
class ParamInfo:
    name: str
    type_info: str       # as the registry prints it: "int, required", "{'max', 'avg'}, optional, default='max'"
    description: str
    required: bool
    default: Optional[str]  # the default's text, None when required


@dataclass
class OpInfo:
    name: str             # the name it is called by (an alias keeps its own name)
    real_name: str        # the registry's main name
    description: str
    handle: ctypes.c_void_p
    inputs: List[str]     # inputs, then auxiliary states (MXNet's order)
    variadic: bool        # any number of inputs (Concat, add_n), counted by key_var_num_args
    key_var_num_args: str
    params: List[ParamInfo] = field(default_factory=list)

    @property
    def param_names(self) -> List[str]:
        return [p.name for p in self.params]

    def signature(self, array_type: str) -> inspect.Signature:
        """MXNet's generated signature: the inputs (or *data), the parameters
        (all keyword-able, in the registry's order), out=/name=, **kwargs."""
        P = inspect.Parameter
        params = []
        if self.variadic:
            params.append(P(self.inputs[0], P.VAR_POSITIONAL))
        else:
            params += [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in self.inputs]
        kind = P.KEYWORD_ONLY if self.variadic else P.POSITIONAL_OR_KEYWORD
        params += [P(p.name, kind, default=_NULL) for p in self.params
                   if p.name != self.key_var_num_args]
        extra = "out" if array_type == "NDArray" else "attr"
        params += [P(extra, P.KEYWORD_ONLY, default=None), P("name", P.KEYWORD_ONLY, default=None),
                   P("kwargs", P.VAR_KEYWORD)]
        return inspect.Signature(params)

    def docstring(self, array_type: str) -> str:
        """numpydoc text from the registry's descriptions."""
        lines = [self.description.strip() or self.name, ""]
        if self.name != self.real_name:
            lines += [f"An alias of {self.real_name}.", ""]
        lines += ["Parameters", "----------"]
        if self.variadic:
            lines += [f"*{self.inputs[0]} : {array_type}[]", "    The inputs (any number)."]
        else:
            lines += [f"{n} : {array_type}\n    Input {n}." for n in self.inputs]
        for p in self.params:
            if p.name == self.key_var_num_args:
                continue
            lines.append(f"{p.name} : {p.type_info}")
            lines += textwrap.wrap(p.description, 76, initial_indent="    ",
                                   subsequent_indent="    ") or ["    "]
        if array_type == "NDArray":
            lines += ["out : NDArray, optional", "    The array(s) to write the result to.",
                      "", "Returns", "-------", "NDArray or list of NDArrays"]
        else:
            lines += ["name : str, optional", "    The node's name.", "attr : dict, optional",
                      "    Attributes of the node.", "", "Returns", "-------", "Symbol"]
        return "\n".join(lines)


class _Null:
    """The default of a parameter not given (MXNet's _Null): left to the registry."""

    def __repr__(self) -> str:
        return "_Null"


_NULL = _Null()

_TYPE_RE = re.compile(r"^(.*?), (required|optional, default=(.*))$", re.S)


def _parse_param(name: str, type_info: str, description: str) -> ParamInfo:
    m = _TYPE_RE.match(type_info)
    if not m:  # not in the registry's usual form: treat as optional
        return ParamInfo(name, type_info, description, False, None)
    required = m.group(2) == "required"
    return ParamInfo(name, type_info, description, required, None if required else m.group(3))


def _read_info(op_name: str) -> OpInfo:
    handle = ctypes.c_void_p()
    check_call(_LIB.NNGetOpHandle(c_str(op_name), ctypes.byref(handle)))
    real_name = ctypes.c_char_p()
    desc = ctypes.c_char_p()
    num_args = mx_uint()
    arg_names = ctypes.POINTER(ctypes.c_char_p)()
    arg_types = ctypes.POINTER(ctypes.c_char_p)()
    arg_descs = ctypes.POINTER(ctypes.c_char_p)()
    key_var = ctypes.c_char_p()
    ret_type = ctypes.c_char_p()
    check_call(_LIB.MXSymbolGetAtomicSymbolInfo(
        handle, ctypes.byref(real_name), ctypes.byref(desc), ctypes.byref(num_args),
        ctypes.byref(arg_names), ctypes.byref(arg_types), ctypes.byref(arg_descs),
        ctypes.byref(key_var), ctypes.byref(ret_type)))
    n = num_args.value
    names = py_str_list(n, arg_names)
    types = py_str_list(n, arg_types)
    descs = py_str_list(n, arg_descs)
    info = OpInfo(name=op_name, real_name=py_str(real_name.value), description=py_str(desc.value or b""),
                  handle=handle, inputs=[], variadic=False,
                  key_var_num_args=py_str(key_var.value or b""))
    for name, type_info, description in zip(names, types, descs):
        if type_info.startswith("NDArray-or-Symbol"):
            info.inputs.append(name)
            info.variadic = info.variadic or type_info.endswith("[]")
        else:
            info.params.append(_parse_param(name, type_info, description))
    return info


def all_op_names() -> List[str]:
    size = mx_uint()
    names = ctypes.POINTER(ctypes.c_char_p)()
    check_call(_LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(names)))
    return py_str_list(size.value, names)


_CACHE: Dict[str, OpInfo] = {}


def op_infos() -> Dict[str, OpInfo]:
    """Every operator and alias by the name it is called by."""
    if not _CACHE:
        for name in all_op_names():
            _CACHE[name] = _read_info(name)
    return _CACHE


def param_str(value) -> str:
    """A Python parameter value as the registry's text (MXNet's spellings:
    True/False, (3, 3), float32)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(param_str(v) for v in value) + (",)" if len(value) == 1 else ")")
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return np.dtype(value).name
    return str(value)


def split_call(info: OpInfo, args: tuple, kwargs: dict, array_type: type):
    """Sorts a call's arguments into inputs (arrays or symbols) and
    parameters (name -> text), as MXNet's generated functions do: positional
    arguments are the inputs then the parameters in order; inputs may also
    be given by name; None inputs are left out. Returns (inputs, their
    input names (None for a variadic operator), parameters)."""
    params: Dict[str, str] = {}
    if info.variadic:
        inputs = list(args)
        given = kwargs.pop(info.inputs[0], None)
        if given is not None:
            inputs += list(given) if isinstance(given, (list, tuple)) else [given]
        names = None
    else:
        slots: Dict[str, object] = dict.fromkeys(info.inputs)
        param_order = [p.name for p in info.params]
        if len(args) > len(info.inputs) + len(param_order):
            raise TypeError(f"{info.name}() takes at most {len(info.inputs) + len(param_order)} "
                            f"positional arguments ({len(args)} given)")
        for i, a in enumerate(args):
            if i < len(info.inputs):
                slots[info.inputs[i]] = a
                continue
            pname = param_order[i - len(info.inputs)]
            if pname in kwargs:
                raise TypeError(f"{info.name}() got multiple values for argument '{pname}'")
            kwargs[pname] = a
        for name in info.inputs:
            if name in kwargs:
                if slots[name] is not None:
                    raise TypeError(f"{info.name}() got multiple values for input '{name}'")
                slots[name] = kwargs.pop(name)
        names = [n for n, v in slots.items() if v is not None]
        inputs = [slots[n] for n in names]
    for a in inputs:
        if not isinstance(a, array_type):
            raise TypeError(f"{info.name}: inputs must be {array_type.__name__}s, "
                            f"got {type(a).__name__}")
    for key, value in kwargs.items():
        if isinstance(value, _Null) or value is None:
            continue
        if isinstance(value, array_type):
            raise TypeError(f"{info.name}: '{key}' is not an input of {info.name} "
                            f"(inputs: {', '.join(info.inputs) or 'none'})")
        params[key] = param_str(value)
    return inputs, names, params
