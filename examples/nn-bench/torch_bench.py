#!/usr/bin/python3
"""PyTorch reference for kinfer's neural-network surrogate (builtin/surrogate/nn).

The network of Bartsoen et al. (2023), Sec. 2.3: [51:256:512:1024:512:256:128:64:13],
softplus hidden layers, linear output, Huber loss (delta 0.02), Adam lr 1e-3, batch 32,
dropout 0.05 and L2 1e-6 on the kernels (as kinfer's DefaultConfig).

Measures the training time of one epoch over N samples and the inference throughput
at batch 1, 12 and 10 000, in float32 (torch's default) and float64 (kinfer's precision).

    /usr/bin/python3 examples/nn-bench/torch_bench.py [--samples 50000] [--dtype float32|float64]
"""
import argparse
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--samples", type=int, default=50000)
p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
p.add_argument("--threads", type=int, default=2)
a = p.parse_args()
torch.set_num_threads(a.threads)
dt = getattr(torch, a.dtype)
torch.manual_seed(1)

sizes = [51, 256, 512, 1024, 512, 256, 128, 64, 13]
layers = []
for i in range(len(sizes) - 1):
    layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
    if i < len(sizes) - 2:
        layers.append(torch.nn.Softplus())
        layers.append(torch.nn.Dropout(0.05))
net = torch.nn.Sequential(*layers).to(dt)

X = torch.rand(a.samples, 51, dtype=dt)
Y = torch.randn(a.samples, 13, dtype=dt)
opt = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-7)
loss_fn = torch.nn.HuberLoss(delta=0.02)
kernels = [m.weight for m in net if isinstance(m, torch.nn.Linear)]

net.train()
t0 = time.perf_counter()
perm = torch.randperm(a.samples)
for s in range(0, a.samples, 32):
    idx = perm[s:s + 32]
    opt.zero_grad()
    loss = loss_fn(net(X[idx]), Y[idx]) + 1e-6 * sum((w * w).sum() for w in kernels)
    loss.backward()
    opt.step()
t_epoch = time.perf_counter() - t0
print(f"torch {torch.__version__} {a.dtype} threads={a.threads}: "
      f"training epoch of {a.samples} samples: {t_epoch:.2f} s "
      f"({1e6 * t_epoch / a.samples:.0f} µs/sample, {t_epoch * 50000 / a.samples:.1f} s per 50 000)")

net.eval()
with torch.no_grad():
    for batch in (1, 12, 10000):
        x = torch.rand(batch, 51, dtype=dt)
        net(x)
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 3.0:
            net(x)
            n += batch
        print(f"inference batch {batch}: {n / (time.perf_counter() - t0):.0f} samples/s")
