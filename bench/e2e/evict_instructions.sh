#!/usr/bin/env bash
# Instructions a server executes per SET while it evicts (issue 17's CPU-per-operation aim),
# counted by callgrind: repeatable where wall-clock CPU on a shared VM is not.
# Usage: bench/e2e/evict_instructions.sh <dashkv binary | redis-server> [threads] [requests]
# The server runs under callgrind with `maxmemory` $MAXMEMORY (default 48mb: under 64 MB, so
# dashkv's RSS rule, which would read valgrind's own RSS, stays off) and allkeys-lru ($POLICY),
# is filled past the limit with 2.5x its worth of 100-byte values under random keys, then each
# workload writes `requests` new random keys (every SET evicts about one key) and prints
# instructions per request (every server thread counted). A binary named redis-server runs with
# Redis's flags. Engines do not spin before sleeping (--spin_us 0): under valgrind the polling
# would count time, not work.
set -euo pipefail
BIN=$1
THREADS=${2:-1}
N=${3:-100000}
MAXMEMORY=${MAXMEMORY:-48mb}
POLICY=${POLICY:-allkeys-lru}
PORT=$((20000 + RANDOM % 20000))
OUT=$(mktemp -d)
if [[ $(basename "$BIN") == redis-server* ]]; then
  ARGS=(--port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$OUT"
        --maxmemory "$MAXMEMORY" --maxmemory-policy "$POLICY")
else
  ARGS=(--port "$PORT" --bind 127.0.0.1 --threads "$THREADS" --spin_us 0 --save "" --dir "$OUT"
        --maxmemory "$MAXMEMORY" --maxmemory_policy "$POLICY")
fi
source "$(dirname "$0")/callgrind_server.sh"
callgrind_start "${ARGS[@]}"
limit=$(redis-cli -p "$PORT" config get maxmemory | tail -1)
fill=$((limit * 5 / 2 / 100))
redis-benchmark -p "$PORT" -t set -n "$fill" -r 1000000000 -d 100 -P 30 -c 20 -q >/dev/null
for p in 1 30; do
  callgrind_control -z "$VG" >/dev/null 2>&1
  rm -f "$OUT"/cg.*
  ev0=$(redis-cli -p "$PORT" info stats | awk -F: '/^evicted_keys/ {print $2+0}')
  redis-benchmark -p "$PORT" -t set -n "$N" -r 1000000000 -d 100 -P "$p" -c 20 -q >/dev/null
  ir=$(total)
  ev1=$(redis-cli -p "$PORT" info stats | awk -F: '/^evicted_keys/ {print $2+0}')
  echo "threads=$THREADS evicting SET P$p: $((ir / N)) instructions/request" \
       "($((ev1 - ev0)) evicted, $(redis-cli -p "$PORT" dbsize) keys)"
done
if [[ -n "${KEEP_PROFILE:-}" ]]; then cp "$OUT"/cg.* "$KEEP_PROFILE"/; fi
