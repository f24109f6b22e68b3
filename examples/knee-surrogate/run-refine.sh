#!/bin/sh
# The refined knee surrogate (README.md, "A refinement around the first
# posterior"): a [51:512:512:256:128:13] network on 16 000 Sobol points,
# TMCMC on it, a second design of 4 000 Sobol points in the box of that
# posterior, a network of the same size on both designs, and TMCMC on it
# with two seeds beside TMCMC on the knee model itself. From the
# repository root:
#
#   sh examples/knee-surrogate/run-refine.sh out/knee-refine [path/to/kinfer]
#
# About 2 hours on 2 idle cores (two trainings of ≈ 45 minutes each).
set -eu
OUT=${1:-out/knee-refine}
K=${2:-./kinfer}
EX=examples/knee-surrogate
S1=examples/knee-bpe/specimen1
mkdir -p "$OUT"
[ -x "$K" ] || go build -o "$K" ./cmd/kinfer
ABS=$(cd "$OUT" && pwd)
study() { # study FILE NETWORK: the surrogate study on NETWORK, with absolute paths
	sed -e "s|file = \"knee-nn.json\"|file = \"$2\"|" \
		-e "s|file = \"../knee-bpe/specimen1/kinematics.csv\"|file = \"$(pwd)/$S1/kinematics.csv\"|" \
		$EX/specimen1-surrogate.toml > "$1"
}
train() { # train NETWORK DESIGN_DIRS...: the recipe of README.md
	o=$1
	shift
	GOMAXPROCS=${GOMAXPROCS:-2} "$K" train "$@" --validation "$OUT/val" --hidden 512,512,256,128 --members 1 \
		--epochs 80 --dropout 0 --plateau-delta 0.02 --patience 3 --min-lr 1e-5 --seed 1 -o "$o"
}
# 1. The first design (16 000 Sobol points × 21 angles) and the validation set.
[ -f "$OUT/train16/design.json" ] || "$K" design $EX/design.toml --design sobol --n 16000 -o "$OUT/train16"
[ -f "$OUT/val/design.json" ] || "$K" design $EX/design.toml --design lhs --seed 2 --n 100 -o "$OUT/val"
# 2. The first network and its posterior.
[ -f "$OUT/first.json" ] || train "$OUT/first.json" "$OUT/train16"
study "$OUT/s1-first.toml" "$ABS/first.json"
[ -f "$OUT/s1-first/summary.json" ] || "$K" run "$OUT/s1-first.toml" -o "$OUT/s1-first" --workers 1
# 3. The refinement: 4 000 Sobol points in the box of that posterior
#    (0.5–99.5 % quantiles widened by 10 % of their width, within Table 2).
go run ./$EX/refinebox -study $EX/design.toml -run "$OUT/s1-first" -o "$OUT/design-refine.toml"
[ -f "$OUT/refine/design.json" ] || "$K" design "$OUT/design-refine.toml" --design sobol --n 4000 -o "$OUT/refine"
# 4. The refined network on both designs, TMCMC on it with two seeds.
[ -f "$OUT/refined.json" ] || train "$OUT/refined.json" "$OUT/train16" "$OUT/refine"
study "$OUT/s1-refined.toml" "$ABS/refined.json"
"$K" run "$OUT/s1-refined.toml" -o "$OUT/s1-refined" --workers 1
"$K" run "$OUT/s1-refined.toml" --seed 2 -o "$OUT/s1-refined-seed2" --workers 1
# 5. The knee model itself (two seeds: the reference's Monte Carlo error) and the comparisons.
[ -f "$OUT/s1-knee/summary.json" ] || "$K" run $EX/specimen1-knee.toml -o "$OUT/s1-knee"
[ -f "$OUT/s1-knee-seed2/summary.json" ] || "$K" run $EX/specimen1-knee.toml --seed 2 -o "$OUT/s1-knee-seed2"
for s in s1-refined s1-refined-seed2; do
	go run ./$EX/compare -knee "$OUT/s1-knee" -surrogate "$OUT/$s" -baseline "$OUT/s1-knee-seed2" -nn "$OUT/refined.json" \
		-data $S1/kinematics.csv -truth $S1/truth.json -json "$OUT/compare-$s.json" > "$OUT/compare-$s.txt"
	grep "agree" "$OUT/compare-$s.txt" | tail -1
done
