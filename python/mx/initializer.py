"""mx.init: initial values of parameters (MXNet's Zero, One, Constant,
Uniform, Normal, Xavier). Values are drawn from numpy's global generator
(np.random.seed makes them reproducible) and copied into the array."""
from __future__ import annotations

import json

import numpy as np

from .ndarray import NDArray

__all__ = ["Initializer", "Zero", "One", "Constant", "Uniform", "Normal", "Xavier"]


class Initializer:
    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def dumps(self) -> str:
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, desc, arr: NDArray) -> None:
        """Fills arr; desc is the parameter's name (MXNet passes an InitDesc)."""
        arr[:] = self._values(arr.shape).astype(np.dtype(arr.dtype))

    def _values(self, shape) -> np.ndarray:
        raise NotImplementedError


class Zero(Initializer):
    def _values(self, shape):
        return np.zeros(shape)


class One(Initializer):
    def _values(self, shape):
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value: float):
        super().__init__(value=value)
        self.value = value

    def _values(self, shape):
        return np.full(shape, self.value)


class Uniform(Initializer):
    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _values(self, shape):
        return np.random.uniform(-self.scale, self.scale, shape)


class Normal(Initializer):
    def __init__(self, sigma: float = 0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _values(self, shape):
        return np.random.normal(0.0, self.sigma, shape)


class Xavier(Initializer):
    """scale = sqrt(magnitude / fan), fan by factor_type ('avg', 'in', 'out');
    uniform in [-scale, scale] or gaussian with sigma scale."""

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        if rnd_type not in ("uniform", "gaussian") or factor_type not in ("avg", "in", "out"):
            raise ValueError("Xavier: rnd_type is uniform or gaussian, factor_type avg, in or out")
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def _values(self, shape):
        if len(shape) < 2:
            raise ValueError(f"Xavier needs at least 2 dimensions, got shape {shape}")
        hw = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw, shape[0] * hw
        fan = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = np.sqrt(self.magnitude / fan)
        if self.rnd_type == "uniform":
            return np.random.uniform(-scale, scale, shape)
        return np.random.normal(0.0, scale, shape)
