"""mx.optimizer: SGD and Adam for imperative loops (MXNet's classes and
formulas, through mx.nd's update operators) and for KVStore.set_optimizer
(which runs libmx's optimizer of the same name where the values live)."""
from __future__ import annotations

from typing import Dict, Optional

from . import ndarray as nd
from .lr_scheduler import LRScheduler
from .ndarray import NDArray, zeros

__all__ = ["Optimizer", "SGD", "Adam", "create", "get_updater", "Updater"]


class Optimizer:
    """The common settings: learning rate (or a schedule), weight decay,
    gradient rescaling and clipping; wd_mult / lr_mult per parameter index."""

    name = ""

    def __init__(self, learning_rate: float = 0.01, wd: float = 0.0, rescale_grad: float = 1.0,
                 clip_gradient: Optional[float] = None,
                 lr_scheduler: Optional[LRScheduler] = None, begin_num_update: int = 0):
        self.lr = learning_rate
        self.wd = wd
        self.rescale_grad = rescale_grad
        self.clip_gradient = clip_gradient
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is not None:
            lr_scheduler.base_lr = learning_rate
        self.num_update = begin_num_update
        self._index_update_count: Dict[int, int] = {}
        self.lr_mult: Dict[int, float] = {}
        self.wd_mult: Dict[int, float] = {}

    @property
    def learning_rate(self) -> float:
        return self.lr_scheduler(self.num_update) if self.lr_scheduler else self.lr

    def set_learning_rate(self, lr: float) -> None:
        self.lr = lr

    def set_lr_mult(self, args_lr_mult: Dict[int, float]) -> None:
        self.lr_mult = dict(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: Dict[int, float]) -> None:
        self.wd_mult = dict(args_wd_mult)

    def _update_count(self, index: int) -> None:
        count = self._index_update_count.get(index, self.num_update) + 1
        self._index_update_count[index] = count
        self.num_update = max(count, self.num_update)

    def _get_lr(self, index: int) -> float:
        return self.learning_rate * self.lr_mult.get(index, 1.0)

    def _get_wd(self, index: int) -> float:
        return self.wd * self.wd_mult.get(index, 1.0)

    def _common(self) -> dict:
        kw = {"rescale_grad": self.rescale_grad}
        if self.clip_gradient is not None:
            kw["clip_gradient"] = self.clip_gradient
        return kw

    def create_state(self, index: int, weight: NDArray):
        return None

    def update(self, index: int, weight: NDArray, grad: NDArray, state) -> None:
        raise NotImplementedError

    def kvstore_params(self):
        """(libmx's optimizer name, its parameters) for KVStore.set_optimizer."""
        params = {"learning_rate": self.lr, "wd": self.wd, "rescale_grad": self.rescale_grad}
        if self.clip_gradient is not None:
            params["clip_gradient"] = self.clip_gradient
        params.update(self._extra_params())
        return self.name, params

    def _extra_params(self) -> dict:
        return {}


class SGD(Optimizer):
    """SGD with optional momentum (MXNet's sgd_update / sgd_mom_update)."""

    name = "sgd"

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index: int, weight: NDArray):
        return zeros(weight.shape, weight.context, weight.dtype) if self.momentum else None

    def update(self, index: int, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if state is not None:
            nd.sgd_mom_update(weight, grad, state, lr=lr, wd=wd, momentum=self.momentum,
                              out=weight, **self._common())
        else:
            nd.sgd_update(weight, grad, lr=lr, wd=wd, out=weight, **self._common())

    def _extra_params(self) -> dict:
        return {"momentum": self.momentum}


class Adam(Optimizer):
    """Adam with MXNet's bias correction folded into the rate (adam_update)."""

    name = "adam"

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, lazy_update: bool = True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index: int, weight: NDArray):
        return (zeros(weight.shape, weight.context, weight.dtype),
                zeros(weight.shape, weight.context, weight.dtype))

    def update(self, index: int, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        t = self._index_update_count[index]
        lr = self._get_lr(index) * (1.0 - self.beta2 ** t) ** 0.5 / (1.0 - self.beta1 ** t)
        mean, var = state
        nd.adam_update(weight, grad, mean, var, lr=lr, wd=self._get_wd(index), beta1=self.beta1,
                       beta2=self.beta2, epsilon=self.epsilon, out=weight, **self._common())

    def _extra_params(self) -> dict:
        return {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon}


_REGISTRY = {"sgd": SGD, "adam": Adam}


def create(name: str, **kwargs) -> Optimizer:
    """An optimizer by MXNet's name ('sgd', 'adam')."""
    try:
        return _REGISTRY[name.lower()](**kwargs)
    except KeyError:
        raise ValueError(f"mx.optimizer: unknown optimizer '{name}' (one of "
                         f"{', '.join(_REGISTRY)})") from None


class Updater:
    """Calls the optimizer's update with a state per index (MXNet's get_updater)."""

    def __init__(self, optimizer: Optimizer):
        self.optimizer = optimizer
        self.states: Dict[int, object] = {}

    def __call__(self, index: int, grad: NDArray, weight: NDArray) -> None:
        if index not in self.states:
            self.states[index] = self.optimizer.create_state(index, weight)
        self.optimizer.update(index, weight, grad, self.states[index])


def get_updater(optimizer: Optimizer) -> Updater:
    return Updater(optimizer)
