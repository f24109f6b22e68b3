#!/usr/bin/env bash
# Re-measures the CI-size table of examples/knee-bpe/README.md: for each
# specimen, `kinfer run specimenN/study.toml`, then
# `kinfer analyze DIR --predictive 300 --truth specimenN/truth.json`, and
# prints one Markdown row per specimen from summary.json and analysis.json:
# wall time, evaluations (failed), log Z ± SE, truths inside the 5–95 %
# band, the share of samples whose log target is below the truth's (near
# 100 %: the sampler missed the truth's region; docs/OUTPUTS.md), and the
# posterior-predictive MAE per kinematic output.
#
#   examples/knee-bpe/run-table.sh [OUT_DIR]     # from the repository root
#
# OUT_DIR (default out/knee-table) receives s1, s2, s3 and the analyses'
# stdout (analyze-sN.txt). Needs go and jq; 3–5 min per specimen on 2
# cores (README.md's first table; 45 s was the paper's algorithm's). KINFER=path uses an existing binary instead of building one;
# REUSE=1 analyses OUT_DIR/sN without re-running it when its summary.json
# exists (a run is deterministic: the same study and seed give the same
# samples).
set -euo pipefail
out=${1:-out/knee-table}
mkdir -p "$out"
kinfer=${KINFER:-}
if [ -z "$kinfer" ]; then
	kinfer="$out/kinfer"
	go build -o "$kinfer" ./cmd/kinfer
fi
ex=examples/knee-bpe
rows=()
for n in 1 2 3; do
	dir="$out/s$n"
	if [ -z "${REUSE:-}" ] || [ ! -f "$dir/summary.json" ]; then
		"$kinfer" run "$ex/specimen$n/study.toml" -o "$dir" >"$out/run-s$n.txt"
	fi
	"$kinfer" analyze "$dir" --predictive 300 --truth "$ex/specimen$n/truth.json" >"$out/analyze-s$n.txt"
	# wall evals failed logZ se inside checked below mae(ML AP PD VV IE)
	line=$(jq -r --slurpfile a "$dir/analysis.json" '
		($a[0].predictive | map({(.output): .mae}) | add) as $m
		| [.wall_seconds, .evaluations, .failed_evaluations,
		   .method_report.log_evidence, .method_report.log_evidence_se,
		   $a[0].truth.inside, $a[0].truth.checked, $a[0].truth.at_truth.samples_below,
		   $m.ML_mm, $m.AP_mm, $m.PD_mm, $m.VV_deg, $m.IE_deg] | @tsv' "$dir/summary.json")
	rows+=("$(awk -F'\t' -v n="$n" '
		function group(x,   s) { s = sprintf("%d", x); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($| )/, " &", s); return s }
		function minus(s) { sub(/^-/, "−", s); return s }
		{ printf "| %d | %.0f s | %s (%d) | %s ± %.2f | %d / %d | %.1f %% | %.2f / %.2f / %.2f | %.2f / %.2f |\n",
			n, $1, group($2), $3, minus(sprintf("%.2f", $4)), $5, $6, $7, 100*$8, $9, $10, $11, $12, $13 }' <<<"$line")")
done
echo "$(date -u +%F), $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo
echo "| specimen | wall | evaluations (failed) | log Z ± SE | truth in 5–95 % | samples below the truth's log target | MAE ML / AP / PD mm | MAE VV / IE ° |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
