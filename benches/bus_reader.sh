#!/bin/bash
# A reader's time and memory to a complete view of the bus (docs/collectors.md, "Measured"):
# N simulated clusters × OBJECTS objects, published by COLLECTORS collectors to one nats-server,
# then `get --nats URL --summary` as a reader streaming every object, and summarizing
# (`--watch-mode summary`: the collectors' per-cluster counts only). Three runs each.
# cargo build --release first; needs nats-server (.ci/test installs it).
set -u
cd "$(dirname "$0")/.."
B=target/release/fluxfleet
N=${N:-3000}
OBJECTS=${OBJECTS:-20}
COLLECTORS=${COLLECTORS:-3}
PORT=${PORT:-4333}
URL=nats://127.0.0.1:$PORT
D=/tmp/bus-reader-bench
rm -rf $D && mkdir -p $D
nats-server -js -a 127.0.0.1 -p $PORT -sd $D/js > $D/nats.log 2>&1 &
PIDS=$!
$B sim --scenario uniform --clusters $N --workspaces 12 --objects $OBJECTS --out $D/sim > $D/sim.log 2>&1 &
PIDS="$PIDS $!"
trap 'kill $PIDS 2>/dev/null' EXIT
until grep -q "serving on" $D/sim.log; do sleep 0.5; done
for i in $(seq 1 "$COLLECTORS"); do
  $B collect --nats $URL --kubeconfig-dir $D/sim/kubeconfigs --id c$i --ttl 6s > $D/c$i.log 2>&1 &
  PIDS="$PIDS $!"
done
started=$(date +%s)
complete() {
  local out
  out=$($B get --nats $URL --summary -o json --timeout 60s 2>/dev/null) && [ -n "$out" ] &&
    echo "$out" | jq -e --argjson n "$N" --argjson o "$((N * OBJECTS))" \
      '.fleet.states.live == $n and ([.fleet.objects[]] | add) == $o' > /dev/null
}
until complete; do sleep 2; done
echo "$COLLECTORS collectors: $N clusters × $OBJECTS objects complete on the bus after $(( $(date +%s) - started )) s"
for mode in all summary; do
  for run in 1 2 3; do
    /usr/bin/time -f "%e s, %M KiB peak" -o $D/time $B get --nats $URL --summary -o json \
      --timeout 60s --watch-mode $mode > $D/out.json 2> $D/err
    clusters=$(jq '.fleet.clusters' $D/out.json)
    objects=$(jq '[.fleet.objects[]] | add' $D/out.json)
    echo "get --summary --watch-mode $mode (run $run): $(cat $D/time) — $clusters clusters, $objects objects counted"
  done
done
