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
profile=
stockargs=
[ -d "$stockbus" ] && stockargs="--modules-dir $stockbus"
mkdir -p "$out"
# shellcheck source=experiments/usbnet-rxcost/lab-run.sh
. "$(dirname "$0")/lab-run.sh"
i=1
while [ "$i" -le "$n" ]; do
	# shellcheck disable=SC2086 # empty or two words
	run "stock-$i" $stockargs
	run "softirq-$i" --modules-dir "$ours" --threaded off
	run "threaded-$i" --modules-dir "$ours" --threaded on
	i=$((i + 1))
done
echo "done: $out" >&2
