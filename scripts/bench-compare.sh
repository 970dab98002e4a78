#!/usr/bin/env bash
# Performance figures of lifecyclesim, measured from outside over HTTP (internal/benchcompare):
#
#   scripts/bench-compare.sh compare [flags]  lifecyclesim (SQLite file, in-memory) against
#                                             moto_server: GET, accepted action, create at
#                                             1/16/64 clients; servers on CPU 0, load on CPU 1
#   scripts/bench-compare.sh scale [flags]    1k → 10k → 100k objects on each store: RSS, the
#                                             live heap (heap profiles in bin/heap-*.pprof) and
#                                             the cost of GET, lists, action, create
#   scripts/bench-compare.sh apply [flags]    terraform apply of 1/20/200 machines against the
#                                             critical path and a terraform_data graph
#   scripts/bench-compare.sh replicas [flags] accepted actions/s of 1, 2 and 3 lifecyclesim
#                                             replicas over one PostgreSQL (fsync on) beside
#                                             one process on a SQLite file: compare with
#                                             -systems sqlite,pg1,pg2,pg3 -ops act; the
#                                             servers and PostgreSQL on CPU 0, load on CPU 1
#   scripts/bench-compare.sh relations [flags] MCIs of 100/1k/10k VMs on each store: create,
#                                             suspend, resume, scale, delete against the
#                                             physical limit of the served rate limits; another
#                                             tenant's deploys during a 10k create; 10k lease
#                                             timers firing at once; servers on CPU 0
#
# Flags go to benchcompare (go run ./internal/benchcompare -h lists them), e.g. a quick run:
#   scripts/bench-compare.sh compare -rounds 1 -duration 1s
#   scripts/bench-compare.sh scale -sizes 1000,10000
#   scripts/bench-compare.sh relations -vms 100,1000 -rounds 1 -op-timeout 60s
#   scripts/bench-compare.sh relations -sims old=/tmp/lifecyclesim-old,new=bin/lifecyclesim
# The markdown tables go to stdout and bin/bench-MODE.md, the raw numbers to bin/bench-MODE.txt.
# BENCH_DIR picks the directory of the SQLite files (and so the disk whose fsync is measured);
# by default a new temp dir. Never part of make test.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-}
case "$MODE" in
compare | scale | apply | relations | replicas) shift ;;
*)
  echo "usage: $0 compare|scale|apply|relations|replicas [benchcompare flags]" >&2
  exit 2
  ;;
esac

need() {
  command -v "$1" >/dev/null 2>&1 || {
    echo "bench-compare: $1 is missing: $2" >&2
    exit 1
  }
}
# This script pins the load generator itself; benchcompare checks the rest (moto only when
# -systems has it, terraform for apply).
if [ "$MODE" != apply ]; then
  need taskset "install util-linux (apt-get install util-linux)"
  if [ "$(nproc --all)" -lt 2 ]; then
    echo "bench-compare: $MODE pins the servers to CPU 0 and the load generator to CPU 1: this machine has $(nproc --all) CPU" >&2
    exit 1
  fi
fi

mkdir -p bin
go build -o bin/lifecyclesim ./simulator/cmd/lifecyclesim
go build -o bin/benchcompare ./internal/benchcompare
if [ "$MODE" = apply ]; then
  go build -o bin/terraform-provider-lifecycle .
  go build -o bin/timeline ./internal/timeline
fi

WORK=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/bench-$MODE.XXXXXX")
export CHECKPOINT_DISABLE=1
cleanup() {
  # Only the servers benchcompare started (it writes their process group IDs there), and
  # only those still running, in case benchcompare itself was killed.
  if [ -f "$WORK/pids" ]; then
    while read -r pgid; do
      if kill -0 -- "-$pgid" 2>/dev/null; then kill -- "-$pgid" 2>/dev/null || true; fi
    done <"$WORK/pids"
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

LABEL="$(git describe --tags --always --dirty 2>/dev/null || echo unknown) ($(git log -1 --format=%h\ %s 2>/dev/null | cut -c1-60))"
ARGS=(-mode "$MODE")
if [ "$MODE" = scale ]; then
  # Each server's heap profile after its fill: go tool pprof -sample_index=inuse_space
  # bin/lifecyclesim bin/heap-STORE-SIZE.pprof
  ARGS+=(-heap-dir bin)
fi
if [ "$MODE" = replicas ]; then
  # Flags given after these win (the last of a flag counts).
  ARGS=(-mode compare -systems sqlite,pg1,pg2,pg3 -ops act -clients 1,16,64 -rounds 5)
fi
RUN=(bin/benchcompare "${ARGS[@]}" -workdir "$WORK/run" -pidfile "$WORK/pids" -raw "bin/bench-$MODE.txt" -label "$LABEL")
if [ "$MODE" = apply ]; then
  # terraform, the provider and the simulator share the machine, as for a user.
  "${RUN[@]}" "$@" | tee "bin/bench-$MODE.md"
else
  # The load generator on CPU 1; benchcompare pins each server to CPU 0 (-server-cpu).
  taskset -c 1 "${RUN[@]}" "$@" | tee "bin/bench-$MODE.md"
fi
echo "bench-compare: tables in bin/bench-$MODE.md, raw numbers in bin/bench-$MODE.txt" >&2
