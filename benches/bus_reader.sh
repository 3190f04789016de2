#!/bin/bash
# A reader's time and memory to a complete view of the bus (docs/collectors.md, "Measured"):
# N simulated clusters × OBJECTS objects served by SIMS simulator processes (one process's
# 20,000 file descriptors hold fewer connections than a large fleet needs), published by
# COLLECTORS collectors to one nats-server, then `get --nats URL --summary` as a reader streaming
# every object, and summarizing (`--watch-mode summary`: the collectors' per-cluster counts
# only). Three runs each. e.g. N=20000 SIMS=2 COLLECTORS=4 benches/bus_reader.sh
# Collectors with tiers: COLLECT_MODE=summary (their --watch-mode), OPERATOR=1 (the share of
# clusters running the Flux Operator), REPORT_INTERVAL=60s (their engine.report_interval);
# CHECK_MODE=summary to wait for the bus by its summaries (cheaper than every object); TTL=6s
# (the collectors' --ttl: longer where a loaded machine delays their renewals).
# Each simulator listens on its own loopback address (127.0.0.2, .3, …).
# OPEN=10: a reader (`--watch-mode ${CHECK_MODE:-summary}`) opens 10 clusters spread over the
# fleet, one at a time, and times each until its objects are shown live — with COLLECT_MODE=summary,
# the warming of a summarized cluster by its collector (benches/fleet_scale.rs --nats).
# cargo build --release and cargo bench --bench fleet_scale --no-run first; needs nats-server
# (.ci/test installs it). B=path/to/fluxfleet runs another build (an A/B).
# HOLD=1: once the bus is complete, keep it (and the simulators and collectors) up until
# $D/stop exists (/tmp/bus-reader-bench/stop), to run readers of two builds against it.
set -u
cd "$(dirname "$0")/.."
B=${B:-target/release/fluxfleet}
N=${N:-3000}
OBJECTS=${OBJECTS:-20}
COLLECTORS=${COLLECTORS:-3}
SIMS=${SIMS:-1}
PORT=${PORT:-4333}
URL=nats://127.0.0.1:$PORT
D=/tmp/bus-reader-bench
rm -rf $D && mkdir -p $D
nats-server -js -a 127.0.0.1 -p $PORT -sd $D/js > $D/nats.log 2>&1 &
PIDS=$!
EACH=$((N / SIMS))
DIRS=()
for s in $(seq 0 $((SIMS - 1))); do
  $B sim --scenario uniform --clusters $EACH --first-cluster $((s * EACH)) --workspaces 12 \
    --objects $OBJECTS --out $D/sim$s --listen 127.0.0.$((s + 2)):0 \
    ${OPERATOR:+--operator $OPERATOR} > $D/sim$s.log 2>&1 &
  PIDS="$PIDS $!"
  DIRS+=(--kubeconfig-dir $D/sim$s/kubeconfigs)
done
trap 'kill $PIDS 2>/dev/null' EXIT
for s in $(seq 0 $((SIMS - 1))); do
  until grep -q "serving on" $D/sim$s.log; do sleep 0.5; done
done
printf '[engine]\nreport_interval = "%s"\n' "${REPORT_INTERVAL:-60s}" > $D/collect.toml
for i in $(seq 1 "$COLLECTORS"); do
  FLUXFLEET_CONFIG=$D/collect.toml $B collect --nats $URL "${DIRS[@]}" --id c$i --ttl "${TTL:-6s}" \
    ${COLLECT_MODE:+--watch-mode $COLLECT_MODE} > $D/c$i.log 2>&1 &
  PIDS="$PIDS $!"
done
started=$(date +%s)
complete() {
  local out
  out=$($B get --nats $URL --summary -o json --timeout 60s --watch-mode "${CHECK_MODE:-all}" 2>/dev/null) && [ -n "$out" ] &&
    echo "$out" | jq -e --argjson n "$N" --argjson o "$((N * OBJECTS))" \
      '(.fleet.states.live // 0) + (.fleet.states.summary // 0) == $n and ([.fleet.objects[]] | add) == $o' > /dev/null
}
until complete; do sleep $((2 + N / 10000)); done
echo "$COLLECTORS collectors: $N clusters × $OBJECTS objects complete on the bus after $(( $(date +%s) - started )) s"
if [ -n "${HOLD:-}" ]; then
  touch $D/ready
  until [ -e $D/stop ]; do sleep 5; done
fi
for i in $(seq 1 "$COLLECTORS"); do
  echo "collector c$i: $(grep VmHWM /proc/$(pgrep -f "id c$i ")/status 2>/dev/null | awk '{print $2/1024 " MiB peak"}')"
done
for mode in ${MODES-all summary}; do
  for run in 1 2 3; do
    /usr/bin/time -f "%e s, %M KiB peak" -o $D/time $B get --nats $URL --summary -o json \
      --timeout 60s --watch-mode $mode > $D/out.json 2> $D/err
    clusters=$(jq '.fleet.clusters' $D/out.json)
    objects=$(jq '[.fleet.objects[]] | add' $D/out.json)
    echo "get --summary --watch-mode $mode (run $run): $(cat $D/time) — $clusters clusters, $objects objects counted"
  done
done
if [ "${OPEN:-0}" -gt 0 ]; then
  cargo bench -q --bench fleet_scale -- --nats $URL --watch-mode "${CHECK_MODE:-summary}" \
    --open "$OPEN" 2>/dev/null | grep -E "^(opened|complete)"
fi

# Many readers at once (READERS=20): each one's time, and the CPU the nats-server and the
# collectors spent while they read.
if [ "${READERS:-0}" -gt 0 ]; then
  cpu() { awk '{print $14 + $15}' /proc/$1/stat; }
  nats=$(pgrep -f "nats-server -js -a 127.0.0.1 -p $PORT")
  collectors=$(pgrep -f "fluxfleet collect --nats $URL")
  n0=$(cpu $nats); c0=0; for c in $collectors; do c0=$((c0 + $(cpu $c))); done
  begun=$(date +%s.%N)
  for r in $(seq 1 "$READERS"); do
    /usr/bin/time -f "%e %M" -o $D/reader$r $B get --nats $URL --summary -o json --timeout 120s \
      --watch-mode ${READ_MODE:-all} > $D/reader$r.json 2>/dev/null &
  done
  wait $(jobs -p | tail -n "$READERS")
  took=$(echo "$(date +%s.%N) - $begun" | bc)
  n1=$(cpu $nats); c1=0; for c in $collectors; do c1=$((c1 + $(cpu $c))); done
  slowest=$(cat $D/reader*[0-9] | sort -n | tail -1)
  complete=$(for r in $(seq 1 "$READERS"); do jq '.fleet.clusters' $D/reader$r.json; done | grep -c "^$N$")
  echo "$READERS readers at once (--watch-mode ${READ_MODE:-all}): all done in $took s; slowest $slowest (s, KiB peak); $complete of $READERS saw all $N clusters; nats-server $(( (n1 - n0) * 10 )) ms CPU, collectors $(( (c1 - c0) * 10 )) ms CPU"
fi

# A collector killed (HANDOVER=1): the time until every cluster is watched again, as the
# simulators count open watches (`/sim/stats`). Summarized clusters hold no watch between looks:
# with COLLECT_MODE=summary the takeover is waited for (three ttls), not counted. Then the
# memory of the collectors that took the clusters over.
if [ "${HANDOVER:-0}" = 1 ] && [ "${COLLECT_MODE:-}" = summary ]; then
  kill -9 "$(pgrep -f "id c$COLLECTORS ")"
  t=${TTL:-6s}
  sleep $((3 * ${t%s}))
  echo "collector c$COLLECTORS killed, $((3 * ${t%s})) s waited"
elif [ "${HANDOVER:-0}" = 1 ]; then
  unwatched() {
    local n=0 s url token
    for s in $(seq 0 $((SIMS - 1))); do
      url=$(grep -o 'https://[0-9.:]*' $D/sim$s.log | head -1)
      token=$(cat $D/sim$s/sim-token)
      n=$((n + $(curl -sk -H "Authorization: Bearer $token" "$url/sim/stats" |
        jq '[.clusters | to_entries[] | select(.key != "management" and .value.openWatches == 0)] | length')))
    done
    echo $n
  }
  victim=$(pgrep -f "id c$COLLECTORS ")
  killed=$(date +%s.%N)
  kill -9 "$victim"
  seen=0
  while true; do
    n=$(unwatched)
    [ "$n" -gt "$seen" ] && seen=$n
    if [ "$seen" -gt 0 ] && [ "$n" -eq 0 ]; then break; fi
    sleep 1
  done
  echo "($seen clusters were left unwatched at most)"
  echo "collector c$COLLECTORS killed: every cluster watched again after $(echo "$(date +%s.%N) - $killed" | bc) s (ttl ${TTL:-6s})"
fi
if [ "${HANDOVER:-0}" = 1 ]; then
  for i in $(seq 1 $((COLLECTORS - 1))); do
    echo "collector c$i after the takeover: $(grep -E 'VmHWM|VmRSS' /proc/$(pgrep -f "id c$i ")/status 2>/dev/null | awk '{printf "%s %.0f MiB ", $1, $2/1024}')"
  done
fi
