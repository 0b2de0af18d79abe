"""Learning-rate schedules by update count (MXNet's FactorScheduler and
MultiFactorScheduler)."""
from __future__ import annotations

from typing import Sequence

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler"]


class LRScheduler:
    def __init__(self, base_lr: float = 0.01):
        self.base_lr = base_lr

    def __call__(self, num_update: int) -> float:
        return self.base_lr


class FactorScheduler(LRScheduler):
    """The rate times `factor` every `step` updates, not below stop_factor_lr."""

    def __init__(self, step: int, factor: float = 1.0, stop_factor_lr: float = 1e-8,
                 base_lr: float = 0.01):
        super().__init__(base_lr)
        if step < 1:
            raise ValueError("FactorScheduler: step must be at least 1")
        self.step, self.factor, self.stop_factor_lr = step, factor, stop_factor_lr

    def __call__(self, num_update: int) -> float:
        lr = self.base_lr * self.factor ** max(0, (num_update - 1) // self.step)
        return max(lr, self.stop_factor_lr)


class MultiFactorScheduler(LRScheduler):
    """The rate times `factor` after each update count in `step` (increasing)."""

    def __init__(self, step: Sequence[int], factor: float = 1.0, base_lr: float = 0.01):
        super().__init__(base_lr)
        step = list(step)
        if any(b <= a for a, b in zip(step, step[1:])) or any(s < 1 for s in step):
            raise ValueError("MultiFactorScheduler: step must be increasing positive counts")
        self.step, self.factor = step, factor

    def __call__(self, num_update: int) -> float:
        return self.base_lr * self.factor ** sum(1 for s in self.step if num_update > s)
