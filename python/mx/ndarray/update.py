"""MXNet's optimizer update operators (sgd_update, sgd_mom_update,
adam_update) with their names, parameters and formulas, for an imperative
training loop. mx's registry has no such operators, so these are written
with registry operators (several engine calls each, in place where MXNet's
are); when the registry gains an operator of the same name, mx.nd uses the
registered one instead."""
from __future__ import annotations

from .ndarray import NDArray, _op


def _scaled_grad(grad: NDArray, rescale_grad: float, clip_gradient: float) -> NDArray:
    g = _op("_mul_scalar", grad, scalar=float(rescale_grad))
    if clip_gradient is not None and clip_gradient >= 0:
        g = _op("clip", g, a_min=-float(clip_gradient), a_max=float(clip_gradient))
    return g


def sgd_update(weight: NDArray, grad: NDArray, lr: float, wd: float = 0.0,
               rescale_grad: float = 1.0, clip_gradient: float = -1.0, lazy_update: bool = True,
               out: NDArray = None, name=None) -> NDArray:
    """weight = (1 - lr * wd) * weight - lr * clip(rescale_grad * grad)."""
    g = _scaled_grad(grad, rescale_grad, clip_gradient)
    decayed = _op("_mul_scalar", weight, scalar=1.0 - float(lr) * float(wd))
    step = _op("_mul_scalar", g, scalar=float(lr))
    return _op("elemwise_sub", decayed, step, out=out)


def sgd_mom_update(weight: NDArray, grad: NDArray, mom: NDArray, lr: float, momentum: float = 0.0,
                   wd: float = 0.0, rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                   lazy_update: bool = True, out: NDArray = None, name=None) -> NDArray:
    """mom = momentum * mom - lr * wd * weight - lr * clip(rescale_grad * grad);
    weight = weight + mom (mom is updated in place)."""
    g = _scaled_grad(grad, rescale_grad, clip_gradient)
    _op("_mul_scalar", mom, scalar=float(momentum), out=mom)
    if wd:
        mom -= _op("_mul_scalar", weight, scalar=float(lr) * float(wd))
    mom -= _op("_mul_scalar", g, scalar=float(lr))
    return _op("elemwise_add", weight, mom, out=out)


def adam_update(weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray, lr: float,
                beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8, wd: float = 0.0,
                rescale_grad: float = 1.0, clip_gradient: float = -1.0, lazy_update: bool = True,
                out: NDArray = None, name=None) -> NDArray:
    """g = clip(rescale_grad * grad + wd * weight); mean = beta1 mean + (1 - beta1) g;
    var = beta2 var + (1 - beta2) g^2; weight -= lr mean / (sqrt(var) + epsilon)
    (mean and var in place; lr carries the bias correction, as in MXNet)."""
    g = _op("_mul_scalar", grad, scalar=float(rescale_grad))
    if wd:
        g = g + _op("_mul_scalar", weight, scalar=float(wd))
    if clip_gradient is not None and clip_gradient >= 0:
        g = _op("clip", g, a_min=-float(clip_gradient), a_max=float(clip_gradient))
    _op("_mul_scalar", mean, scalar=float(beta1), out=mean)
    mean += _op("_mul_scalar", g, scalar=1.0 - float(beta1))
    _op("_mul_scalar", var, scalar=float(beta2), out=var)
    var += _op("_mul_scalar", _op("square", g), scalar=1.0 - float(beta2))
    denom = _op("_plus_scalar", _op("sqrt", var), scalar=float(epsilon))
    step = _op("_mul_scalar", _op("elemwise_div", mean, denom), scalar=float(lr))
    return _op("elemwise_sub", weight, step, out=out)


UPDATES = {"sgd_update": sgd_update, "sgd_mom_update": sgd_mom_update, "adam_update": adam_update}
