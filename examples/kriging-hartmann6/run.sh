#!/bin/sh
# DACE Kriging (builtin/surrogate/kriging) beside sklearn's
# GaussianProcessRegressor on Hartmann-6, n = 1000 Halton sites in 6-D,
# RMSE on 2000 uniform test points, in one run (docs/PERFORMANCE.md,
# "Kriging on Hartmann-6"). From the repository root:
#
#	sh examples/kriging-hartmann6/run.sh [OUT] [ROUNDS]
#
# Each round fits kinfer's Kriging from four starts θ₀ (the default, and
# 0.001, 1, 100 for every coordinate) and sklearn's GPR from three initial
# length scales (1 = its default, 0.3, 0.01, 10), interleaved. Needs Debian's
# python3-sklearn. OUT/results.jsonl has one line per fit, OUT/load.txt the
# load average before each round.
set -eu
OUT=${1:-out/kriging-hartmann6}
ROUNDS=${2:-1}
HERE=examples/kriging-hartmann6
mkdir -p "$OUT"
go build -o "$OUT/kriging-hartmann6" ./$HERE
: > "$OUT/results.jsonl"
: > "$OUT/load.txt"
for r in $(seq "$ROUNDS"); do
	cat /proc/loadavg >> "$OUT/load.txt"
	"$OUT/kriging-hartmann6" -out "$OUT" -starts default,0.001,1,100 >> "$OUT/results.jsonl"
	/usr/bin/python3 $HERE/sklearn_hartmann6.py "$OUT" --starts 1,0.3,0.01,10 >> "$OUT/results.jsonl"
done
cat /proc/loadavg >> "$OUT/load.txt"
/usr/bin/python3 - "$OUT/results.jsonl" <<'PY'
import json, sys
print("| implementation | start | fit time (s) | test RMSE |")
print("|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    start = r.get("start", r.get("start_length_scale"))
    print(f"| {r['impl']} | {start} | {r['fit_seconds']:.2f} | {r['rmse']:.4f} |")
PY
