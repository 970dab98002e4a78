#!/usr/bin/env bash
# The 30-second demo: builds the provider and lifecyclesim, starts the simulator on its
# embedded SQLite store, applies examples/demo through dev_overrides (no registry, no
# terraform init), prints each object's transition timeline, walks a machine along a
# multi-hop route, shows a plan rejected at plan time, destroys, and stops the simulator.
set -euo pipefail
cd "$(dirname "$0")/.."

ADDR=${DEMO_ADDR:-127.0.0.1:7575}
SCALE=${DEMO_TIME_SCALE:-0.5}
WORK=$(mktemp -d)
BIN=$WORK/bin
export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0
export LIFECYCLE_ENDPOINT="http://$ADDR"
export TF_CLI_CONFIG_FILE=$WORK/terraformrc
SIM_PID=

cleanup() {
  if [ -n "$SIM_PID" ]; then kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Building the provider, lifecyclesim and the timeline tool"
mkdir -p "$BIN"
go build -o "$BIN/terraform-provider-lifecycle" .
go build -o "$BIN/lifecyclesim" ./simulator/cmd/lifecyclesim
go build -o "$BIN/timeline" ./internal/timeline
cat >"$TF_CLI_CONFIG_FILE" <<CFG
provider_installation {
  dev_overrides {
    "lifecyclesim/lifecycle" = "$BIN"
  }
  direct {}
}
CFG

step "Starting lifecyclesim on $ADDR (SQLite store $WORK/demo.db, time scale $SCALE)"
"$BIN/lifecyclesim" --addr "$ADDR" --db "$WORK/demo.db" --time-scale "$SCALE" 2>"$WORK/sim.log" &
SIM_PID=$!
for _ in $(seq 1 100); do
  if curl -fsS "http://$ADDR/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$SIM_PID" 2>/dev/null; then cat "$WORK/sim.log"; echo "lifecyclesim did not start" >&2; exit 1; fi
  sleep 0.1
done
cat "$WORK/sim.log"

cp examples/demo/main.tf "$WORK/"
TF="terraform -chdir=$WORK"

step "terraform apply: create everything (the web machine is deployed, then stopped to HALTED)"
$TF apply -auto-approve -compact-warnings

step "Objects and their transition timelines (from GET /v1/{collection}/{id}/events)"
"$BIN/timeline"

step "Multi-hop change: web HALTED → PAUSED walks start, then pause"
$TF plan -compact-warnings -var web_status=PAUSED -var node_status=DECOMMISSIONED | grep -E 'will be updated|status|state' || true
$TF apply -auto-approve -compact-warnings -var web_status=PAUSED -var node_status=DECOMMISSIONED
"$BIN/timeline" -kinds machine,node

step "A change with no route fails at plan time: a DECOMMISSIONED node cannot be ENABLED again"
if $TF plan -compact-warnings -var web_status=PAUSED -var node_status=ENABLED; then
  echo "expected the plan to fail" >&2
  exit 1
fi

step "terraform destroy"
$TF destroy -auto-approve -compact-warnings -var web_status=PAUSED -var node_status=DECOMMISSIONED
"$BIN/timeline" -counts

step "Stopping lifecyclesim"
kill -TERM "$SIM_PID"
wait "$SIM_PID" || true
SIM_PID=
tail -n 2 "$WORK/sim.log"
echo "demo done"
