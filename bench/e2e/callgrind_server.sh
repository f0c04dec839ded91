# Shared by the callgrind scripts (instructions.sh, tx_instructions.sh, evict_instructions.sh):
# source it after setting BIN, PORT and OUT (a fresh directory).

# Runs "$BIN" with the given arguments under callgrind in the background (dumps in $OUT, its
# output in $OUT/server.log), sets VG to its pid, stops it and removes $OUT when the script
# exits, and waits (up to 60 s) until $PORT answers PING.
callgrind_start() {
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.%p" --dump-line=no --dump-instr=no \
    "$BIN" "$@" >"$OUT/server.log" 2>&1 &
  VG=$!
  trap 'kill $VG 2>/dev/null; wait $VG 2>/dev/null; rm -rf "$OUT"' EXIT
  for _ in $(seq 300); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done
}

# Prints the instructions the server executed (every thread) since its start or the last
# `callgrind_control -z "$VG"`.
total() {
  callgrind_control -d "$VG" >/dev/null 2>&1
  local sum=0
  for f in "$OUT"/cg.*; do
    local ir
    ir=$(awk '/^summary:/ {print $2}' "$f" | tail -1)
    sum=$((sum + ${ir:-0}))
  done
  echo "$sum"
}
