#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# doctor in the host lab, before and after fixing by hand (docs/results.md):
# a veth receiver with GRO off (netif_rx backlog), RPS off, sender and
# receiver pinned to CPU0, observed under iperf3 load; then GRO on and RPS
# on CPU1, the same load, observed again. Writes OUT/before.json and
# OUT/after.json (doctor --json). Needs root, iperf3 and a built ./wirespeed.
#   experiments/doctorlive/doctor-hostlab.sh [OUT]   (default experiments/doctorlive/data/hostlab)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-experiments/doctorlive/data/hostlab}
ws=${WIRESPEED:-./wirespeed}
name=doc$$
snd=ws-lab-$name-s rcv=ws-lab-$name-r
mkdir -p "$out"
trap '$ws lab down $name >/dev/null 2>&1 || true' EXIT INT TERM
$ws lab up --name $name --gro off --sender-offloads off --pin-sender 0 --pin-receiver 0 >/dev/null
observe() { # $1: output file
	ip netns exec $snd taskset -c 0 iperf3 -c 198.18.0.2 -t 30 -P 2 >/dev/null 2>&1 &
	local load=$!
	sleep 2
	ip netns exec "$rcv" "$ws" doctor --observe 5s --json ws-rcv >"$1"
	kill $load 2>/dev/null || true
	wait $load 2>/dev/null || true
}
observe "$out/before.json"
ip netns exec $rcv ethtool -K ws-rcv gro on
echo 2 | ip netns exec $rcv tee /sys/class/net/ws-rcv/queues/rx-0/rps_cpus >/dev/null
observe "$out/after.json"
for f in before after; do
	printf '%s: ' $f
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(", ".join("%s (%s)" % (x["id"], x["severity"]) for x in r["findings"]) or "no findings", "| NET_RX share per CPU", r["source"].get("net_rx_share"))' "$out/$f.json"
done
