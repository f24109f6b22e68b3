#!/bin/sh
# Side by side, in one run: kinfer's float64 network (gonum) and PyTorch at
# Bartsoen et al.'s (2023) architecture. From the repository root:
#   sh examples/nn-bench/run.sh
set -e
date -u
uptime
go test -run XXX -bench 'TrainEpochBartsoen|PredictBartsoen/members=1|JacobianBartsoen' -benchtime 3x ./builtin/surrogate/nn/
/usr/bin/python3 examples/nn-bench/torch_bench.py --samples 50000 --dtype float32
/usr/bin/python3 examples/nn-bench/torch_bench.py --samples 10000 --dtype float64
