"""Devices: ``mx.cpu()``, ``mx.gpu(0)``, and the default device that a
``with ctx:`` block sets (as MXNet's Context)."""
from __future__ import annotations

import threading
from typing import Optional

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context"]


class Context:
    """A device: type ('cpu', 'gpu', 'cpu_pinned') and number."""

    # MXNet's device type codes, as the C API takes them.
    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3}
    _default = threading.local()

    def __init__(self, device_type, device_id: int = 0):
        if isinstance(device_type, Context):
            self.device_typeid, self.device_id = device_type.device_typeid, device_type.device_id
            return
        if device_type not in self.devstr2type:
            raise ValueError(f"unknown device type {device_type!r} "
                             f"(one of {', '.join(self.devstr2type)})")
        self.device_typeid = self.devstr2type[device_type]
        self.device_id = int(device_id)

    @property
    def device_type(self) -> str:
        return self.devtype2str[self.device_typeid]

    def __eq__(self, other) -> bool:
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __hash__(self) -> int:
        return hash((self.device_typeid, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    # `with mx.gpu(0):` makes it the default device of this thread.
    def __enter__(self) -> "Context":
        stack = _stack()
        stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _stack().pop()

    @staticmethod
    def from_codes(dev_type: int, dev_id: int) -> "Context":
        return Context(Context.devtype2str[dev_type], dev_id)


def _stack():
    if not hasattr(Context._default, "stack"):
        Context._default.stack = [Context("cpu", 0)]
    return Context._default.stack


def cpu(device_id: int = 0) -> Context:
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    return Context("gpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    return Context("cpu_pinned", device_id)


def current_context() -> Context:
    """The device of the innermost ``with ctx:`` block (cpu(0) outside any)."""
    return _stack()[-1]


def as_context(ctx: Optional[Context]) -> Context:
    return current_context() if ctx is None else Context(ctx)
