#!/bin/bash
# A fleet watched whole: peak resident memory, CPU, and when the first whole picture came (every
# cluster live: `get --watch` prints once no cluster is pending), two builds in one run, rounds
# alternating, on one simulated fleet in another process (docs/performance.md, "Ten thousand
# clusters"). With TUI=1, the TUI instead: when its status line says every cluster is live (tmux,
# the pane polled every 0.2 s), and its peak resident memory HOLD seconds later.
#   BEFORE=/path/to/parent/fluxfleet AFTER=target/release/fluxfleet [TUI=1] benches/watch_memory.sh
# CLUSTERS (10000), OBJECTS (20), ROUNDS (2), WINDOW (60 s from start to the interrupt), HOLD (30).
set -u
cd "$(dirname "$0")/.."
AFTER=${AFTER:-target/release/fluxfleet}
BEFORE=${BEFORE:-$AFTER}
CLUSTERS=${CLUSTERS:-10000}
OBJECTS=${OBJECTS:-20}
ROUNDS=${ROUNDS:-2}
WINDOW=${WINDOW:-60}
HOLD=${HOLD:-30}
TUI=${TUI:-}
DIR=${DIR:-/tmp/watch-memory}
rm -rf "$DIR"
$AFTER sim --scenario uniform --clusters "$CLUSTERS" --workspaces 24 --objects "$OBJECTS" --out "$DIR" > "$DIR.log" 2>&1 &
SIM=$!
trap 'kill $SIM 2>/dev/null; tmux kill-session -t watch-memory 2>/dev/null' EXIT
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
run_tui() {
  local bin=$1 label=$2
  tmux kill-session -t watch-memory 2>/dev/null
  local start
  start=$(date +%s.%N)
  # exec: the process found below is the TUI, not a shell waiting for it (whose 4 MiB were once
  # read as the TUI's peak).
  tmux new-session -d -s watch-memory -x 200 -y 50 \
    "exec env FLUXFLEET_CONFIG=/nonexistent $bin --kubeconfig-dir $DIR/kubeconfigs --watch-mode all"
  local pid=""
  until [ -n "$pid" ]; do pid=$(pgrep -f -n -- "$bin --kubeconfig-dir $DIR/kubeconfigs"); done
  local took=""
  for _ in $(seq 1500); do
    if tmux capture-pane -p -t watch-memory | grep -q "clusters $CLUSTERS/$CLUSTERS live"; then
      took=$(printf "%.1f" "$(echo "$(date +%s.%N) - $start" | bc)")
      break
    fi
    sleep 0.2
  done
  sleep "$HOLD"
  local peak
  peak=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  printf '%s: every cluster live after %s s, peak RSS %.1f MiB\n' "$label" "${took:-never (300 s)}" \
    "$(echo "$peak / 1024" | bc -l)"
  tmux send-keys -t watch-memory q
  sleep 2
  tmux kill-session -t watch-memory 2>/dev/null
}
if [ -n "$TUI" ]; then
  echo "the TUI on $CLUSTERS clusters x $OBJECTS objects watched whole"
  run=run_tui
else
  echo "$CLUSTERS clusters x $OBJECTS objects watched whole, ${WINDOW} s each"
  run=run
fi
for round in $(seq "$ROUNDS"); do
  $run "$BEFORE" "round $round before"
  $run "$AFTER" "round $round after "
done
