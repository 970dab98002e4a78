#!/usr/bin/env bash
# Runs the terraform test suites of the example modules (web_tier, edge_app) the way PROVIDER.md tells module
# authors to work offline: the provider from a local build through dev_overrides, modules
# installed with `terraform get` (no `terraform init`, nothing downloaded), against a
# lifecyclesim of its own on a free port. It writes its own CLI configuration, so the caller's
# (an empty one in CI) does not matter, and stops only the simulator it started.
# TERRAFORM names the binary (default: terraform on PATH); make test-tofu passes OpenTofu's tofu.
set -euo pipefail
TERRAFORM=${TERRAFORM:-terraform}
cd "$(dirname "$0")/.."

MODULES="examples/modules/web_tier examples/modules/edge_app examples/modules/multi_cloud_mci"
WORK=$(mktemp -d)
BIN=$WORK/bin
SIM_PID=
cleanup() {
  if [ -n "$SIM_PID" ]; then kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$BIN"
go build -o "$BIN/terraform-provider-lifecycle" .
go build -o "$BIN/lifecyclesim" ./simulator/cmd/lifecyclesim

# Port 0: the simulator picks a free port and logs the address it listens on.
"$BIN/lifecyclesim" --addr 127.0.0.1:0 --db :memory: --time-scale 0.01 2>"$WORK/sim.log" &
SIM_PID=$!
addr=
for _ in $(seq 1 100); do
  addr=$(grep -o 'addr=http://[0-9.:]*' "$WORK/sim.log" | head -1 | cut -d= -f2 || true)
  if [ -n "$addr" ]; then break; fi
  if ! kill -0 "$SIM_PID" 2>/dev/null; then cat "$WORK/sim.log" >&2; echo "lifecyclesim did not start" >&2; exit 1; fi
  sleep 0.1
done
if [ -z "$addr" ]; then cat "$WORK/sim.log" >&2; echo "lifecyclesim did not say where it listens" >&2; exit 1; fi

cat >"$WORK/terraformrc" <<CFG
provider_installation {
  dev_overrides {
    "lifecyclesim/lifecycle" = "$BIN"
  }
  direct {}
}
CFG
export TF_CLI_CONFIG_FILE=$WORK/terraformrc
# Keep .terraform (the installed modules) out of the repository.
export TF_DATA_DIR=$WORK/tfdata
export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0
export LIFECYCLE_ENDPOINT=$addr

for MODULE in $MODULES; do
  export TF_DATA_DIR=$WORK/tfdata/$(basename "$MODULE")
  echo "$(basename "$TERRAFORM") test of $MODULE against lifecyclesim at $addr"
  "$TERRAFORM" -chdir="$MODULE" get
  "$TERRAFORM" -chdir="$MODULE" test -no-color
done
