#!/bin/sh
# Side-by-side timing of one Adam iteration on the arm's 10 000 training
# rows (the M4 study of examples/arm/experiment: 36 free parameters, exact
# gradient), kinfer against its PyTorch twin torch_arm.py, on 2 cores and
# on 1 core, interleaved ROUNDS times (docs/PERFORMANCE.md, "Adam on the
# arm"). From the repository root:
#
#	sh examples/arm/bench/run.sh [OUT] [ROUNDS] [ITERATIONS]
#
#   kinfer, 2 cores:  taskset -c 0,1  kinfer run M4.toml --workers 2
#   torch, 2 threads: taskset -c 0,1  torch_arm.py --threads 2 (--impl blocks, then dense)
#   kinfer, 1 core:   taskset -c 1    GOMAXPROCS=1 kinfer run M4.toml --workers 1
#   torch, 1 thread:  taskset -c 1    torch_arm.py --threads 1 (--impl blocks, then dense)
#
# With BASE set to another kinfer binary (e.g. one built from an earlier
# commit), it runs too, on both settings, labelled kinfer-base.
#
# kinfer's time per iteration is summary.json's wall_seconds / evaluations
# (every evaluation is one Adam iteration: the loss and its gradient), its
# CPU time the process's user + system time (/usr/bin/time, study loading
# included) / evaluations; torch_arm.py reports both itself, over
# ITERATIONS/5 timed iterations after 3 warm-up ones. The load average
# before each round goes to OUT/load.txt; OUT/results.jsonl has one line
# per measurement and summarize.py prints the table.
set -eu
OUT=${1:-out/arm-bench}
ROUNDS=${2:-3}
IT=${3:-100}
PY=/usr/bin/python3 # Debian's python3-torch
HERE=examples/arm/bench
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
go build -o "$OUT/kinfer" ./cmd/kinfer
go run ./examples/arm/experiment -runs 1 -iterations "$IT" -rows 10000 -out "$OUT/study" >/dev/null
go run ./$HERE > "$OUT/arm.json"
: > "$OUT/results.jsonl"
: > "$OUT/load.txt"

kinfer() { # label cpus workers gomaxprocs [binary name]
	bin=${5:-$OUT/kinfer}
	name=${6:-kinfer}
	d="$OUT/$name-$1-$r"
	rm -rf "$d"
	GOMAXPROCS=$4 /usr/bin/time -f '%U %S' -o "$OUT/time.txt" \
		taskset -c "$2" "$bin" run "$OUT/study/run01/M4.toml" -o "$d" --workers "$3" >/dev/null
	$PY - "$d/summary.json" "$OUT/time.txt" "$1" "$r" "$name" >> "$OUT/results.jsonl" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
u, sy = map(float, open(sys.argv[2]).read().split())
n = s["evaluations"]
print(json.dumps({"impl": sys.argv[5], "setting": sys.argv[3], "round": int(sys.argv[4]), "evaluations": n,
                  "gradient_mode": s["gradient_mode"], "workers": s["workers"],
                  "wall_ms_per_iteration": 1e3 * s["wall_seconds"] / n, "cpu_ms_per_iteration": 1e3 * (u + sy) / n}))
PYEOF
}

torch() { # label cpus threads
	for impl in blocks dense; do
		taskset -c "$2" $PY $HERE/torch_arm.py --constants "$OUT/arm.json" --threads "$3" --iterations $((IT / 5)) --impl $impl |
			$PY -c "import json,sys; d=json.load(sys.stdin); d.update(setting='$1', round=$r); print(json.dumps(d))" >> "$OUT/results.jsonl"
	done
}

for r in $(seq "$ROUNDS"); do
	echo "round $r: $(uptime)" | tee -a "$OUT/load.txt"
	kinfer 2cores 0,1 2 2
	[ -z "${BASE:-}" ] || kinfer 2cores 0,1 2 2 "$BASE" kinfer-base
	torch 2cores 0,1 2
	kinfer 1core 1 1 1
	[ -z "${BASE:-}" ] || kinfer 1core 1 1 1 "$BASE" kinfer-base
	torch 1core 1 1
done
echo "after: $(uptime)" | tee -a "$OUT/load.txt"
$PY $HERE/summarize.py "$OUT/results.jsonl"
