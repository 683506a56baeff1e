#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# threaded.sh OUT_DIR [REPS] - issue 33's threaded vs softirq polling: the
# usb-gadget loop at super speed, bus uncapped, receiving (-P 2), in REPS
# (default 3) interleaved triples: stock (the kernel's own usbnet), ours
# with the poll in softirq (--threaded off) and ours with the poll in its
# own kernel thread (--threaded on). KVER (default 7.3.4+deb13-amd64) is
# the guest kernel, OURS_MODS the series' modules (default
# kernel/usbnet/out/KVER), STOCK_BUS the stock side's modules directory
# when it exists (default kernel/usbnet/out/stock-lab-KVER: the lab's
# dummy_hcd, uncapped, so both sides run the same bus), ACCEL (default
# tcg-icount); LABVM_ARGS are added to every boot (e.g. '--arch arm64').
# Write OUT_DIR/PLAN.md before running. Tables: experiments/usbnet-rxcost.
set -u
out=${1:?usage: threaded.sh OUT_DIR [REPS]}
n=${2:-3}
ws=${WIRESPEED:-./wirespeed}
kver=${KVER:-7.3.4+deb13-amd64}
ours=${OURS_MODS:-kernel/usbnet/out/$kver}
stockbus=${STOCK_BUS:-kernel/usbnet/out/stock-lab-$kver}
accel=${ACCEL:-tcg-icount}
stockargs=
[ -d "$stockbus" ] && stockargs="--modules-dir $stockbus"
mkdir -p "$out"
run() { # NAME ARGS...
	name=$1
	shift
	mkdir -p "$out/$name"
	{ date -u +%FT%TZ; uptime; ps -eo pcpu,pid,comm --sort=-pcpu | head -n 8; } >"$out/$name/host-top.txt"
	echo "== $name: wirespeed lab vm $* ${LABVM_ARGS:-}" >>"$out/runs.txt"
	s=$(date +%s)
	# shellcheck disable=SC2086 # LABVM_ARGS is a list of flags
	if "$ws" lab vm usb-gadget -t 8s -P 2 --speed super --direction receive --accel "$accel" \
		--kernel-version "$kver" "$@" ${LABVM_ARGS:-} --out "$out/$name" >"$out/$name.txt" 2>&1; then
		echo "   ok in $(($(date +%s) - s)) s" >>"$out/runs.txt"
	else
		echo "   FAILED: $(tail -n 1 "$out/$name.txt")" >>"$out/runs.txt"
	fi
}
i=1
while [ "$i" -le "$n" ]; do
	# shellcheck disable=SC2086 # empty or two words
	run "stock-$i" $stockargs
	run "softirq-$i" --modules-dir "$ours" --threaded off
	run "threaded-$i" --modules-dir "$ours" --threaded on
	i=$((i + 1))
done
echo "done: $out" >&2
