#!/usr/bin/env bash
# The 30-second demo: builds the provider and lifecyclesim, starts the simulator on its
# embedded SQLite store, applies examples/demo through dev_overrides (no registry, no
# terraform init), prints each object's transition timeline, walks a machine along a
# multi-hop route, shows a plan rejected at plan time, destroys, and stops the simulator.
set -euo pipefail
cd "$(dirname "$0")/.."

# DEMO_ADDR picks the simulator's address; by default 127.0.0.1:7575, or a free port when
# that one is taken (say, by a simulator you run yourself: the demo never talks to it).
port_busy() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
if [ -n "${DEMO_ADDR:-}" ]; then
  ADDR=$DEMO_ADDR
  if port_busy "$ADDR"; then
    echo "DEMO_ADDR=$ADDR is already in use: stop what listens there, or choose another address (DEMO_ADDR=127.0.0.1:7576 make demo)." >&2
    exit 1
  fi
else
  ADDR=127.0.0.1:7575
  if port_busy "$ADDR"; then
    ADDR=127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
      shuf -i 20000-60000 -n 1)
    echo "127.0.0.1:7575 is in use; the demo's simulator listens on $ADDR instead (set DEMO_ADDR to choose)." >&2
  fi
fi
SCALE=${DEMO_TIME_SCALE:-0.5}
WORK=$(mktemp -d)
BIN=$WORK/bin
export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0
export LIFECYCLE_ENDPOINT="http://$ADDR"
export TF_CLI_CONFIG_FILE=$WORK/terraformrc
SIM_PID=

cleanup() {
  # Only the simulator this script started, and only while it runs.
  if [ -n "$SIM_PID" ] && kill -0 "$SIM_PID" 2>/dev/null; then kill "$SIM_PID" 2>/dev/null || true; fi
  if [ -n "$SIM_PID" ]; then wait "$SIM_PID" 2>/dev/null || true; fi
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
# Ready when our simulator says it listens (a health check could be answered by another
# process that took the port meanwhile).
for _ in $(seq 1 100); do
  if grep -q 'lifecyclesim listening' "$WORK/sim.log"; then break; fi
  if ! kill -0 "$SIM_PID" 2>/dev/null; then
    cat "$WORK/sim.log"
    echo "lifecyclesim did not start on $ADDR" >&2
    SIM_PID=
    exit 1
  fi
  sleep 0.1
done
if ! grep -q 'lifecyclesim listening' "$WORK/sim.log"; then cat "$WORK/sim.log"; echo "lifecyclesim did not start on $ADDR" >&2; exit 1; fi
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

step "A status that is not one to ask for fails at plan time: STOPPING is a transition state"
if $TF plan -compact-warnings -var web_status=STOPPING -var node_status=DECOMMISSIONED; then
  echo "expected the plan to fail" >&2
  exit 1
fi

step "No route back: a DECOMMISSIONED node asked to be ENABLED is replaced, and the plan says why"
$TF plan -no-color -var web_status=PAUSED -var node_status=ENABLED >"$WORK/replace.txt"
cat "$WORK/replace.txt"
if ! grep -q 'lifecycle_node.cpu01 must be replaced' "$WORK/replace.txt"; then
  echo "expected the plan to replace the node" >&2
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
