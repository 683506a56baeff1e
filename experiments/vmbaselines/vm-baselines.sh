#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vm-baselines.sh [OUT_DIR] [REPEAT] - the stock-driver baselines of
# docs/results.md ("VM lab baselines"): every VM lab scenario, both
# directions, REPEAT boots each for usb-gadget and usb-nic (default 3).
# Needs root; takes about 10 minutes with TCG on 2 host CPUs.
set -u
out=${1:-vm-baselines-$(date +%Y%m%d-%H%M%S)}
n=${2:-3}
ws=${WIRESPEED:-./wirespeed}
mkdir -p "$out"
cmd="lab vm"
run() {
	name=$1; shift
	echo "== $name: wirespeed $cmd $*" | tee -a "$out/runs.txt"
	# shellcheck disable=SC2086
	if "$ws" $cmd "$@" --out "$out/$name" > "$out/$name.txt" 2>&1; then
		echo "   ok" | tee -a "$out/runs.txt"
	else
		echo "   FAILED (exit $?): $(tail -n 1 "$out/$name.txt")" | tee -a "$out/runs.txt"
	fi
}
i=1
while [ "$i" -le "$n" ]; do
	run "usb-gadget-$i" usb-gadget -t 10s -P 2
	run "usb-nic-$i" usb-nic -t 10s -P 2
	i=$((i + 1))
done
run usb-gadget-raw usb-gadget -t 10s -P 2 --raw-iperf3
run bql-high bql -t 10s --speed high --direction send
run bql-full bql -t 10s --speed full --direction send
run wireguard-threaded-on wireguard -t 10s --tunnels 4 --threaded on
run wireguard-threaded-off wireguard -t 10s --tunnels 4 --threaded off
echo "results in $out"
python3 "$(dirname "$0")/vm-summary.py" "$out"/* | tee "$out/summary.txt"
