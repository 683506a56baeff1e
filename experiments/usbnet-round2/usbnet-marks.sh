#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usbnet-marks.sh OUT_DIR [REPS] - issue 12's marks for kernel/usbnet on the
# lab's fixed-rate USB bus: stock usbnet vs ours, interleaved (stock, ours,
# stock, ...), REPS pairs (default 5) of
#   bql-*:   bql at super speed, --bus-rate 100, 2 TCP streams sending, EF
#            probe (wirespeed bench's ICMP probe) every 20 ms, prio qdisc;
#   rx-*:    usb-gadget at super speed, --bus-rate 100, receiving (-P 2).
# Both variants run with the lab's rate-capped dummy_hcd (build.sh
# --lab-bus): STOCK_MODS holds it with the stock usbnet (build.sh
# --no-series --lab-bus), OURS_MODS with ours. ACCEL (default tcg-icount)
# SPEED (default super), PARTS (default "bql rx") and TIMEOUT (per boot,
# default 8m) can be changed. KVER (default 6.12.117+deb12-amd64; Debian 12's
# default kernel is 6.1.0-N-amd64) is the guest kernel the lab boots, and
# names the default module directories; KERNEL_ARGS replaces
# `--kernel-version KVER` for a kernel the lab does not fetch (the lab's own
# 6.18: KERNEL_ARGS='--kernel BZIMAGE --modules MODS'). Before each run the host's top
# CPU users go to NAME/host-top.txt. Tables: experiments/usbnet-round2 (Go).
set -u
out=${1:?usage: usbnet-marks.sh OUT_DIR [REPS]}
n=${2:-5}
ws=${WIRESPEED:-./wirespeed}
kver=${KVER:-6.12.117+deb12-amd64}
stock=${STOCK_MODS:-kernel/usbnet/out/stock-lab-$kver}
ours=${OURS_MODS:-kernel/usbnet/out/$kver}
kargs=${KERNEL_ARGS:---kernel-version $kver}
accel=${ACCEL:-tcg-icount}
speed=${SPEED:-super}
rate=${RATE:-100}
for d in "$stock" "$ours"; do
	[ -f "$d/dummy_hcd.ko" ] || { echo "no $d/dummy_hcd.ko: build it with kernel/usbnet/build.sh --lab-bus (--no-series for stock)" >&2; exit 2; }
done
mkdir -p "$out"
run() { # NAME MODS ARGS...
	name=$1 mods=$2; shift 2
	mkdir -p "$out/$name"
	{ date -u +%FT%TZ; uptime; ps -eo pcpu,pid,comm --sort=-pcpu | head -n 8; } > "$out/$name/host-top.txt"
	echo "== $name: wirespeed lab vm $* --modules-dir $mods" | tee -a "$out/runs.txt"
	start=$(date +%s)
	# shellcheck disable=SC2086 # KERNEL_ARGS is a list of flags
	if "$ws" lab vm "$@" $kargs --accel "$accel" --timeout "${TIMEOUT:-8m}" --modules-dir "$mods" --out "$out/$name" > "$out/$name.txt" 2>&1; then
		echo "   ok in $(($(date +%s) - start)) s" | tee -a "$out/runs.txt"
	else
		echo "   FAILED: $(tail -n 1 "$out/$name.txt")" | tee -a "$out/runs.txt"
	fi
}
# all bql pairs first, then the receive pairs
for s in ${PARTS:-bql rx}; do
	i=1
	while [ "$i" -le "$n" ]; do
		for v in stock ours; do
			eval "mods=\$$v"
			case $s in
			bql) run "bql-$v-$i" "$mods" bql -t 8s -P 2 --speed "$speed" --bus-rate "$rate" --direction send \
				--bench-args '--probe-interval 20ms' ;;
			rx) run "rx-$v-$i" "$mods" usb-gadget -t 8s -P 2 --speed "$speed" --bus-rate "$rate" --direction receive ;;
			esac
		done
		i=$((i + 1))
	done
done
echo "done: $out. Its tables: move it under experiments/usbnet-round2/data/ (or usbnet-round3/) and run make experiments-update" >&2
