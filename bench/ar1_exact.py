"""The exact degrees of freedom of a short AR(1) window interval: the reference
that autocorr.mean_se's Satterthwaite df are held against (tests/stats/test_ar1_exact.py).

mean_se's interval of n AR(1) values is the mean +- q * se with se^2 =
s^2 (n - 1) / (n - f) * f / n. For a Gaussian AR(1) of known lag-1 r that
interval misses the true mean exactly when the quadratic form

    x' (J / n^2 - q^2 f / (n (n - f)) C) x > 0,   x ~ N(0, S),

is positive (J the all-ones matrix, C the centring, S the correlation matrix
r^|i-j|). Its probability is Imhof's (1961) integral over the eigenvalues of
L' A L (S = L L'), so the quantile q that makes the miss rate exactly 1 -
confidence can be solved for, and with it the t degrees of freedom whose
quantile it is. Those df carry everything the usual approximations drop: s^2
is a weighted sum of chi-squares, not a scaled one, and the mean is not
independent of the residuals.

It lives here, not in ipctop/: the monitor never knows r, only an estimate of
it, and with an estimated r these df cover too little (92.7 % at n 40, r 0.9);
Satterthwaite's err wide by about what the estimate costs, need no numpy and
cost O(n). The work here is O(n^3) per (n, r), about 20 ms at n 6 to 40.

Usage: python bench/ar1_exact.py   (the df table: exact, Satterthwaite, n - f)
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import stdtrit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ipctop.analysis import autocorr  # noqa: E402

# The interval's own floor on n - f (autocorr.mean_se), kept identical here.
MIN_DENOM = 0.05
_DF_LOW, _DF_HIGH = 0.5, 1e4


def above_zero(lams: list[float]) -> float:
    """P(sum lams_i Z_i^2 > 0) for independent standard normals Z (Imhof 1961)."""
    w = np.asarray(lams) / max(abs(x) for x in lams)  # scale-free; keeps u near 1

    def integrand(u: float) -> float:
        theta = 0.5 * float(np.sum(np.arctan(w * u)))
        log_rho = 0.25 * float(np.sum(np.log1p((w * u) ** 2)))
        return math.sin(theta) / (u * math.exp(log_rho))

    value, _ = quad(integrand, 0.0, math.inf, limit=400)
    return 0.5 + float(value) / math.pi


def miss_rate(n: int, r: float, q: float) -> float:
    """How often mean_se's interval with quantile q misses a Gaussian AR(1)'s mean."""
    i = np.arange(n)
    s = r ** np.abs(i[:, None] - i[None, :])
    chol = np.linalg.cholesky(s)
    v = chol.T @ np.ones(n) / n
    centred = chol.T @ (np.eye(n) - 1.0 / n) @ chol
    f = float(s.sum()) / n
    scale = q * q * f / (n * max(n - f, MIN_DENOM))
    return above_zero(np.linalg.eigvalsh(np.outer(v, v) - scale * centred).tolist())


def exact_df(n: int, r: float, confidence: float = 0.95) -> float:
    """The t df whose quantile makes mean_se's interval cover exactly `confidence` of
    a Gaussian AR(1) of n values with lag-1 r (n - 1 for r <= 0), in [0.5, 1e4]."""
    if n < 2:
        return 0.0
    if r <= 0.0:
        return n - 1.0
    alpha = 1.0 - confidence

    def excess(log_df: float) -> float:
        q = float(stdtrit(math.exp(log_df), 0.5 + confidence / 2.0))
        return miss_rate(n, r, q) - alpha  # grows with df: a smaller q misses more

    low, high = math.log(_DF_LOW), math.log(_DF_HIGH)
    if excess(high) <= 0.0:  # even the normal quantile covers
        return _DF_HIGH
    if excess(low) >= 0.0:
        return _DF_LOW
    return math.exp(brentq(excess, low, high, xtol=1e-4))


def main() -> None:
    print("df of mean_se's interval, r known: exact / Satterthwaite (mean_se's) / n - f")
    print("r     " + "".join(f"n {n:<22}" for n in (6, 10, 20, 40)))
    for r in (0.5, 0.77, 0.9):
        cells = []
        for n in (6, 10, 20, 40):
            f = autocorr.ar1_factor(n, r)
            satt = autocorr.satterthwaite_df(n, r)
            cells.append(f"{exact_df(n, r):5.2f} / {satt:5.2f} / {n - f:5.2f}   ")
        print(f"{r:<5} " + "".join(cells))


if __name__ == "__main__":
    main()
