#!/usr/bin/env bash
# Measures how much longer `terraform apply` takes than the simulated transitions on its
# critical path, and how many HTTP requests each transition costs: 1, 20 and 200 machines at
# -parallelism=200 and at Terraform's default, beside the same graph built from terraform_data
# (Terraform's own cost), and examples/demo. The measurement is benchcompare's apply mode
# (scripts/bench-compare.sh apply); this keeps the old entry point.
# Usage: scripts/measure-apply.sh [time-scale] [benchcompare flags] (time scale default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
ARGS=()
if [[ ${1:-} =~ ^[0-9.]+$ ]]; then
  ARGS=(-apply-time-scale "$1")
  shift
fi
exec bash ./scripts/bench-compare.sh apply "${ARGS[@]}" "$@"
