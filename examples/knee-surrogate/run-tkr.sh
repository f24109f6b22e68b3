#!/bin/sh
# A surrogate of an expensive model: the elastic-foundation contact of a
# knee replacement (tkrcontact, Lin et al. 2010), 1–20 ms per pose here,
# against a small network trained on it (issue 15). From the repository
# root:
#
#   sh examples/knee-surrogate/run-tkr.sh out/tkr-surrogate [path/to/kinfer]
#
# Prints the network's validation errors and the wall time of the same
# 2 000-point design evaluated on the model and on the surrogate.
set -eu
OUT=${1:-out/tkr-surrogate}
K=${2:-./kinfer}
EX=examples/knee-surrogate
mkdir -p "$OUT"
[ -x "$K" ] || go build -o "$K" ./cmd/kinfer
[ -f "$OUT/train/design.json" ] || "$K" design examples/tkr-contact/design.toml --design hammersley --n 4000 -o "$OUT/train"
[ -f "$OUT/val/design.json" ] || "$K" design examples/tkr-contact/design.toml --design lhs --seed 2 --n 2000 -o "$OUT/val"
[ -f "$OUT/tkr-nn.json" ] || "$K" train "$OUT/train" --validation "$OUT/val" --hidden 64,64 --members 2 --epochs 100 \
	--dropout 0 --seed 1 -o "$OUT/tkr-nn.json"
sed -e "s|file = \"tkr-nn.json\"|file = \"$(cd "$OUT" && pwd)/tkr-nn.json\"|" \
	-e "s|file = \"../tkr-contact/zero_pose.csv\"|file = \"$(pwd)/examples/tkr-contact/zero_pose.csv\"|" \
	$EX/tkr-surrogate-design.toml > "$OUT/tkr-surrogate-design.toml"
# The same 2 000 LHS poses on the model and on the surrogate, back to back.
rm -rf "$OUT/val-model" "$OUT/val-nn"
"$K" design examples/tkr-contact/design.toml --design lhs --seed 2 --n 2000 -o "$OUT/val-model"
"$K" design "$OUT/tkr-surrogate-design.toml" --design lhs --seed 2 --n 2000 -o "$OUT/val-nn"
