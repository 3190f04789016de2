#!/bin/bash
# The alert loop's CPU per 1,000 changes, end to end (docs/performance.md, alert): a 2,000-cluster simulated fleet with churn,
# `fluxfleet alert --dry-run` following it; the changes counted by a `get --watch` beside it.
set -u
cd "$(dirname "$0")/.."
B=target/release/fluxfleet  # cargo build --release first
CHURN=${CHURN:-100}
WINDOW=${WINDOW:-120}
rm -rf /tmp/big
$B sim --scenario uniform --clusters 2000 --workspaces 12 --objects 30 --out /tmp/big --churn $CHURN > /tmp/big.log 2>&1 &
SIM=$!
until grep -q "serving on" /tmp/big.log; do sleep 0.5; done
$B alert --dry-run --kubeconfig-dir /tmp/big/kubeconfigs --every 30s --for 1m > /tmp/alert-big.out 2> /tmp/alert-big.err &
A=$!
$B get --watch -o ndjson --kubeconfig-dir /tmp/big/kubeconfigs > /tmp/watch-big.out 2>/dev/null &
W=$!
until grep -q "fluxfleet alert:" /tmp/alert-big.err; do sleep 0.5; done
sleep 20
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
c0=$(cpu $A); w0=$(cpu $W); l0=$(wc -l < /tmp/watch-big.out)
sleep $WINDOW
c1=$(cpu $A); w1=$(cpu $W); l1=$(wc -l < /tmp/watch-big.out)
hwm=$(grep VmHWM /proc/$A/status | awk '{print $2}')
rss=$(grep VmRSS /proc/$A/status | awk '{print $2}')
kill $A $W $SIM
changes=$((l1 - l0))
echo "churn $CHURN/s, window ${WINDOW}s: $changes changes; alert CPU $(( (c1 - c0) * 10 )) ms; per 1,000 changes: $(echo "scale=1; (($c1 - $c0) * 10) * 1000 / $changes" | bc) ms; peak RSS $((hwm/1024)) MiB, RSS $((rss/1024)) MiB; get --watch beside it: $(( (w1 - w0) * 10 )) ms, per 1,000 changes $(echo "scale=1; (($w1 - $w0) * 10) * 1000 / $changes" | bc) ms"
echo "alerts fired: $(grep -c firing /tmp/alert-big.out)"
