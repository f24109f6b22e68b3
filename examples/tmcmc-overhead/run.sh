#!/bin/sh
# TMCMC's cost outside the target beside emcee's, in one run
# (docs/PERFORMANCE.md, "TMCMC overhead"). From the repository root:
#
#	sh examples/tmcmc-overhead/run.sh [OUT] [ROUNDS]
#
# Each round runs kinfer's TMCMC (main.go: 1000 chains, 50 sub-steps, the
# study defaults) and emcee (emcee_overhead.py, Debian's python3-emcee,
# 1000 walkers, vectorised and not) on the same cheap Gaussian target at
# d = 10 and 50, all pinned to one core, rounds interleaved.
# OUT/results.jsonl has one line per measurement; the load average before
# each round goes to OUT/load.txt.
set -eu
OUT=${1:-out/tmcmc-overhead}
ROUNDS=${2:-3}
HERE=examples/tmcmc-overhead
mkdir -p "$OUT"
go build -o "$OUT/tmcmc-overhead" ./$HERE
: > "$OUT/results.jsonl"
: > "$OUT/load.txt"
for r in $(seq "$ROUNDS"); do
	cat /proc/loadavg >> "$OUT/load.txt"
	taskset -c 1 "$OUT/tmcmc-overhead" -d 10,50 >> "$OUT/results.jsonl"
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 taskset -c 1 /usr/bin/python3 $HERE/emcee_overhead.py -d 10,50 >> "$OUT/results.jsonl"
done
/usr/bin/python3 - "$OUT/results.jsonl" <<'PY'
import json, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    rows[(r["impl"], r["d"])].append(r)
print("| implementation | d | overhead µs/particle-step, CPU (median of rounds) | wall |")
print("|---|---|---|---|")
for (impl, d), rs in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    cpu = sorted(x["overhead_cpu_us_per_particle_step"] for x in rs)[len(rs) // 2]
    wall = sorted(x["overhead_us_per_particle_step"] for x in rs)[len(rs) // 2]
    print(f"| {impl} | {d} | {cpu:.3f} | {wall:.3f} |")
PY
