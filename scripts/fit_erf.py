#!/usr/bin/env python3
"""Fits the erf polynomials of lib/op/vmath/vmath_simd.h and prints them.

Near 0: erf(x) = x + x * p(x^2) on [0, 1]; away from 0: erf(x) = 1 - e^q(x - 2.5)
on [1, 4]. Weighted least squares on Chebyshev points, reweighted towards the
largest errors (Lawson), in double; the float32 error of the result is printed.
Needs numpy:  ${PYTHON:-python3} scripts/fit_erf.py
"""
import math

import numpy as np


def fit(xs, ys, degree, shift=0.0, rounds=30):
    a = np.stack([(xs - shift) ** k for k in range(degree + 1)], 1)
    w = np.ones_like(xs)
    for _ in range(rounds):
        c, *_ = np.linalg.lstsq(a * w[:, None], ys * w, rcond=None)
        err = np.abs(a @ c - ys)
        w = w * (1 + err / err.max())
    return c.astype(np.float32)


def horner(c, z):
    p = np.float32(c[-1])
    for k in range(len(c) - 2, -1, -1):
        p = (p * z + c[k]).astype(np.float32)
    return p


def ulp_error(got, xs):
    want = np.array([math.erf(float(v)) for v in xs])
    return (np.abs(got.astype(np.float64) - want) / np.spacing(want.astype(np.float32))).max()


def main():
    n = 4000
    x = np.cos(np.linspace(0, np.pi, n)) * 0.5 + 0.5
    x = x[x > 1e-4]
    near = fit(x * x, np.array([math.erf(v) / v for v in x]) - 1.0, 6)
    xt = np.linspace(1e-4, 1, 200001).astype(np.float32)
    print("near, x^0 first:", [float(c) for c in near])
    print("  max error", ulp_error(horner(near, xt * xt) * xt + xt, xt), "ulp")

    t = np.cos(np.linspace(0, np.pi, n)) * 1.5 + 2.5
    far = fit(t, np.array([math.log(math.erfc(v)) for v in t]), 9, shift=2.5)
    tt = np.linspace(1, 4, 200001).astype(np.float32)
    q = horner(far, (tt - np.float32(2.5)).astype(np.float32))
    print("far, (x - 2.5)^0 first:", [float(c) for c in far])
    print("  max error", ulp_error((1 - np.exp(q.astype(np.float64))).astype(np.float32), tt), "ulp")


if __name__ == "__main__":
    main()
