#!/bin/sh
# The surrogate-accelerated knee calibration, full size, as the committed
# knee-nn.json was made (issue 15; README.md): designs → knee model → a
# first network and its posterior → a refinement design in that
# posterior's box → the final four-network ensemble, one member per
# process → its accuracy on two held-out designs → TMCMC on it with two
# seeds beside TMCMC on the knee model itself, and the comparisons. From
# the repository root:
#
#   sh examples/knee-surrogate/run.sh out/knee-surrogate [path/to/kinfer]
#
# About 5 hours on 2 idle cores (the first network ≈ 45 minutes, the four
# members ≈ 2 × 1.7 hours, two at a time side by side). Steps already done are skipped, so an
# interrupted run continues where it stopped (a training in progress is
# started again).
set -eu
OUT=${1:-out/knee-surrogate}
K=${2:-./kinfer}
EX=examples/knee-surrogate
S1=examples/knee-bpe/specimen1
mkdir -p "$OUT"
[ -x "$K" ] || go build -o "$K" ./cmd/kinfer
ABS=$(cd "$OUT" && pwd)
t0=$(date +%s)
study() { # study FILE NETWORK: the surrogate study on NETWORK, with absolute paths
	sed -e "s|file = \"knee-nn.json\"|file = \"$2\"|" \
		-e "s|file = \"../knee-bpe/specimen1/kinematics.csv\"|file = \"$(pwd)/$S1/kinematics.csv\"|" \
		$EX/specimen1-surrogate.toml > "$1"
}
# The training recipe (README.md): [51:512:512:256:128:13], Adam from 1e-3
# halved whenever the training loss has fallen by less than 2 % in 3
# epochs, until the rate would go below 1e-5; no dropout, L2 1e-6.
RECIPE="--validation $OUT/val --hidden 512,512,256,128 --epochs 80 --dropout 0 --plateau-delta 0.02 --patience 3 --min-lr 1e-5 --seed 1"
# 1. Designs of the knee over the prior box of Table 2 × the squat's 21
#    flexion angles: 16 000 Sobol points (the first network), 32 000 (the
#    final one; its first 16 000 are the same points), and the validation
#    set, 100 Latin-hypercube points (2 079 samples; the paper: 2 000).
[ -f "$OUT/train16/design.json" ] || "$K" design $EX/design.toml --design sobol --n 16000 -o "$OUT/train16"
[ -f "$OUT/train32/design.json" ] || "$K" design $EX/design.toml --design sobol --n 32000 -o "$OUT/train32"
[ -f "$OUT/val/design.json" ] || "$K" design $EX/design.toml --design lhs --seed 2 --n 100 -o "$OUT/val"
#    Two held-out designs that nothing is trained or weighted on: one of
#    the validation set's size and one ten times larger.
[ -f "$OUT/test3/design.json" ] || "$K" design $EX/design.toml --design lhs --seed 3 --n 100 -o "$OUT/test3"
[ -f "$OUT/test1000/design.json" ] || "$K" design $EX/design.toml --design lhs --seed 4 --n 1000 -o "$OUT/test1000"
t1=$(date +%s)
# 2. The first network (16 000 points) and TMCMC on it.
# shellcheck disable=SC2086
[ -f "$OUT/first.json" ] || GOMAXPROCS=${GOMAXPROCS:-2} "$K" train "$OUT/train16" $RECIPE --members 1 -o "$OUT/first.json"
study "$OUT/s1-first.toml" "$ABS/first.json"
[ -f "$OUT/s1-first/summary.json" ] || "$K" run "$OUT/s1-first.toml" -o "$OUT/s1-first" --workers 1
t2=$(date +%s)
# 3. The refinement: 4 000 Sobol points in the box of that posterior
#    (0.5–99.5 % quantiles widened by 10 % of their width, within Table 2).
go run ./$EX/refinebox -study $EX/design.toml -run "$OUT/s1-first" -o "$OUT/design-refine.toml"
[ -f "$OUT/refine/design.json" ] || "$K" design "$OUT/design-refine.toml" --design sobol --n 4000 -o "$OUT/refine"
t3=$(date +%s)
# 4. The final ensemble: four members on 32 000 + 4 000 points, one
#    process each (kinfer train --member), two at a time, joined by
#    kinfer combine into the file kinfer train --members 4 would write;
#    then its 90 % AE on the two held-out designs.
for pair in "1 2" "3 4"; do
	for m in $pair; do
		# shellcheck disable=SC2086
		[ -f "$OUT/member$m.json" ] || GOMAXPROCS=1 "$K" train "$OUT/train32" "$OUT/refine" $RECIPE --members 4 --member $m -o "$OUT/member$m.json" > "$OUT/member$m.log" &
	done
	wait
done
"$K" combine "$OUT/member1.json" "$OUT/member2.json" "$OUT/member3.json" "$OUT/member4.json" --validation "$OUT/val" -o "$OUT/knee-nn.json"
for d in test3 test1000; do
	go run ./$EX/heldout -design "$OUT/$d" "$OUT/knee-nn.json"
done
t4=$(date +%s)
# 5. TMCMC on the ensemble with two seeds, on the knee model with two seeds
#    (the reference's own Monte Carlo error), and the comparisons.
study "$OUT/specimen1-surrogate.toml" "$ABS/knee-nn.json"
"$K" run "$OUT/specimen1-surrogate.toml" -o "$OUT/s1-nn"
t5=$(date +%s)
"$K" run "$OUT/specimen1-surrogate.toml" --seed 2 -o "$OUT/s1-nn-seed2"
[ -f "$OUT/s1-knee/summary.json" ] || "$K" run $EX/specimen1-knee.toml -o "$OUT/s1-knee"
[ -f "$OUT/s1-knee-seed2/summary.json" ] || "$K" run $EX/specimen1-knee.toml --seed 2 -o "$OUT/s1-knee-seed2"
for s in s1-nn s1-nn-seed2; do
	go run ./$EX/compare -knee "$OUT/s1-knee" -surrogate "$OUT/$s" -baseline "$OUT/s1-knee-seed2" -nn "$OUT/knee-nn.json" \
		-data $S1/kinematics.csv -truth $S1/truth.json -json "$OUT/compare-$s.json" > "$OUT/compare-$s.txt"
	grep "agree" "$OUT/compare-$s.txt" | tail -1
done
echo "wall: designs $((t1 - t0)) s, first network and its TMCMC $((t2 - t1)) s, refinement design $((t3 - t2)) s, final ensemble $((t4 - t3)) s, TMCMC on it $((t5 - t4)) s"
