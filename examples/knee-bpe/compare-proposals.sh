#!/usr/bin/env bash
# TMCMC on the knee specimens before and after issue 11's sampler changes,
# in one run (docs/PERFORMANCE.md, "Knee: TMCMC proposals in the support"):
#
#   paper:    variant bartsoen, proposal = "reject", adapt = "stage" — the
#             paper's algorithm, kinfer's TMCMC before the change;
#   default:  the study as committed (proposal = "transform", adapt =
#             "substep", the defaults now).
#
# MODES (default "paper default") may add default-sK: the default with K
# sub-steps instead of the study's 25 (about the paper's evaluations when
# the paper's mode rejects most proposals unevaluated).
#
# For each specimen and setting: kinfer run (CI size, 1000 chains,
# 25 sub-steps), kinfer analyze --truth, and one JSON line with the
# fraction of proposals inside the prior's support, stages, evaluations,
# wall time, log Z ± SE, truths inside the 5–95 % band and each
# parameter's posterior mean and sd (to compare the posteriors).
#
#   examples/knee-bpe/compare-proposals.sh [OUT_DIR] [SPECIMENS]
#
# OUT_DIR defaults to out/knee-proposals, SPECIMENS to "1 2 3". Needs jq.
# KINFER=path uses an existing binary instead of building one.
set -euo pipefail
out=${1:-out/knee-proposals}
specimens=${2:-1 2 3}
modes=${MODES:-paper default}
mkdir -p "$out"
kinfer=${KINFER:-}
if [ -z "$kinfer" ]; then
	kinfer="$out/kinfer"
	go build -o "$kinfer" ./cmd/kinfer
fi
ex=examples/knee-bpe
: >"$out/results.jsonl"
for n in $specimens; do
	for mode in $modes; do
		sdir="$out/study-$mode-s$n"
		mkdir -p "$sdir"
		cp "$ex/specimen$n/kinematics.csv" "$sdir/"
		cp "$ex/specimen$n/study.toml" "$sdir/study.toml"
		case "$mode" in
		paper) # [method] is the study's last table
			printf 'proposal = "reject"\nadapt = "stage"\n' >>"$sdir/study.toml" ;;
		default-s*)
			sed -i "s/^substeps = .*/substeps = ${mode#default-s}/" "$sdir/study.toml" ;;
		esac
		dir="$out/$mode-s$n"
		"$kinfer" run "$sdir/study.toml" -o "$dir" >"$out/run-$mode-s$n.txt"
		"$kinfer" analyze "$dir" --truth "$ex/specimen$n/truth.json" >"$out/analyze-$mode-s$n.txt"
		jq -c --arg mode "$mode" --argjson n "$n" --slurpfile a "$dir/analysis.json" '{
			specimen: $n, mode: $mode,
			in_support: .method_report.in_support_fraction,
			stages: (.method_report.stages | length),
			evaluations, wall_seconds,
			log_z: .method_report.log_evidence, log_z_se: .method_report.log_evidence_se,
			acceptance: .method_report.acceptance_rate,
			truth_inside: $a[0].truth.inside, truth_checked: $a[0].truth.checked, samples_below_truth: $a[0].truth.at_truth.samples_below,
			params: [.params[] | {name, mean, sd}]
		}' "$dir/summary.json" >>"$out/results.jsonl"
	done
done
echo "results: $out/results.jsonl"
