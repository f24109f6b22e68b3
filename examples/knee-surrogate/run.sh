#!/bin/sh
# The surrogate-accelerated knee calibration, full size as run for
# README.md (issue 15): design → knee model → network ensemble → TMCMC on
# the surrogate, beside TMCMC on the knee model itself, and the comparison.
#
#   sh examples/knee-surrogate/run.sh out/knee-surrogate [path/to/kinfer]
#
# From the repository root. Every step is a kinfer command except the last
# (a Go program). Wall time on 2 cores: see README.md.
set -eu
OUT=${1:-out/knee-surrogate}
K=${2:-./kinfer}
EX=examples/knee-surrogate
S1=examples/knee-bpe/specimen1
mkdir -p "$OUT"
[ -x "$K" ] || go build -o "$K" ./cmd/kinfer
t0=$(date +%s)
# 1. Training and validation sets: 8 000 Sobol points over the prior box of
#    Table 2 (50 parameters) × 21 flexion angles (≈ 167 000 samples after the
#    0.5 % without equilibrium), and 100 Latin-hypercube points (2 079
#    samples; the paper validates on 2 000).
[ -f "$OUT/train/design.json" ] || "$K" design $EX/design.toml --design sobol --n 8000 -o "$OUT/train"
[ -f "$OUT/val/design.json" ] || "$K" design $EX/design.toml --design lhs --seed 2 --n 100 -o "$OUT/val"
t1=$(date +%s)
# 2. The surrogate: one network [51:256:256:128:64:13] on all 8 000 design
#    points, Adam from 1e-3 halved whenever the training loss has fallen by
#    less than 2 % in 3 epochs, until the rate would go below 1e-5 (46
#    epochs), no dropout (README.md: why this size and not the paper's).
#    One core (GOMAXPROCS=1); ≈ 40 minutes on the shared machine.
GOMAXPROCS=${GOMAXPROCS:-1} "$K" train "$OUT/train" --validation "$OUT/val" --hidden 256,256,128,64 --members 1 \
	--epochs 80 --dropout 0 --plateau-delta 0.02 --patience 3 --min-lr 1e-5 --seed 1 -o "$OUT/knee-nn.json"
t2=$(date +%s)
# 3. TMCMC on the knee model and on the surrogate (same study but [model]).
sed -e "s|file = \"knee-nn.json\"|file = \"$(cd "$OUT" && pwd)/knee-nn.json\"|" \
	-e "s|file = \"../knee-bpe/specimen1/kinematics.csv\"|file = \"$(pwd)/$S1/kinematics.csv\"|" \
	$EX/specimen1-surrogate.toml > "$OUT/specimen1-surrogate.toml"
"$K" run $EX/specimen1-knee.toml -o "$OUT/s1-knee"
tk=$(date +%s)
# The reference's own Monte Carlo error: the knee study with another seed.
"$K" run $EX/specimen1-knee.toml --seed 2 -o "$OUT/s1-knee-seed2"
t3=$(date +%s)
"$K" run "$OUT/specimen1-surrogate.toml" -o "$OUT/s1-nn"
t4=$(date +%s)
# 4. The comparison.
go run ./examples/knee-surrogate/compare -knee "$OUT/s1-knee" -surrogate "$OUT/s1-nn" -baseline "$OUT/s1-knee-seed2" -nn "$OUT/knee-nn.json" \
	-data $S1/kinematics.csv -truth $S1/truth.json -json "$OUT/compare.json"
echo "wall: design $((t1 - t0)) s, training $((t2 - t1)) s, TMCMC on the knee $((tk - t2)) s, TMCMC on the surrogate $((t4 - t3)) s"
