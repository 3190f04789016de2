#!/bin/bash
# A collector's memory over a long run of churn (docs/collectors.md, "Soak"): N simulated
# clusters changing CHURN times a second, two collectors publishing them to one nats-server;
# every minute for MINUTES minutes, each collector's resident memory (VmRSS) and what it has
# published (its /metrics). Flat means no growth after the first minutes.
# HEAP=path/to/fluxfleet: collector c1 runs that binary under heaptrack (build one without
# mimalloc: heaptrack sees glibc's malloc), and its heap is summarized at the end.
# cargo build --release first; needs nats-server (.ci/test installs it).
set -u
cd "$(dirname "$0")/.."
B=target/release/fluxfleet
N=${N:-2000}
CHURN=${CHURN:-100}
MINUTES=${MINUTES:-30}
PORT=${PORT:-4334}
URL=nats://127.0.0.1:$PORT
D=/tmp/collector-soak
rm -rf $D && mkdir -p $D
nats-server -js -a 127.0.0.1 -p $PORT -sd $D/js > $D/nats.log 2>&1 &
PIDS=$!
$B sim --scenario uniform --clusters $N --workspaces 12 --objects 20 --churn $CHURN \
  --out $D/sim > $D/sim.log 2>&1 &
PIDS="$PIDS $!"
trap 'kill $PIDS 2>/dev/null' EXIT
until grep -q "serving on" $D/sim.log; do sleep 0.5; done
for i in 1 2; do
  run=$B
  if [ $i = 1 ] && [ -n "${HEAP:-}" ]; then run="heaptrack -o $D/heap $HEAP"; fi
  $run collect --nats $URL --kubeconfig-dir $D/sim/kubeconfigs --id c$i --ttl 6s \
    --metrics-addr 127.0.0.1:$((9100 + i)) > $D/c$i.log 2>&1 &
  PIDS="$PIDS $!"
done
sleep 5
echo "minute collector rss_mib published_total kept"
for m in $(seq 1 "$MINUTES"); do
  sleep 60
  for i in 1 2; do
    # This soak's collectors only (another benchmark's may be running: its own --id c1 too).
    pid=$(pgrep -n -f "collect --nats $URL .*--id c$i ")
    rss=$(awk '/VmRSS/ {print int($2/1024)}' /proc/$pid/status)
    metrics=$(curl -s http://127.0.0.1:$((9100 + i))/metrics)
    published=$(echo "$metrics" | awk '/^fluxfleet_collector_published_total/ {print $2}')
    kept=$(echo "$metrics" | awk '/^fluxfleet_collector_publishes_kept/ {print $2}')
    echo "$m c$i $rss $published $kept"
  done
done
if [ -n "${HEAP:-}" ]; then
  kill -INT "$(pgrep -n -f "collect --nats $URL .*--id c1 ")"
  sleep 5
  heaptrack_print -f $D/heap.*zst 2>/dev/null | grep -E "peak heap memory|total memory leaked|calls to allocation"
fi
