#!/bin/bash
# A fleet watched whole: peak resident memory, CPU, and when the first whole picture came (every
# cluster live: `get --watch` prints once no cluster is pending), two builds in one run, rounds
# alternating, on one simulated fleet in another process (docs/performance.md, "Ten thousand
# clusters").
#   BEFORE=/path/to/parent/fluxfleet AFTER=target/release/fluxfleet benches/watch_memory.sh
# CLUSTERS (10000), OBJECTS (20), ROUNDS (2), WINDOW (60 s from start to the interrupt).
set -u
cd "$(dirname "$0")/.."
AFTER=${AFTER:-target/release/fluxfleet}
BEFORE=${BEFORE:-$AFTER}
CLUSTERS=${CLUSTERS:-10000}
OBJECTS=${OBJECTS:-20}
ROUNDS=${ROUNDS:-2}
WINDOW=${WINDOW:-60}
DIR=${DIR:-/tmp/watch-memory}
rm -rf "$DIR"
$AFTER sim --scenario uniform --clusters "$CLUSTERS" --workspaces 24 --objects "$OBJECTS" --out "$DIR" > "$DIR.log" 2>&1 &
SIM=$!
trap 'kill $SIM 2>/dev/null' EXIT
until grep -q "serving on" "$DIR.log"; do sleep 0.5; done
# When the first line came, after `$1` (the start).
read_output() {
  python3 -c '
import sys, time
start = float(sys.argv[1]); first = None
for line in sys.stdin:
    if first is None:
        first = time.time() - start
print(f"first output after {first:.1f} s" if first is not None else "no output", end="")
' "$1"
}
run() {
  local bin=$1 label=$2 start
  start=$(date +%s.%N)
  local said
  said=$(/usr/bin/time -f "%M %U %S" -o "$DIR.time" timeout -s INT "$WINDOW" \
    "$bin" get --watch --summary --watch-mode all -o ndjson --kubeconfig-dir "$DIR/kubeconfigs" 2>/dev/null \
    | read_output "$start")
  read -r peak user sys < <(tail -1 "$DIR.time")
  printf '%s: %s, peak RSS %.1f MiB, CPU %.1f s\n' "$label" "$said" "$(echo "$peak / 1024" | bc -l)" "$(echo "$user + $sys" | bc -l)"
}
echo "$CLUSTERS clusters x $OBJECTS objects watched whole, ${WINDOW} s each"
for round in $(seq "$ROUNDS"); do
  run "$BEFORE" "round $round before"
  run "$AFTER" "round $round after "
done
