#!/usr/bin/env python3
"""emcee's cost outside the target, beside kinfer's TMCMC (main.go).

The same cheap Gaussian target in d dimensions as main.go: prior N(0, 1)
per parameter within [-10, 10], likelihood exp(-|theta - 0.5|^2 / (2 * 0.5^2)).
emcee (Foreman-Mackey et al. 2013, Debian's python3-emcee) runs its
default stretch move with as many walkers as TMCMC has chains (1000),
vectorised (log_prob gets a whole half-ensemble as an array) and not (one
Python call per walker). The time spent inside log_prob is the target's;
the rest, per walker-step, is the overhead. One JSON line per (d, mode),
with process CPU time (time.process_time) and wall time.
"""
import argparse
import json
import time

import emcee
import numpy as np

MU, S, LO, HI = 0.5, 0.5, -10.0, 10.0
LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


class Target:
    def __init__(self):
        self.wall = 0.0
        self.cpu = 0.0

    def one(self, th):
        w0, c0 = time.perf_counter(), time.process_time()
        if np.any(th < LO) or np.any(th > HI):
            r = -np.inf
        else:
            r = float(np.sum(-0.5 * th * th - LOG_SQRT_2PI) - np.sum((th - MU) ** 2) / (2 * S * S))
        self.wall += time.perf_counter() - w0
        self.cpu += time.process_time() - c0
        return r

    def many(self, th):
        w0, c0 = time.perf_counter(), time.process_time()
        r = np.sum(-0.5 * th * th - LOG_SQRT_2PI, axis=1) - np.sum((th - MU) ** 2, axis=1) / (2 * S * S)
        r[np.any((th < LO) | (th > HI), axis=1)] = -np.inf
        self.wall += time.perf_counter() - w0
        self.cpu += time.process_time() - c0
        return r


def run(d, walkers, steps, vectorize, seed):
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal((walkers, d))
    t = Target()
    sampler = emcee.EnsembleSampler(walkers, d, t.many if vectorize else t.one, vectorize=vectorize)
    sampler._random = np.random.mtrand.RandomState(seed)
    w0, c0 = time.perf_counter(), time.process_time()
    sampler.run_mcmc(p0, steps, progress=False)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    n = walkers * steps
    return {
        "impl": "emcee-vectorised" if vectorize else "emcee",
        "d": d,
        "particle_steps": n,
        "total_s": wall,
        "target_s": t.wall,
        "overhead_us_per_particle_step": (wall - t.wall) / n * 1e6,
        "cpu_s": cpu,
        "target_cpu_s": t.cpu,
        "overhead_cpu_us_per_particle_step": (cpu - t.cpu) / n * 1e6,
        "acceptance": float(np.mean(sampler.acceptance_fraction)),
        "emcee": emcee.__version__,
        "numpy": np.__version__,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-d", default="10,50", help="comma-separated dimensions")
    ap.add_argument("--walkers", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=200, help="steps of the vectorised run")
    ap.add_argument("--steps-loop", type=int, default=20, help="steps of the run with one call per walker")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    for d in (int(x) for x in a.d.split(",")):
        for vec in (True, False):
            print(json.dumps(run(d, a.walkers, a.steps if vec else a.steps_loop, vec, a.seed)), flush=True)


if __name__ == "__main__":
    main()
