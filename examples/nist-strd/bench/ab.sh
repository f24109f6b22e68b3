#!/bin/sh
# Before/after timing of levmar on the 54 NIST StRD runs: builds
# BenchmarkNIST54's test binary at git revision REV (default: main) and at
# the working tree, then runs them alternately ROUNDS times (default 7),
# one whole-set timing each (20 ops), and prints for each side the minimum
# and median ns/op, the allocations, and, with GOMAXPROCS=1, the CPU time
# per op from the process's rusage (which a loaded machine disturbs less
# than wall time). From the repository root:
#   sh examples/nist-strd/bench/ab.sh [REV] [ROUNDS]
# docs/PERFORMANCE.md ("levmar ≥ 30 % faster") has its results.
set -e
case "$1" in -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
rev=${1:-main}
rounds=${2:-7}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/old" "$rev"
(cd "$tmp/old" && go test -c -o "$tmp/old.test" ./builtin/methods/levmar)
go test -c -o "$tmp/new.test" ./builtin/methods/levmar
cd builtin/methods/levmar
cpu() { # CPU seconds of BIN at GOMAXPROCS=1 for N ops
	/usr/bin/time -f "%U %S" env GOMAXPROCS=1 "$1" -test.run '^$' -test.bench 'NIST54$' -test.benchtime "$2" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
i=1
while [ "$i" -le "$rounds" ]; do
	for side in old new; do
		"$tmp/$side.test" -test.run '^$' -test.bench 'NIST54$' -test.benchtime 20x -test.benchmem |
			awk -v s=$side '/^Benchmark/ {print s, "wall", $3, $7, $9}' >>"$tmp/out"
		a=$(cpu "$tmp/$side.test" 1x)
		b=$(cpu "$tmp/$side.test" 41x)
		echo "$side cpu $a $b" | awk '{printf "%s %s %.0f\n", $1, $2, ($4 - $3) / 40 * 1e9}' >>"$tmp/out"
	done
	i=$((i + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for side in old new; do
	for kind in wall cpu; do
		grep "^$side $kind " "$tmp/out" | sort -k3 -g | awk -v s=$side -v k=$kind '
			{v[NR] = $3; if (NF > 3) {b = $4; a = $5}}
			END {printf "%s (%s) %-4s ms/op: min %.2f  median %.2f  max %.2f  (%d rounds)%s\n",
				s, (s == "old" ? "'"$rev"'" : "working tree"), k, v[1] / 1e6, v[int((NR + 1) / 2)] / 1e6, v[NR] / 1e6, NR,
				(k == "wall" ? sprintf("  %s B/op, %s allocs/op", b, a) : "")}'
	done
done
