#!/usr/bin/python3
"""PyTorch twin of kinfer's builtin arm, for timing an Adam iteration.

What it computes: the same function as kinfer's `arm` model with the
`nmse` likelihood, in float64, batched over the K rows of the data:

  per row (q, q_dot, a) of 5 joint angles, 5 joint velocities and
  8 muscle activations:
    muscle-tendon lengths and moment arms from the arm's polynomial paths
      (8 muscles, 19 path terms: len = offset - sum q(c0 + q(c1/2 + q c2/3)),
      r = c0 + c1 q + c2 q^2), lengthening velocities v = -R q_dot;
    MuJoCo Hill tensions T = F0 (FL(L) FV(V) a + fpmax FP(L)) with
      L = (len - l_slack)/L0, V = v/(L0 vmax) and the piecewise-quadratic
      curves FL, FV, FP (torch.where), theta's L0, F0, vmax per muscle;
    joint torques tau = R^T T - b q_dot + soft joint limits;
    q_ddot by the articulated-body algorithm (Featherstone 2008, Table 7.1)
      on the 5-body tree (two massless shoulder bodies, humerus, ulna,
      radius; 3 x 10 inertial parameters from theta), written with dense
      6x6 spatial matrices (Plücker transforms, spatial inertias, crm/crf),
      as in Featherstone's spatial_v2, batched over the rows with bmm;
  loss L_FD = sum (q_ddot - q_ddot_obs)^2 / (N var_obs) over the N = 5K
    values (Diff-MSM Eq. 4, nmse "pooled");
  loss.backward(), then torch.optim.Adam (lr 1e-3) on the learnable
    parameters: M4's 36 (the bones' mass and COM and the 24 muscle
    parameters; the 18 inertia entries fixed), as kinfer's M4 study.

One Adam iteration is zero_grad + forward + loss + backward + step. The
constants and kinfer's own loss and gradient at one theta come from
`go run ./examples/arm/bench` (JSON on stdin or --constants); before timing,
the script checks that it computes kinfer's function: q_ddot at the truth
against the data file's qdd columns, and loss and gradient (all 54
parameters) against kinfer's at check.theta.

  go run ./examples/arm/bench > /tmp/arm.json
  /usr/bin/python3 examples/arm/bench/torch_arm.py --constants /tmp/arm.json --threads 1

Prints one JSON line: threads, rows, iterations, wall and CPU (process)
milliseconds per iteration, and the check's errors.
"""
import argparse
import json
import sys
import time

import numpy as np
import torch

DT = torch.float64


def skew(v):
    """v (..., 3) -> v x (..., 3, 3)."""
    z = torch.zeros_like(v[..., 0])
    return torch.stack([
        torch.stack([z, -v[..., 2], v[..., 1]], -1),
        torch.stack([v[..., 2], z, -v[..., 0]], -1),
        torch.stack([-v[..., 1], v[..., 0], z], -1)], -2)


def crm(v):
    """Spatial cross product for motion vectors, (K, 6) -> (K, 6, 6)."""
    w, u = skew(v[:, :3]), skew(v[:, 3:])
    z = torch.zeros_like(w)
    return torch.cat([torch.cat([w, z], 2), torch.cat([u, w], 2)], 1)


def crf(v):
    """Spatial cross product for force vectors: -crm(v)^T."""
    return -crm(v).transpose(1, 2)


def mv(M, v):
    """Batched matrix-vector product (K, n, n) x (K, n) -> (K, n)."""
    return torch.bmm(M, v.unsqueeze(2)).squeeze(2)


class Arm:
    def __init__(self, c):
        t = lambda x: torch.tensor(x, dtype=DT)
        self.c = c
        self.nb = len(c["bodies"])
        self.parent = [b["parent"] for b in c["bodies"]]
        self.first_bone = c["first_bone"]
        self.gravity = t(c["gravity"])
        self.damping = c["damping"]
        self.axes = [t(b["axis"]) for b in c["bodies"]]
        self.ax = [skew(a) for a in self.axes]
        self.ax2 = [a @ a for a in self.ax]
        self.rx = [skew(t(b["pos"])) for b in c["bodies"]]
        self.pos = [t(b["pos"]) for b in c["bodies"]]
        self.pos0 = [not any(b["pos"]) for b in c["bodies"]]
        self.impl = "blocks"
        self.S = [torch.cat([a, torch.zeros(3, dtype=DT)]) for a in self.axes]
        ms = c["muscles"]
        self.nm = len(ms)
        self.slack = t([m["slack"] for m in ms])
        self.lmin, self.lmax = t([m["lmin"] for m in ms]), t([m["lmax"] for m in ms])
        self.fpmax, self.fvmax = t([m["fpmax"] for m in ms]), t([m["fvmax"] for m in ms])
        self.offset = t([m["path_offset"] for m in ms])
        tj, tm, c0, c1, c2 = [], [], [], [], []
        for i, m in enumerate(ms):
            for term in m["path_terms"]:
                tj.append(term["joint"]); tm.append(i)
                c0.append(term["c0"]); c1.append(term["c1"]); c2.append(term["c2"])
        self.tj, self.tm = torch.tensor(tj), torch.tensor(tm)
        self.c0, self.c1, self.c2 = t(c0), t(c1), t(c2)
        nt, nd = len(tj), self.nb
        self.Mt = torch.zeros(nt, self.nm, dtype=DT); self.Mt[torch.arange(nt), self.tm] = 1  # term -> muscle
        self.Jt = torch.zeros(nt, nd, dtype=DT); self.Jt[torch.arange(nt), self.tj] = 1      # term -> joint
        self.lo = t([r[0] for r in c["range"]]); self.hi = t([r[1] for r in c["range"]])
        self.lk, self.lc = t(c["limit_stiffness"]), t(c["limit_damping"])
        self.margin = c["limit_margin"]

    def inertia(self, p):
        """Spatial inertia (6, 6) of a bone from its 10 parameters (RBDA Eq. 2.63)."""
        m, com = p[0], p[1:4]
        Ic = torch.stack([torch.stack([p[4], p[7], p[8]]), torch.stack([p[7], p[5], p[9]]), torch.stack([p[8], p[9], p[6]])])
        cx = skew(com)
        top = torch.cat([Ic + m * cx @ cx.T, m * cx], 1)
        bot = torch.cat([m * cx.T, m * torch.eye(3, dtype=DT)], 1)
        return torch.cat([top, bot], 0)

    def limits(self, q, qd):
        above, below = q > self.hi, q < self.lo
        e = torch.where(above, q - self.hi, torch.where(below, self.lo - q, torch.zeros_like(q)))
        sign = torch.where(above, -torch.ones_like(q), torch.ones_like(q))
        d = self.margin
        phi = torch.where(e < d, e * e / (2 * d), e - d / 2)
        w = torch.where(e < d, e / d, torch.ones_like(e))
        return torch.where(above | below, sign * self.lk * phi - self.lc * w * qd, torch.zeros_like(q))

    def tensions(self, theta, q, qd, act):
        mp = theta[3 * 10:].reshape(self.nm, 3)
        L0, F0, vmax = mp[:, 0], mp[:, 1], mp[:, 2]
        qt, qdt = q[:, self.tj], qd[:, self.tj]
        r = self.c0 + qt * (self.c1 + qt * self.c2)
        length = self.offset + (-qt * (self.c0 + qt * (self.c1 / 2 + qt * self.c2 / 3))) @ self.Mt
        vel = -(r * qdt) @ self.Mt
        L = (length - self.slack) / L0
        V = vel / (L0 * vmax)
        one = torch.ones_like(L)
        a, b = 0.5 * (self.lmin + 1), 0.5 * (1 + self.lmax)
        x1 = (L - self.lmin) / (a - self.lmin)
        x2 = (1 - L) / (1 - a)
        x3 = (L - 1) / (b - 1)
        x4 = (self.lmax - L) / (self.lmax - b)
        FL = torch.where(L <= a, 0.5 * x1 * x1,
             torch.where(L <= 1, 1 - 0.5 * x2 * x2,
             torch.where(L <= b, 1 - 0.5 * x3 * x3, 0.5 * x4 * x4)))
        FL = torch.where((L < self.lmin) | (L > self.lmax), 0 * one, FL)
        y = self.fvmax - 1
        FV = torch.where(V <= -1, 0 * one,
             torch.where(V <= 0, (V + 1) ** 2,
             torch.where(V <= y, self.fvmax - (y - V) ** 2 / y, self.fvmax * one)))
        FP = torch.where(L <= 1, 0 * one, torch.where(L <= b, 0.5 * x3 * x3, 0.5 + (L - b) / (b - 1)))
        T = F0 * (FL * FV * act + self.fpmax * FP)
        return r, T

    def qdd(self, theta, q, qd, act):
        return self.qdd_blocks(theta, q, qd, act) if self.impl == "blocks" else self.qdd_dense(theta, q, qd, act)

    def qdd_blocks(self, theta, q, qd, act):
        """The ABA with the angular and linear parts of spatial vectors as
        separate (K, 3) tensors, rotations by Rodrigues' formula with the
        constant matrices a x and a x a x (E w = w - sin q (a x w) +
        (1 - cos q)(a x a x w): two (K, 3) x (3, 3) products), and only the
        congruence X^T I^a X as two dense 6x6 bmm."""
        K = q.shape[0]
        r, T = self.tensions(theta, q, qd, act)
        tau = (r * T[:, self.tm]) @ self.Jt - self.damping * qd + self.limits(q, qd)
        nb, par = self.nb, self.parent
        I = [None] * nb
        for k in range(nb - self.first_bone):
            I[self.first_bone + k] = self.inertia(theta[10 * k:10 * (k + 1)])
        s, co = torch.sin(q), torch.cos(q)
        oc = 1 - co
        cross = lambda a, b: torch.cross(a, b, dim=1)
        # E w and E^T w (a x is skew: E^T = 1 + s a x + (1 - c) a x a x); row vectors: w @ M^T
        rot = lambda i, w: w - s[:, i, None] * (w @ self.ax[i].T) + oc[:, i, None] * (w @ self.ax2[i].T)
        rotT = lambda i, w: w + s[:, i, None] * (w @ self.ax[i].T) + oc[:, i, None] * (w @ self.ax2[i].T)

        def apply(i, w, v):  # X_i [w; v]
            if self.pos0[i]:
                return rot(i, w), rot(i, v)
            return rot(i, w), rot(i, v - cross(self.pos[i].expand(K, 3), w))

        def applyT(i, n, f):  # X_i^T [n; f]
            n, l = rotT(i, n), rotT(i, f)
            if self.pos0[i]:
                return n, l
            return n + cross(self.pos[i].expand(K, 3), l), l

        E = [torch.eye(3, dtype=DT) - s[:, i, None, None] * self.ax[i] + oc[:, i, None, None] * self.ax2[i] for i in range(nb)]
        vw, vv, cw, cv, IA, pn, pf = ([None] * nb for _ in range(7))
        for i in range(nb):  # pass 1
            sq = self.axes[i] * qd[:, i, None]
            if par[i] < 0:
                vw[i], vv[i] = sq, torch.zeros(K, 3, dtype=DT)
            else:
                w, v = apply(i, vw[par[i]], vv[par[i]])
                vw[i], vv[i] = w + sq, v
            cw[i], cv[i] = cross(vw[i], sq), cross(vv[i], sq)
            if I[i] is None:
                continue
            f = torch.cat([vw[i], vv[i]], 1) @ I[i].T
            fn, ff = f[:, :3], f[:, 3:]
            pn[i], pf[i] = cross(vw[i], fn) + cross(vv[i], ff), cross(vw[i], ff)
            IA[i] = I[i].expand(K, 6, 6)
        U, D, u = [None] * nb, [None] * nb, [None] * nb
        for i in reversed(range(nb)):  # pass 2
            U[i] = IA[i][:, :, :3] @ self.axes[i]
            D[i] = U[i][:, :3] @ self.axes[i]
            u[i] = tau[:, i] - (pn[i] @ self.axes[i] if pn[i] is not None else 0)
            if par[i] >= 0:
                UD = U[i] / D[i].unsqueeze(1)
                Ia = IA[i] - UD.unsqueeze(2) * U[i].unsqueeze(1)
                pa = mv(Ia, torch.cat([cw[i], cv[i]], 1)) + UD * u[i].unsqueeze(1)
                if pn[i] is not None:
                    pa = pa + torch.cat([pn[i], pf[i]], 1)
                z = torch.zeros_like(E[i])
                low = z if self.pos0[i] else -E[i] @ self.rx[i]
                Xi = torch.cat([torch.cat([E[i], z], 2), torch.cat([low, E[i]], 2)], 1)
                XI = torch.bmm(Xi.transpose(1, 2), torch.bmm(Ia, Xi))
                IA[par[i]] = XI if IA[par[i]] is None else IA[par[i]] + XI
                n, f = applyT(i, pa[:, :3], pa[:, 3:])
                if pn[par[i]] is None:
                    pn[par[i]], pf[par[i]] = n, f
                else:
                    pn[par[i]], pf[par[i]] = pn[par[i]] + n, pf[par[i]] + f
        aw, av, out = [None] * nb, [None] * nb, [None] * nb
        g = -self.gravity.expand(K, 3)
        for i in range(nb):  # pass 3
            if par[i] < 0:
                w, v = apply(i, torch.zeros(K, 3, dtype=DT), g)
            else:
                w, v = apply(i, aw[par[i]], av[par[i]])
            w, v = w + cw[i], v + cv[i]
            out[i] = (u[i] - (U[i][:, :3] * w).sum(1) - (U[i][:, 3:] * v).sum(1)) / D[i]
            aw[i], av[i] = w + self.axes[i] * out[i].unsqueeze(1), v
        return torch.stack(out, 1)

    def qdd_dense(self, theta, q, qd, act):
        """The ABA with dense 6x6 spatial matrices throughout (spatial_v2 style)."""
        K = q.shape[0]
        r, T = self.tensions(theta, q, qd, act)
        tau = (r * T[:, self.tm]) @ self.Jt - self.damping * qd + self.limits(q, qd)
        nb, par = self.nb, self.parent
        I = [torch.zeros(6, 6, dtype=DT)] * nb
        for k in range(nb - self.first_bone):
            I[self.first_bone + k] = self.inertia(theta[10 * k:10 * (k + 1)])
        s, co = torch.sin(q), torch.cos(q)
        X, v, c, IA, pA = [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb
        for i in range(nb):  # pass 1
            E = torch.eye(3, dtype=DT) - s[:, i, None, None] * self.ax[i] + (1 - co[:, i, None, None]) * self.ax2[i]
            z = torch.zeros_like(E)
            X[i] = torch.cat([torch.cat([E, z], 2), torch.cat([-E @ self.rx[i], E], 2)], 1)
            vJ = self.S[i] * qd[:, i, None]
            v[i] = vJ if par[i] < 0 else mv(X[i], v[par[i]]) + vJ
            c[i] = mv(crm(v[i]), vJ)
            IA[i] = I[i].expand(K, 6, 6)
            pA[i] = mv(crf(v[i]), v[i] @ I[i].T)
        U, D, u = [None] * nb, [None] * nb, [None] * nb
        for i in reversed(range(nb)):  # pass 2
            U[i] = IA[i] @ self.S[i]
            D[i] = U[i] @ self.S[i]
            u[i] = tau[:, i] - pA[i] @ self.S[i]
            if par[i] >= 0:
                Ia = IA[i] - U[i].unsqueeze(2) * U[i].unsqueeze(1) / D[i][:, None, None]
                pa = pA[i] + mv(Ia, c[i]) + U[i] * (u[i] / D[i]).unsqueeze(1)
                Xt = X[i].transpose(1, 2)
                IA[par[i]] = IA[par[i]] + torch.bmm(Xt, torch.bmm(Ia, X[i]))
                pA[par[i]] = pA[par[i]] + mv(Xt, pa)
        a0 = torch.cat([torch.zeros(3, dtype=DT), -self.gravity]).expand(K, 6)
        a, out = [None] * nb, [None] * nb
        for i in range(nb):  # pass 3
            ai = mv(X[i], a0 if par[i] < 0 else a[par[i]]) + c[i]
            out[i] = (u[i] - (U[i] * ai).sum(1)) / D[i]
            a[i] = ai + self.S[i] * out[i].unsqueeze(1)
        return torch.stack(out, 1)


def load_data(path, c, rows):
    with open(path) as f:
        header = f.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1, max_rows=rows)
    col = {h: j for j, h in enumerate(header)}
    x = torch.tensor(data[:, [col[n] for n in c["conditions"]]], dtype=DT)
    obs = torch.tensor(data[:, [col[n] for n in c["outputs"]]], dtype=DT)
    return x, obs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--constants", default="-", help="JSON of go run ./examples/arm/bench (- = stdin)")
    ap.add_argument("--data", default=None, help="data file (default: the constants' check.data)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--impl", choices=["blocks", "dense"], default="blocks",
                    help="blocks: 3-vector/3x3 kernels, dense 6x6 only for the congruence (default); dense: 6x6 everywhere")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    c = json.load(sys.stdin if args.constants == "-" else open(args.constants))
    ck = c["check"]
    x, obs = load_data(args.data or ck["data"], c, ck["rows"])
    K = x.shape[0]
    nd = len(c["bodies"])
    q, qd, act = x[:, :nd], x[:, nd:2 * nd], x[:, 2 * nd:]
    arm = Arm(c)
    arm.impl = args.impl
    N = obs.numel()
    var = ((obs - obs.mean()) ** 2).mean()

    def loss_of(theta):
        return ((arm.qdd(theta, q, qd, act) - obs) ** 2).sum() / (K * var)

    # The check: q_ddot at the truth against the data's qdd (8 significant
    # digits), loss and gradient against kinfer's at check.theta.
    with torch.no_grad():
        y = arm.qdd(torch.tensor(c["theta_truth"], dtype=DT), q, qd, act)
        qdd_err = ((y - obs).abs() / obs.abs().clamp(min=1)).max().item()
    th = torch.tensor(ck["theta"], dtype=DT, requires_grad=True)
    loss = loss_of(th)
    loss.backward()
    gk = torch.tensor(ck["grad"], dtype=DT)
    loss_err = abs(loss.item() - ck["loss"]) / abs(ck["loss"])
    grad_err = ((th.grad - gk).abs().max() / gk.abs().max()).item()

    learn = [i for i, n in enumerate(c["params"]) if "_I" not in n]  # M4: mass, COM, muscles
    idx = torch.tensor(learn)
    fixed = torch.tensor(ck["theta"], dtype=DT)
    p = fixed[idx].clone().requires_grad_(True)
    opt = torch.optim.Adam([p], lr=1e-3)

    def step():
        opt.zero_grad()
        l = loss_of(fixed.index_put((idx,), p))
        l.backward()
        opt.step()
        return l.item()

    for _ in range(args.warmup):
        step()
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(args.iterations):
        last = step()
    w1, c1 = time.perf_counter(), time.process_time()
    print(json.dumps({
        "impl": "torch " + torch.__version__ + " " + args.impl, "threads": args.threads, "rows": K, "learnable": len(learn),
        "iterations": args.iterations,
        "wall_ms_per_iteration": 1e3 * (w1 - w0) / args.iterations,
        "cpu_ms_per_iteration": 1e3 * (c1 - c0) / args.iterations,
        "last_loss": last,
        "check": {"qdd_vs_data_max_rel": qdd_err, "loss_rel_err": loss_err, "grad_max_err_rel_to_max": grad_err},
    }))
    if qdd_err > 1e-6 or loss_err > 1e-9 or grad_err > 1e-8:
        print("torch_arm.py: the twin does not reproduce kinfer's arm (see check)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
