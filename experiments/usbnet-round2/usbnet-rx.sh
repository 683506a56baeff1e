#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usbnet-rx.sh OUT_DIR PHASE... - issue 12's receive figures, stock usbnet vs
# ours, 5 interleaved pairs (REPS) per phase:
#   nic-icount     usb-nic receiving from iperf3 on the host, --accel tcg-icount:
#                  the guest's busy CPU is the receiver's alone, in instructions;
#   gadget-icount  usb-gadget at super speed, bus uncapped, tcg-icount: capacity;
#   nic-tcg        usb-nic, multi-threaded TCG: the link rate in real time;
#   gadget-tcg     usb-gadget at super speed, bus uncapped, multi-threaded TCG:
#                  capacity in real time (a guest with no clock source that
#                  varies - the arm64 raspi3b - repeats itself exactly under
#                  -icount, so its pairs must run in real time to differ).
# OURS_MODS: build.sh --lab-bus of the series; STOCK_BUS: build.sh --no-series
# --lab-bus (the gadget's stock side; usb-nic's stock is Debian's own modules,
# and so is the gadget's when STOCK_BUS does not exist - uncapped, the stock
# dummy_hcd serves both sides). LABVM_ARGS are added to every boot, e.g.
# LABVM_ARGS='--arch arm64' KVER=6.12.117+deb12-arm64 for the Pi 3-class guest.
# Before each boot the host's top CPU users go to NAME/host-top.txt. Write the
# validity rules to OUT_DIR/PLAN.md before running. Summary:
#   experiments/usbnet-round2 (Go) computes the tables from OUT_DIR under data/
set -u
out=${1:?usage: usbnet-rx.sh OUT_DIR PHASE...}
shift
ws=${WIRESPEED:-./wirespeed}
kver=${KVER:-6.12.117+deb12-amd64}
ours=${OURS_MODS:-kernel/usbnet/out/$kver}
stockbus=${STOCK_BUS:-kernel/usbnet/out/stock-lab-$kver}
n=${REPS:-5}
stockgadget=
[ -d "$stockbus" ] && stockgadget="--modules-dir $stockbus"
mkdir -p "$out"
# Say which USB bus each side runs on: a STOCK_BUS directory left by
# lab-modules-7.x or build.sh --lab-bus puts the lab's dummy_hcd under the
# stock side, and a dummy_hcd.ko in OURS_MODS under ours.
bus_of() { [ -f "$1/dummy_hcd.ko" ] && echo "the lab's dummy_hcd from $1" || echo "the guest's own dummy_hcd"; }
if [ -n "$stockgadget" ]; then sbus=$(bus_of "$stockbus"); else sbus="the guest's own dummy_hcd"; fi
echo "usbnet-rx.sh: usb-gadget's stock side on $sbus; ours on $(bus_of "$ours")" | tee -a "$out/runs.txt" >&2
run() { # NAME ARGS...
	name=$1
	shift
	mkdir -p "$out/$name"
	{ date -u +%FT%TZ; uptime; ps -eo pcpu,pid,comm --sort=-pcpu | head -n 8; } > "$out/$name/host-top.txt"
	echo "== $name: wirespeed lab vm $* ${LABVM_ARGS:-}" >> "$out/runs.txt"
	s=$(date +%s)
	# shellcheck disable=SC2086 # LABVM_ARGS is a list of flags
	if "$ws" lab vm "$@" --kernel-version "$kver" ${LABVM_ARGS:-} --out "$out/$name" > "$out/$name.txt" 2>&1; then
		echo "   ok in $(($(date +%s) - s)) s" >> "$out/runs.txt"
	else
		echo "   FAILED: $(tail -n 1 "$out/$name.txt")" >> "$out/runs.txt"
	fi
}
for ph in "$@"; do
	i=1
	while [ "$i" -le "$n" ]; do
		case $ph in
		nic-icount)
			run "nic-icount-stock-$i" usb-nic -t 8s -P 2 --direction receive --accel tcg-icount
			run "nic-icount-ours-$i" usb-nic -t 8s -P 2 --direction receive --accel tcg-icount --modules-dir "$ours" ;;
		gadget-icount)
			# shellcheck disable=SC2086 # empty or two words
			run "gadget-icount-stock-$i" usb-gadget -t 8s -P 2 --speed super --direction receive --accel tcg-icount $stockgadget
			run "gadget-icount-ours-$i" usb-gadget -t 8s -P 2 --speed super --direction receive --accel tcg-icount --modules-dir "$ours" ;;
		nic-tcg)
			run "nic-tcg-stock-$i" usb-nic -t 8s -P 2 --direction receive --accel tcg
			run "nic-tcg-ours-$i" usb-nic -t 8s -P 2 --direction receive --accel tcg --modules-dir "$ours" ;;
		gadget-tcg)
			# shellcheck disable=SC2086 # empty or two words
			run "gadget-tcg-stock-$i" usb-gadget -t 8s -P 2 --speed super --direction receive --accel tcg $stockgadget
			run "gadget-tcg-ours-$i" usb-gadget -t 8s -P 2 --speed super --direction receive --accel tcg --modules-dir "$ours" ;;
		*) echo "unknown phase $ph: want nic-icount, gadget-icount, nic-tcg or gadget-tcg" >&2; exit 2 ;;
		esac
		i=$((i + 1))
	done
done
