#!/usr/bin/env bash
# Instructions the server executes per request, counted by callgrind: a repeatable measure for
# small CPU differences that wall-clock runs on a shared VM cannot resolve (their noise is ~10%).
# Usage: bench/e2e/instructions.sh <dashkv binary> [threads] [requests]
# CONFIG_SET="name value ..." runs CONFIG SET with those arguments once the server is up (to
# measure a setting's cost, e.g. CONFIG_SET="latency-tracking no").
# Prints one line per workload: GET/SET at pipeline 1 and 30, instructions per request (every
# server thread counted). Engines do not spin before sleeping (--spin_us 0): under valgrind the
# polling would count time, not work.
# ACL_KEY_PATTERNS=n: the clients run as a restricted user (every command, n key patterns of
# which only the last matches the benchmark's keys), so each command pays the ACL check.
set -euo pipefail
BIN=$1
THREADS=${2:-1}
N=${3:-200000}
PORT=$((20000 + RANDOM % 20000))
OUT=$(mktemp -d)
source "$(dirname "$0")/callgrind_server.sh"
callgrind_start --port "$PORT" --bind 127.0.0.1 --threads "$THREADS" --spin_us 0 --save "" --dir "$OUT"
if [[ -n "${CONFIG_SET:-}" ]]; then
  # shellcheck disable=SC2086  # the words are separate arguments
  redis-cli -p "$PORT" config set $CONFIG_SET >/dev/null
fi
redis-benchmark -p "$PORT" -t set -n 100000 -r 100000 -d 256 -P 30 -q >/dev/null
if [[ -n "${ACL_KEY_PATTERNS:-}" ]]; then
  patterns=()
  for i in $(seq 2 "$ACL_KEY_PATTERNS"); do patterns+=("~nomatch$i:*"); done
  redis-cli -p "$PORT" ACL SETUSER default resetkeys "${patterns[@]}" "~key:*" >/dev/null
fi
callgrind_control -z "$VG" >/dev/null 2>&1
for test in get set; do
  for p in 1 30; do
    callgrind_control -z "$VG" >/dev/null 2>&1
    rm -f "$OUT"/cg.*
    redis-benchmark -p "$PORT" -t "$test" -n "$N" -r 100000 -d 256 -P "$p" -c 20 -q >/dev/null
    ir=$(total)
    echo "threads=$THREADS $test P$p: $((ir / N)) instructions/request"
  done
done
