#!/usr/bin/env bash
# Measures how much longer `terraform apply` takes than the simulated transitions on its
# critical path, and how many HTTP requests each transition costs, for examples/demo and for a
# 20-machine configuration. Usage: scripts/measure-apply.sh [time-scale] (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-1}
ADDR=127.0.0.1:${MEASURE_PORT:-7577}
WORK=$(mktemp -d)
BIN=$WORK/bin
export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0 LIFECYCLE_ENDPOINT="http://$ADDR"
export TF_CLI_CONFIG_FILE=$WORK/terraformrc
SIM_PID=
trap '[ -n "$SIM_PID" ] && kill $SIM_PID 2>/dev/null; rm -rf "$WORK"' EXIT

mkdir -p "$BIN"
go build -o "$BIN/terraform-provider-lifecycle" .
go build -o "$BIN/lifecyclesim" ./simulator/cmd/lifecyclesim
go build -o "$BIN/timeline" ./internal/timeline
printf 'provider_installation {\n  dev_overrides {\n    "lifecyclesim/lifecycle" = "%s"\n  }\n  direct {}\n}\n' "$BIN" >"$TF_CLI_CONFIG_FILE"

"$BIN/lifecyclesim" --addr "$ADDR" --db "$WORK/m.db" --time-scale "$SCALE" 2>"$WORK/sim.log" &
SIM_PID=$!
until curl -fsS "http://$ADDR/healthz" >/dev/null 2>&1; do sleep 0.1; done

mkdir -p "$WORK/demo" "$WORK/twenty"
cp examples/demo/main.tf "$WORK/demo/"
{
  sed -n '/^terraform {/,/^}/p' examples/demo/main.tf
  cat <<'TF'
resource "lifecycle_account" "a" { name = "bench" }
resource "lifecycle_cloudspace" "cs" {
  name       = "bench"
  account_id = lifecycle_account.a.id
}
resource "lifecycle_image" "img" { name = "bench" }
resource "lifecycle_machine" "m" {
  count         = 20
  name          = "m${count.index}"
  cloudspace_id = lifecycle_cloudspace.cs.id
  image_id      = lifecycle_image.img.id
}
TF
} >"$WORK/twenty/main.tf"

# measure NAME DIR CRITICAL_SECONDS_AT_SCALE_1
measure() {
  local before after start end
  before=$("$BIN/timeline" -counts)
  start=$(date +%s.%N)
  terraform -chdir="$2" apply -auto-approve -parallelism=30 >"$WORK/$1.log" 2>&1 || { cat "$WORK/$1.log"; exit 1; }
  end=$(date +%s.%N)
  after=$("$BIN/timeline" -counts)
  python3 - "$1" "$start" "$end" "$3" "$SCALE" "$before" "$after" <<'PY'
import sys
name, start, end, crit, scale, before, after = sys.argv[1:]
parse = lambda s: dict(kv.split("=") for kv in s.split())
b, a = parse(before), parse(after)
wall = float(end) - float(start)
crit = float(crit) * float(scale)
req = int(a["requests"]) - int(b["requests"])
tr = int(a["transitions"]) - int(b["transitions"])
print(f"{name}: apply {wall:.2f}s, critical path {crit:.2f}s, overhead {wall-crit:.2f}s; "
      f"{req} requests for {tr} timed transitions ({req/max(tr,1):.1f} per transition)")
PY
}

# Critical paths (spec durations): demo = cloudspace deploy 2s + machine deploy 3s + stop 2s
# (the disk branch, 2 + 3 + 1 + 1, is as long); twenty = cloudspace deploy 2s + machine deploy 3s.
measure demo "$WORK/demo" 7
measure twenty "$WORK/twenty" 5
