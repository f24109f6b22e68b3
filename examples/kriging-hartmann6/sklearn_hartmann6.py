"""sklearn's GaussianProcessRegressor on the same Hartmann-6 data as
kriging-hartmann6 (main.go writes OUT/train.csv and OUT/test.csv).

Kernel: ConstantKernel * RBF with one length scale per input (the ARD
squared exponential, the same model as kinfer's Gaussian product
correlation with a constant mean), normalize_y=True, the default L-BFGS-B
optimiser from one start (n_restarts_optimizer=0, sklearn's default).
The start is the initial length scale, all inputs alike: 1.0 is sklearn's
default. Prints one JSON line per start.

    /usr/bin/python3 sklearn_hartmann6.py OUT [--starts 1,0.01,10]
"""
import argparse
import json
import time

import numpy as np
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="directory with train.csv and test.csv")
    ap.add_argument("--starts", default="1,0.3,0.01,10", help="initial length scales, comma-separated")
    ap.add_argument("--restarts", type=int, default=0, help="n_restarts_optimizer")
    a = ap.parse_args()
    tr = np.loadtxt(f"{a.out}/train.csv", delimiter=",", skiprows=1)
    te = np.loadtxt(f"{a.out}/test.csv", delimiter=",", skiprows=1)
    x, y, xt, yt = tr[:, :6], tr[:, 6], te[:, :6], te[:, 6]
    for s in a.starts.split(","):
        ls = float(s)
        k = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.full(6, ls), (1e-3, 1e3))
        gp = GaussianProcessRegressor(k, normalize_y=True, n_restarts_optimizer=a.restarts, random_state=0)
        t0 = time.perf_counter()
        gp.fit(x, y)
        sec = time.perf_counter() - t0
        rmse = float(np.sqrt(np.mean((gp.predict(xt) - yt) ** 2)))
        print(json.dumps({
            "impl": "sklearn-gpr", "n": len(y), "m": len(yt), "start_length_scale": ls,
            "restarts": a.restarts, "fit_seconds": sec, "rmse": rmse,
            "kernel": str(gp.kernel_), "log_marginal_likelihood": float(gp.log_marginal_likelihood_value_),
        }), flush=True)


if __name__ == "__main__":
    main()
