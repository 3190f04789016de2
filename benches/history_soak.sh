#!/bin/bash
# nats-server's memory under a collector's history (docs/collectors.md, "The history's
# budget"): N simulated clusters changing CHURN times a second, one collector publishing them
# with --history-max-bytes CAP, one reader following the bus; every minute for MINUTES minutes,
# nats-server's resident memory, the history stream's bytes and changes (the collector's
# /metrics), the state bucket's bytes (nats-server's /jsz), and the Go runtime's live heap and
# the heap it holds (nats-server's profiling port). Levelling off means the stream reached its
# cap and the server stopped growing with it.
# cargo build --release first; needs nats-server (.ci/test installs it) and curl.
set -u
cd "$(dirname "$0")/.."
B=${B:-target/release/fluxfleet}
N=${N:-300}
CHURN=${CHURN:-10}
MINUTES=${MINUTES:-60}
CAP=${CAP:-64MiB}
PORT=${PORT:-4344}
MON=${MON:-8344}
PROF=${PROF:-6344}
URL=nats://127.0.0.1:$PORT
D=/tmp/history-soak
rm -rf $D && mkdir -p $D
nats-server -js -a 127.0.0.1 -p $PORT -m $MON --profile $PROF -sd $D/js > $D/nats.log 2>&1 &
PIDS=$!
NATS_PID=$!
$B sim --scenario uniform --clusters "$N" --workspaces 12 --objects 20 --churn "$CHURN" \
  --out $D/sim > $D/sim.log 2>&1 &
PIDS="$PIDS $!"
trap 'kill $PIDS 2>/dev/null' EXIT
until grep -q "serving on" $D/sim.log; do sleep 0.5; done
$B collect --nats $URL --kubeconfig-dir $D/sim/kubeconfigs --id soak --ttl 6s \
  --history-max-bytes "$CAP" --metrics-addr 127.0.0.1:9144 > $D/collect.log 2>&1 &
PIDS="$PIDS $!"
sleep 5
$B get --nats $URL --kubeconfig-dir $D/sim/kubeconfigs --watch -o ndjson > /dev/null 2> $D/get.log &
PIDS="$PIDS $!"
echo "minute nats_rss_mib history_mib history_changes state_mib go_heap_alloc_mib go_heap_inuse_mib"
for m in $(seq 1 "$MINUTES"); do
  sleep 60
  rss=$(awk '/VmRSS/ {print int($2/1024)}' /proc/$NATS_PID/status)
  metrics=$(curl -s http://127.0.0.1:9144/metrics)
  hbytes=$(echo "$metrics" | awk '/^fluxfleet_collector_history_bytes/ {printf "%.1f", $2/1048576}')
  hmsgs=$(echo "$metrics" | awk '/^fluxfleet_collector_history_messages/ {print $2}')
  state=$(curl -s "http://127.0.0.1:$MON/jsz?streams=true" |
    python3 -c 'import json,sys; j=json.load(sys.stdin); print(round(sum(s["state"]["bytes"] for a in j.get("account_details",[]) for s in a.get("stream_detail",[]) if s["name"].startswith("KV_") and not s["name"].endswith("-collectors"))/1048576,1))')
  # The Go runtime's own account (its profiling port): the live heap, and the heap it holds.
  heap=$(curl -s "http://127.0.0.1:$PROF/debug/pprof/heap?debug=1" |
    awk '/^# HeapAlloc = / {a=$4} /^# HeapInuse = / {i=$4} END {printf "%d %d", a/1048576, i/1048576}')
  echo "$m $rss $hbytes $hmsgs $state $heap"
done
