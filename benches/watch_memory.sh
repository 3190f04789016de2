#!/bin/bash
# A fleet watched whole: peak resident memory, CPU, and when the first whole picture came (every
# cluster live: `get --watch` prints once no cluster is pending), two builds in one run, rounds
# alternating, on one simulated fleet in another process (docs/performance.md, "Ten thousand
# clusters"). With TUI=1, the TUI instead: when its status line says every cluster is live (tmux,
# the pane polled every 0.2 s), and its peak resident memory HOLD seconds later; and how its loop
# kept its frame budget until then (its frames' drawing and lateness, the fleet's updates, from
# its own log at FLUXFLEET_LOG=fluxfleet::tui::frame=debug; "The TUI while ten thousand clusters
# connect").
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
  local start state="$DIR.state"
  rm -rf "$state"
  start=$(date +%s.%N)
  # exec: the process found below is the TUI, not a shell waiting for it (whose 4 MiB were once
  # read as the TUI's peak).
  tmux new-session -d -s watch-memory -x 200 -y 50 \
    "exec env FLUXFLEET_CONFIG=/nonexistent XDG_STATE_HOME=$state FLUXFLEET_LOG=fluxfleet::tui::frame=debug $bin --kubeconfig-dir $DIR/kubeconfigs --watch-mode all"
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
  frames "$state/fluxfleet/fluxfleet.log" "$start" "${took:-300}"
  tmux send-keys -t watch-memory q
  sleep 2
  tmux kill-session -t watch-memory 2>/dev/null
}
# The TUI's frames and updates from its start until every cluster was live: how many, and the
# median, 99th percentile and most of each (a build without the log says so).
frames() {
  python3 - "$@" <<'PY'
import re, sys
from datetime import datetime
log, start, took = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
seen = {"drawn_us": [], "late_us": [], "updated_us": []}
try:
    lines = open(log).read().splitlines()
except OSError:
    lines = []
for line in lines:
    m = re.match(r"(\S+)Z\s+DEBUG fluxfleet::tui::frame: \w+ (.*)", line)
    if not m:
        continue
    at = datetime.fromisoformat(m.group(1) + "+00:00").timestamp()
    if at > start + took:
        continue
    for key, value in re.findall(r"(\w+)=(\d+)", m.group(2)):
        if key in seen:
            seen[key].append(int(value))
if not seen["drawn_us"]:
    print("  (no frame log: a build before it)")
    sys.exit()
def say(values):
    values = sorted(values)
    at = lambda q: values[min(len(values) - 1, int(q * len(values)))] / 1000
    return f"median {at(0.5):.1f} ms, p99 {at(0.99):.1f} ms, most {values[-1] / 1000:.1f} ms"
print(f"  {len(seen['drawn_us'])} frames until every cluster was live: drawn {say(seen['drawn_us'])}; late {say(seen['late_us'])}")
print(f"  {len(seen['updated_us'])} updates of the fleet's events: {say(seen['updated_us'])}")
PY
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
