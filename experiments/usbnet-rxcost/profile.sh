#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# profile.sh OUT_DIR [REPS] - issue 33's profiles: where the guest's cycles
# go while it receives on the usb-gadget loop (super speed, bus uncapped,
# -P 2, 8 s, tcg-icount), in REPS (default 1) interleaved triples: stock
# (the kernel's usbnet and cdc_ncm), ours (the series, OURS_MODS, default
# kernel/usbnet/out/KVER) and frags (the series plus the staged frags
# patches, FRAGS_MODS: a modules directory built by net-next/check.sh with
# SERIES holding patches/7.x 0001-0008 and staging/7.x-frags, with ours'
# dummy_hcd.ko copied in). Each boot runs 'lab vm --profile'. KVER
# (default 7.3.4+deb13-amd64), STOCK_BUS (default
# kernel/usbnet/out/stock-lab-KVER), LABVM_ARGS as threaded.sh's. Write
# OUT_DIR/PLAN.md before running. Tables: experiments/usbnet-rxcost.
set -u
out=${1:?usage: profile.sh OUT_DIR [REPS]}
n=${2:-1}
ws=${WIRESPEED:-./wirespeed}
kver=${KVER:-7.3.4+deb13-amd64}
ours=${OURS_MODS:-kernel/usbnet/out/$kver}
frags=${FRAGS_MODS:?give FRAGS_MODS, the series plus staging/7.x-frags built for KVER}
stockbus=${STOCK_BUS:-kernel/usbnet/out/stock-lab-$kver}
accel=tcg-icount
profile=--profile
[ -f "$frags/dummy_hcd.ko" ] || { echo "profile.sh: $frags has no dummy_hcd.ko: copy ours' in" >&2; exit 2; }
stockargs=
[ -d "$stockbus" ] && stockargs="--modules-dir $stockbus"
mkdir -p "$out"
# shellcheck source=experiments/usbnet-rxcost/lab-run.sh
. "$(dirname "$0")/lab-run.sh"
i=1
while [ "$i" -le "$n" ]; do
	# shellcheck disable=SC2086 # empty or two words
	run "stock-$i" $stockargs
	run "ours-$i" --modules-dir "$ours"
	run "frags-$i" --modules-dir "$frags"
	i=$((i + 1))
done
echo "done: $out" >&2
