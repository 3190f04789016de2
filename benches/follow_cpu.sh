#!/bin/bash
# Following a churning fleet: the CPU of `fluxfleet get --watch` per change, two builds side by
# side on the same simulated fleet at the same time (docs/performance.md, "Following a fleet").
#   BEFORE=/path/to/old/fluxfleet AFTER=target/release/fluxfleet benches/follow_cpu.sh
set -u
cd "$(dirname "$0")/.."
AFTER=${AFTER:-target/release/fluxfleet}
BEFORE=${BEFORE:-$AFTER}
CLUSTERS=${CLUSTERS:-2000}
CHURN=${CHURN:-100}
WINDOW=${WINDOW:-60}
DIR=${DIR:-/tmp/follow}
rm -rf "$DIR"
$AFTER sim --scenario uniform --clusters "$CLUSTERS" --workspaces 12 --objects 30 --out "$DIR" --churn "$CHURN" > "$DIR.log" 2>&1 &
SIM=$!
trap 'kill $SIM $A $B 2>/dev/null' EXIT
until grep -q "serving on" "$DIR.log"; do sleep 0.5; done
$BEFORE get --watch -o ndjson --kubeconfig-dir "$DIR/kubeconfigs" > "$DIR.before" 2>/dev/null &
A=$!
$AFTER get --watch -o ndjson --kubeconfig-dir "$DIR/kubeconfigs" > "$DIR.after" 2>/dev/null &
B=$!
# Both have read the whole fleet once their output stops growing fast; 20 s is plenty at 2,000.
sleep 20
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
a0=$(cpu $A); b0=$(cpu $B); l0=$(wc -l < "$DIR.after")
sleep "$WINDOW"
a1=$(cpu $A); b1=$(cpu $B); l1=$(wc -l < "$DIR.after")
changes=$((l1 - l0))
per() { echo "scale=3; ($1 * 10) / $changes" | bc; }
echo "$CLUSTERS clusters, churn $CHURN/s, ${WINDOW} s: $changes changes shown"
echo "before: $(( (a1 - a0) * 10 )) ms CPU, $(per $((a1 - a0))) ms per change, RSS $(( $(grep VmRSS /proc/$A/status | awk '{print $2}') / 1024 )) MiB"
echo "after:  $(( (b1 - b0) * 10 )) ms CPU, $(per $((b1 - b0))) ms per change, RSS $(( $(grep VmRSS /proc/$B/status | awk '{print $2}') / 1024 )) MiB"
