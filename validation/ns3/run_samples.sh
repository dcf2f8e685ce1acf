#!/usr/bin/env bash
# Regenerates sample-output/*.json (scenarios a-d of the aqmlab ns-3 reference).
# Each JSON's "argv" field holds the exact command line; sample-output/commands.txt lists them too.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$("$HERE/build.sh")"
OUT="$HERE/sample-output"
mkdir -p "$OUT"
cd "$HERE"
B=build/dumbbell
COMMON="--bottleneckRate=10Mbps --bottleneckDelay=20 --accessRate=100Mbps --rxAccessDelays=1 --mss=1448 --delAckCount=2 --duration=60 --warmup=10 --startMode=uniform --startSpread=1 --startSeed=1 --seed=1 --run=1"
RED="--queue=red --queueLimit=100 --redMinTh=5 --redMaxTh=15 --redMaxP=0.1 --redQW=0.002 --redGentle=false --redWait=true"
FIFO="--queue=fifo --queueLimit=100"
declare -A CMDS=(
  [a_red_10flows]="$B --nFlows=10 --accessDelays=1 $RED $COMMON"
  [b_fifo_10flows]="$B --nFlows=10 --accessDelays=1 $FIFO $COMMON"
  [c_fifo_unequal_rtt]="$B --nFlows=10 --accessDelays=1,3,5,7,9,11,13,15,17,19 $FIFO $COMMON"
  [d_red_5tcp_udp]="$B --nFlows=5 --accessDelays=1 --nUdp=1 --udpRate=3Mbps --udpPktSize=1000 --udpStart=0 --udpAccessDelay=1 $RED $COMMON"
)
: > "$OUT/commands.txt"
for name in a_red_10flows b_fifo_10flows c_fifo_unequal_rtt d_red_5tcp_udp; do
  cmd="${CMDS[$name]}"
  echo "# $name  (run from validation/ns3/)" >> "$OUT/commands.txt"
  echo "$cmd > sample-output/$name.json" >> "$OUT/commands.txt"
  echo "[run_samples] $name" >&2
  /usr/bin/time -f "[run_samples] $name: %e s elapsed (process), %M KB max RSS" $cmd > "$OUT/$name.json"
done
