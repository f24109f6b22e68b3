#!/bin/sh
# Side by side, in one run: kinfer's network (builtin/surrogate/nn: float64,
# builtin/internal/dgemm kernels; Frozen = weights packed once, float64 or
# rounded to float32; "trained": float32-valued weights as kinfer train
# leaves them, packed in float32 losslessly) and PyTorch at Bartsoen et al.'s (2023) architecture.
# From the repository root:
#   sh examples/nn-bench/run.sh
set -e
date -u
uptime
go test -run XXX -bench 'TrainEpochBartsoen|JacobianBartsoen|PredictBartsoen/members=1/batch=10000$|PredictFrozenBartsoen/(float|trained)/batch=10000$' -benchtime 3x ./builtin/surrogate/nn/
go test -run XXX -bench 'PredictBartsoen/members=1/batch=1$|PredictBartsoen/members=1/batch=12$|PredictFrozenBartsoen/(float|trained)/batch=(1|12)$' -benchtime 2s ./builtin/surrogate/nn/
uptime
/usr/bin/python3 examples/nn-bench/torch_bench.py --samples 50000 --dtype float32
/usr/bin/python3 examples/nn-bench/torch_bench.py --samples 10000 --dtype float64
date -u
uptime
