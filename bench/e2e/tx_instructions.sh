#!/usr/bin/env bash
# Instructions the server executes per multi-key operation, counted by callgrind (as
# instructions.sh does for GET/SET): MGET and MSET of 10 keys at pipeline 16 (redis-benchmark,
# the commands of bench/e2e/transactions.py) and MULTI/EXEC of 5 commands at pipeline 1
# (txload). Repeatable where CPU-time figures on a shared VM are not.
# Usage: bench/e2e/tx_instructions.sh <dashkv binary> <txload binary> [threads] [operations]
# With SERVER=redis, <dashkv binary> is a redis-server binary (run without --threads).
# Prints one line per workload: instructions per operation (every server thread counted).
set -euo pipefail
BIN=$1
TXLOAD=$2
THREADS=${3:-2}
N=${4:-20000}
PORT=$((20000 + RANDOM % 20000))
OUT=$(mktemp -d)
if [[ "${SERVER:-dashkv}" == redis ]]; then
  ARGS=(--port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$OUT")
else
  ARGS=(--port "$PORT" --bind 127.0.0.1 --threads "$THREADS" --spin_us 0 --save "" --dir "$OUT")
fi
source "$(dirname "$0")/callgrind_server.sh"
callgrind_start "${ARGS[@]}"
# The keyspace of transactions.py: key:%012d, 100,000 keys.
redis-benchmark -p "$PORT" -t set -n 100000 -r 100000 -d 32 -P 30 -q >/dev/null
V=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
run() {  # name, command...
  local name=$1
  shift
  callgrind_control -z "$VG" >/dev/null 2>&1
  rm -f "$OUT"/cg.*
  "$@" >/dev/null
  echo "threads=$THREADS $name: $(($(total) / N)) instructions/operation"
}
run "MGET10 P16" redis-benchmark -p "$PORT" -n "$N" -r 100000 -c 20 -P 16 MGET \
  key:__rand_int__ key:__rand_int__ key:__rand_int__ key:__rand_int__ key:__rand_int__ \
  key:__rand_int__ key:__rand_int__ key:__rand_int__ key:__rand_int__ key:__rand_int__
run "MSET10 P16" redis-benchmark -p "$PORT" -n "$N" -r 100000 -c 20 -P 16 MSET \
  key:__rand_int__ $V key:__rand_int__ $V key:__rand_int__ $V key:__rand_int__ $V \
  key:__rand_int__ $V key:__rand_int__ $V key:__rand_int__ $V key:__rand_int__ $V \
  key:__rand_int__ $V key:__rand_int__ $V
run "MULTI/EXEC P1" "$TXLOAD" --host 127.0.0.1 --port "$PORT" --connections 20 --depth 1 \
  --transactions "$N" --keys 100000
