#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# stall-hunt.sh OUT N: round 2's BQL scenario on Debian's 7.3.4 under
# tcg-icount, N boots with the kernel's own usbnet and N with ours,
# interleaved, in LANES (2) boots at a time, to catch the 7.3.4 stall with
# the lab's monitor dump (monitor-at-stall.txt: every vCPU's registers and
# stack and the lock word, read from QEMU when the RCU stall report shows).
# Under -icount the guest's clock counts its instructions, so boots side by
# side slow each other on the host but not in the guest's time.
#   sudo experiments/usbnet-round5/stall-hunt.sh DIR 15
# STOCK_MODS and OURS_MODS as usbnet-marks.sh (lab-modules-7.x's out/).
set -eu
out=${1:?usage: stall-hunt.sh OUT_DIR N}
n=${2:?usage: stall-hunt.sh OUT_DIR N}
lanes=${LANES:-2}
ws=${WIRESPEED:-./wirespeed}
kver=7.3.4+deb13-amd64
stock=${STOCK_MODS:-kernel/usbnet/out/stock-lab-$kver}
ours=${OURS_MODS:-kernel/usbnet/out/$kver}
for d in "$stock" "$ours"; do
	[ -f "$d/dummy_hcd.ko" ] || { echo "no $d/dummy_hcd.ko: sudo make -C kernel/usbnet/net-next lab-modules-7.x" >&2; exit 2; }
done
mkdir -p "$out"
boot() { # NAME MODS (a boot with its vm.json is done: a rerun goes on)
	[ ! -f "$out/$1/vm.json" ] || return 0
	mkdir -p "$out/$1"
	echo "== $1 (lane $lane) $(date -u +%T)" >>"$out/runs.txt"
	if "$ws" lab vm bql -t 8s -P 2 --speed super --bus-rate 100 --direction send --bench-args '--probe-interval 20ms' \
		--kernel-version "$kver" --accel tcg-icount --timeout 8m --modules-dir "$2" --out "$out/$1" >"$out/$1.txt" 2>&1; then
		echo "   $1 ok $(date -u +%T)" >>"$out/runs.txt"
	else
		echo "   $1 FAILED $(date -u +%T): $(grep -m1 -o 'RCU stall\|soft lockup\|timed out' "$out/$1.txt" || tail -n 1 "$out/$1.txt")" >>"$out/runs.txt"
	fi
}
# lane L takes boots L, L+lanes, ...: stock then ours each
lane=1
while [ "$lane" -le "$lanes" ]; do
	(
		i=$lane
		while [ "$i" -le "$n" ]; do
			boot "bql-stock-$i" "$stock"
			boot "bql-ours-$i" "$ours"
			i=$((i + lanes))
		done
	) &
	lane=$((lane + 1))
done
wait
echo "done: $out ($(grep -c FAILED "$out/runs.txt" || true) failed boots; stalls dumped: $(find "$out" -name monitor-at-stall.txt | wc -l))" >&2
