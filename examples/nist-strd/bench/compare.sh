#!/bin/sh
# The 54 NIST StRD runs: kinfer's levmar and gaussnewton against
# scipy.optimize.least_squares, side by side in one session, in ROUNDS
# interleaved rounds (docs/PERFORMANCE.md, "Least squares"). Needs Go and
# Debian's python3-scipy (apt-get install -y python3-scipy). From the
# repository root:
#   sh examples/nist-strd/bench/compare.sh [ROUNDS]
# Each line is one timing of the whole set of 54 fits (Go: ns/op of
# BenchmarkNIST54, the best of 3; scipy: the best of 3 repeats per
# configuration), and the runs solved (every certified parameter to
# LRE >= 6).
set -e
rounds=${1:-3}
go test -c -o /tmp/levmar.test ./builtin/methods/levmar
go test -c -o /tmp/gaussnewton.test ./builtin/methods/gaussnewton
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
i=1
while [ "$i" -le "$rounds" ]; do
	echo "== round $i"
	(cd builtin/methods/levmar && /tmp/levmar.test -test.run '^$' -test.bench 'NIST54$' -test.benchtime 20x -test.count 3) | grep '^Benchmark' | sed 's/^/levmar      /'
	(cd builtin/methods/gaussnewton && /tmp/gaussnewton.test -test.run '^$' -test.bench 'NIST54$' -test.benchtime 20x -test.count 3) | grep '^Benchmark' | sed 's/^/gaussnewton /'
	/usr/bin/python3 examples/nist-strd/bench/nist_scipy.py --repeat 3
	i=$((i + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
