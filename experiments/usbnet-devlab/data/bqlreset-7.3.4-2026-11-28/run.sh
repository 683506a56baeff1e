#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The runs of PLAN.md: 5 rounds of stock, fix, ours (root; WS is the wirespeed binary).
set -u
D=$(cd "$(dirname "$0")" && pwd)
WS=${WS:-wirespeed}
FIX=${FIX:-/work/kt/out-netfix/7.3.4+deb13-amd64}
OURS=${OURS:-/work/main/kernel/usbnet/out/7.3.4+deb13-amd64}
for r in 1 2 3 4 5; do
	for side in stock fix ours; do
		mods=""
		[ "$side" = fix ] && mods="--modules-dir $FIX"
		[ "$side" = ours ] && mods="--modules-dir $OURS"
		out="$D/r$r-$side"
		args="usbdev-stress --device aqc111 --cycles 6 --steps loadflap --kernel-version 7.3.4 --timeout 10m $mods"
		dev="--slow-out 20 --max-delay 1s --replug-every 8s --seed $r"
		echo "== r$r-$side: lab vm $args --device-args '$dev'" >> "$D/runs.txt"
		# shellcheck disable=SC2086 # $args are words
		if flock /work/kt/vm.lock "$WS" lab vm $args --device-args "$dev" --out "$out" > "$out.txt" 2>&1; then
			echo "   ok" >> "$D/runs.txt"
		else
			echo "   FAILED: $(grep -m1 'GUARD\|FAILED' "$out.txt")" >> "$D/runs.txt"
		fi
		mv "$out.txt" "$out/RUN.txt"
		rm -f "$out/host-iperf3.log" "$out/qemu-stderr.txt" "$out/interrupts-end.txt"
	done
done
