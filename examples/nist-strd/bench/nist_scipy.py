#!/usr/bin/python3
"""The 54 NIST StRD nonlinear regression runs with scipy.optimize.least_squares.

The peer of kinfer's levmar method on the same runs (the 27 datasets in
builtin/models/nist/testdata, each from NIST's two certified starts), for
docs/PERFORMANCE.md. Each configuration fits all 54 runs with the same
analytic Jacobians the builtin nist model has (a port of
builtin/models/nist/problems.go), and reports the runs solved (every
certified parameter to LRE >= 6, LRE = -log10(|est - cert|/|cert|) capped at
11) and the total time of the 54 fits (best of --repeat).

Configurations:
  lm-default   method='lm'  (MINPACK lmder), scipy's defaults
  trf-default  method='trf' (trust-region reflective), scipy's defaults
  lm-tuned     method='lm',  ftol = xtol = gtol = 1e-15, x_scale='jac',
               max_nfev = 1000*(p+1)
  trf-tuned    method='trf', the same
  dogbox-tuned method='dogbox', the same

Run (Debian's python3 with python3-scipy):
  /usr/bin/python3 examples/nist-strd/bench/nist_scipy.py [--repeat 5] [--table]
"""

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np
import scipy
from scipy.optimize import least_squares

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "..", "builtin", "models", "nist", "testdata")

# NIST's order, as builtin/models/nist/problems.go.
NAMES = ["Misra1a", "Chwirut2", "Chwirut1", "Lanczos3", "Gauss1", "Gauss2",
         "DanWood", "Misra1b", "Kirby2", "Hahn1", "Nelson", "MGH17", "Lanczos1",
         "Lanczos2", "Gauss3", "Misra1c", "Misra1d", "Roszman1", "ENSO", "MGH09",
         "Thurber", "BoxBOD", "Rat42", "MGH10", "Eckerle4", "Rat43", "Bennett5"]


def parse(path):
    """Reads a StRD file: starts, certified values, data (y, x[, x2])."""
    starts, cert = [[], []], []
    rows, in_data, name = [], False, None
    with open(path) as f:
        for line in f:
            fields = line.split()
            if in_data:
                if fields:
                    rows.append([float(v) for v in fields])
                continue
            if line.startswith("Dataset Name:"):
                name = fields[2]
            elif len(fields) >= 6 and fields[1] == "=" and fields[0].startswith("b"):
                starts[0].append(float(fields[2]))
                starts[1].append(float(fields[3]))
                cert.append(float(fields[4]))
            elif len(fields) >= 3 and fields[0] == "Data:" and fields[1] == "y":
                in_data = True
    data = np.array(rows)
    y = data[:, 0]
    if name == "Nelson":
        y = np.log(y)
    x = data[:, 1]
    x2 = data[:, 2] if data.shape[1] > 2 else np.zeros_like(x)
    return name, [np.array(s) for s in starts], np.array(cert), x, x2, y


# Models: f(b, x, x2) -> (y, J), J = dy/db (n x P). Ports of problems.go.
def misra1a(b, x, _):
    e = np.exp(-b[1] * x)
    return b[0] * (1 - e), np.column_stack([1 - e, b[0] * x * e])


def chwirut(b, x, _):
    e = np.exp(-b[0] * x)
    u = b[1] + b[2] * x
    return e / u, np.column_stack([-x * e / u, -e / u**2, -x * e / u**2])


def lanczos(b, x, _):
    cols, y = [], 0
    for i in (0, 2, 4):
        e = np.exp(-b[i + 1] * x)
        y = y + b[i] * e
        cols += [e, -x * b[i] * e]
    return y, np.column_stack(cols)


def gauss(b, x, _):
    e1 = np.exp(-b[1] * x)
    y = b[0] * e1
    cols = [e1, -x * b[0] * e1]
    for k in (2, 5):
        a, c, w = b[k], b[k + 1], b[k + 2]
        d = x - c
        e = np.exp(-d * d / (w * w))
        y = y + a * e
        cols += [e, a * e * 2 * d / w**2, a * e * 2 * d * d / w**3]
    return y, np.column_stack(cols)


def danwood(b, x, _):
    p = x ** b[1]
    return b[0] * p, np.column_stack([p, b[0] * p * np.log(x)])


def misra1b(b, x, _):
    u = 1 + b[1] * x / 2
    return b[0] * (1 - u**-2), np.column_stack([1 - u**-2, b[0] * x * u**-3])


def kirby2(b, x, _):
    n = b[0] + x * (b[1] + x * b[2])
    d = 1 + x * (b[3] + x * b[4])
    return n / d, np.column_stack([1 / d, x / d, x * x / d, -n * x / d**2, -n * x * x / d**2])


def rational33(b, x, _):
    n = b[0] + x * (b[1] + x * (b[2] + x * b[3]))
    d = 1 + x * (b[4] + x * (b[5] + x * b[6]))
    return n / d, np.column_stack([1 / d, x / d, x**2 / d, x**3 / d,
                                   -n * x / d**2, -n * x**2 / d**2, -n * x**3 / d**2])


def nelson(b, x1, x2):
    e = np.exp(-b[2] * x2)
    return b[0] - b[1] * x1 * e, np.column_stack([np.ones_like(x1), -x1 * e, b[1] * x1 * x2 * e])


def mgh17(b, x, _):
    e4, e5 = np.exp(-x * b[3]), np.exp(-x * b[4])
    return (b[0] + b[1] * e4 + b[2] * e5,
            np.column_stack([np.ones_like(x), e4, e5, -x * b[1] * e4, -x * b[2] * e5]))


def misra1c(b, x, _):
    u = 1 + 2 * b[1] * x
    s = 1 / np.sqrt(u)
    return b[0] * (1 - s), np.column_stack([1 - s, b[0] * x * s / u])


def misra1d(b, x, _):
    u = 1 + b[1] * x
    return b[0] * b[1] * x / u, np.column_stack([b[1] * x / u, b[0] * x / u**2])


def roszman1(b, x, _):
    w = x - b[3]
    t = b[2] / w
    c = 1 / (math.pi * (1 + t * t))
    return (b[0] - b[1] * x - np.arctan(t) / math.pi,
            np.column_stack([np.ones_like(x), -x, -c / w, -c * b[2] / w**2]))


def enso(b, x, _):
    a = 2 * math.pi * x / 12
    y = b[0] + b[1] * np.cos(a) + b[2] * np.sin(a)
    cols = [np.ones_like(x), np.cos(a), np.sin(a)]
    for k in (3, 6):
        ak = 2 * math.pi * x / b[k]
        c, s = np.cos(ak), np.sin(ak)
        y = y + b[k + 1] * c + b[k + 2] * s
        cols += [(b[k + 1] * s - b[k + 2] * c) * ak / b[k], c, s]
    return y, np.column_stack(cols)


def mgh09(b, x, _):
    n = x * x + x * b[1]
    d = x * x + x * b[2] + b[3]
    return b[0] * n / d, np.column_stack([n / d, b[0] * x / d, -b[0] * n * x / d**2, -b[0] * n / d**2])


def rat42(b, x, _):
    e = np.exp(b[1] - b[2] * x)
    u = 1 + e
    return b[0] / u, np.column_stack([1 / u, -b[0] * e / u**2, b[0] * x * e / u**2])


def mgh10(b, x, _):
    w = x + b[2]
    e = np.exp(b[1] / w)
    return b[0] * e, np.column_stack([e, b[0] * e / w, -b[0] * e * b[1] / w**2])


def eckerle4(b, x, _):
    z = (x - b[2]) / b[1]
    e = np.exp(-0.5 * z * z)
    return b[0] / b[1] * e, np.column_stack([e / b[1], b[0] * e * (z * z - 1) / b[1]**2, b[0] * e * z / b[1]**2])


def rat43(b, x, _):
    e = np.exp(b[1] - b[2] * x)
    u = 1 + e
    p = u ** (-1 / b[3])
    return b[0] * p, np.column_stack([p, -b[0] * p * e / (b[3] * u), b[0] * p * e * x / (b[3] * u),
                                      b[0] * p * np.log(u) / b[3]**2])


def bennett5(b, x, _):
    u = b[1] + x
    p = u ** (-1 / b[2])
    return b[0] * p, np.column_stack([p, -b[0] * p / (b[2] * u), b[0] * p * np.log(u) / b[2]**2])


MODELS = {"Misra1a": misra1a, "Chwirut2": chwirut, "Chwirut1": chwirut, "Lanczos3": lanczos,
          "Gauss1": gauss, "Gauss2": gauss, "DanWood": danwood, "Misra1b": misra1b,
          "Kirby2": kirby2, "Hahn1": rational33, "Nelson": nelson, "MGH17": mgh17,
          "Lanczos1": lanczos, "Lanczos2": lanczos, "Gauss3": gauss, "Misra1c": misra1c,
          "Misra1d": misra1d, "Roszman1": roszman1, "ENSO": enso, "MGH09": mgh09,
          "Thurber": rational33, "BoxBOD": misra1a, "Rat42": rat42, "MGH10": mgh10,
          "Eckerle4": eckerle4, "Rat43": rat43, "Bennett5": bennett5}


def lre(est, cert):
    if not np.isfinite(est):
        return 0.0
    if est == cert:
        return 11.0
    return max(0.0, min(11.0, -math.log10(abs(est - cert) / abs(cert))))


def configs(p):
    tuned = dict(ftol=1e-15, xtol=1e-15, gtol=1e-15, x_scale="jac", max_nfev=1000 * (p + 1))
    return {
        "lm-default": dict(method="lm"),
        "trf-default": dict(method="trf"),
        "lm-tuned": dict(method="lm", **tuned),
        "trf-tuned": dict(method="trf", **tuned),
        "dogbox-tuned": dict(method="dogbox", **tuned),
    }


def run_all(problems, name):
    """Fits the 54 runs with configuration name; returns (LREs, seconds)."""
    lres = []
    t0 = time.perf_counter()
    for prob, starts, cert, x, x2, y in problems:
        f = MODELS[prob]
        fun = lambda b: f(b, x, x2)[0] - y
        jac = lambda b: f(b, x, x2)[1]
        kw = configs(len(cert))[name]
        for s in starts:
            try:
                r = least_squares(fun, s, jac=jac, **kw)
                est = r.x
            except Exception:  # a failed fit is an unsolved run
                est = np.full(len(cert), np.nan)
            lres.append((prob, min(lre(e, c) for e, c in zip(est, cert))))
    return lres, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="time the 54 fits this many times, report the best")
    ap.add_argument("--table", action="store_true", help="print every run's LRE")
    a = ap.parse_args()
    problems = [parse(os.path.join(DATA, n + ".dat")) for n in NAMES]
    warnings.simplefilter("ignore")
    print(f"scipy {scipy.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    print(f"{'configuration':<14} {'solved':>6} {'total s (best of %d)' % a.repeat:>22}  unsolved")
    for name in configs(1):
        best, lres = math.inf, None
        for _ in range(a.repeat):
            lres, secs = run_all(problems, name)
            best = min(best, secs)
        solved = sum(1 for _, l in lres if l >= 6)
        unsolved = [f"{p}/{i % 2 + 1}" for i, (p, l) in enumerate(lres) if l < 6]
        print(f"{name:<14} {solved:>6} {best:>22.4f}  {' '.join(unsolved)}")
        if a.table:
            for i, (p, l) in enumerate(lres):
                print(f"    {p:<9} start {i % 2 + 1}: LRE {l:.1f}")


if __name__ == "__main__":
    main()
