#!/bin/sh
# The 54 NIST StRD runs, kinfer's levmar against scipy.optimize.least_squares,
# in one session (docs/PERFORMANCE.md, "Least squares"). Needs Go and
# Debian's python3-scipy (apt-get install -y python3-scipy). Run from the
# repository root:  sh examples/nist-strd/bench/compare.sh
set -e
echo "== kinfer levmar (defaults, analytic Jacobian; ns/op is the whole set of 54 fits)"
go test ./builtin/methods/levmar -run '^$' -bench 'NIST54$' -benchtime 20x -count 5 | grep -E '^Benchmark|^cpu'
echo "== kinfer gaussnewton (defaults)"
go test ./builtin/methods/gaussnewton -run '^$' -bench 'NIST54$' -benchtime 20x -count 5 | grep -E '^Benchmark'
echo "== scipy.optimize.least_squares (analytic Jacobian; best of 5)"
/usr/bin/python3 examples/nist-strd/bench/nist_scipy.py --repeat 5
