#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# prefix-runs.sh OUT PREFIXES_DIR: every prefix of a series run in the lab,
# not only built: for each PREFIXES_DIR/at-N (check.sh's PREFIX_OUT: the
# prefix's usbnet, cdc_ether, cdc_ncm, cdc_mbim, ax88179_178a and the lab's
# dummy_hcd), a short usbnet-stress (CYCLES, 12: every step twice) and a
# receive bench through the NCM gadget loop, on Debian's 7.3.4 under
# tcg-icount (the guest's clock counts its instructions: host load changes
# wall time only).
#   sudo ARCHS=amd64 SERIES=$PWD/kernel/usbnet/patches/7.x MODULES_OUT=/tmp/p/all \
#        PREFIX_OUT=/tmp/p LAB_BUS=1 kernel/usbnet/net-next/check.sh
#   sudo experiments/usbnet-round5/prefix-runs.sh DIR /tmp/p/7.3.4+deb13-amd64
# KVER picks the guest kernel (--kernel-version), or LABVM_ARGS gives one
# of the lab's own (--kernel IMG --modules DIR); APPEND adds to every
# boot's kernel command line (clearcpuid=hypervisor: see RERUN). ACCEL
# (tcg-icount) picks the lab's --accel: Debian's 6.1 kernels do not boot
# under -icount, so their prefixes run with ACCEL=tcg-single (real time).
# RERUN=1: instead, rerun each stress boot whose console shows the 7.3.4
# stall (an RCU stall report) once, as at-N-stress-rerun, with the kernel
# command line RERUN_APPEND (clearcpuid=hypervisor: the guest's spinlocks
# take the fair queued path, which stall-ab.sh shows ends the stall).
set -eu
out=${1:?usage: prefix-runs.sh OUT_DIR PREFIXES_DIR}
pre=${2:?usage: prefix-runs.sh OUT_DIR PREFIXES_DIR}
ws=${WIRESPEED:-./wirespeed}
kver=${KVER:-7.3.4}
cycles=${CYCLES:-12}
ls "$pre"/at-*/dummy_hcd.ko >/dev/null 2>&1 || { echo "no $pre/at-N/dummy_hcd.ko: run check.sh with PREFIX_OUT, MODULES_OUT and LAB_BUS" >&2; exit 2; }
mkdir -p "$out"
run() { # NAME ARGS...
	name=$1
	shift
	mkdir -p "$out/$name"
	echo "== $name: wirespeed lab vm $* $(date -u +%T)" >>"$out/runs.txt"
	# shellcheck disable=SC2086 # LABVM_ARGS is a list of flags
	if "$ws" lab vm "$@" ${LABVM_ARGS:---kernel-version "$kver"} --accel "${ACCEL:-tcg-icount}" --timeout 12m \
		${APPEND:+--append "$APPEND"} --out "$out/$name" >"$out/$name.txt" 2>&1; then
		echo "   ok $(date -u +%T)" >>"$out/runs.txt"
	else
		echo "   FAILED $(date -u +%T): $(tail -n 1 "$out/$name.txt")" >>"$out/runs.txt"
	fi
}
if [ -n "${RERUN:-}" ]; then
	for d in "$pre"/at-*; do
		n=$(basename "$d")
		grep -q "detected stalls on CPUs" "$out/$n-stress/console.log" 2>/dev/null || continue
		[ ! -f "$out/$n-stress-rerun/vm.json" ] || continue
		run "$n-stress-rerun" usbnet-stress --cycles "$cycles" --modules-dir "$d" --append "${RERUN_APPEND:-clearcpuid=hypervisor}"
	done
	echo "done: $out" >&2
	exit 0
fi
for d in "$pre"/at-*; do
	n=$(basename "$d")
	cp "$d/SOURCE" "$out/$n.source"
	run "$n-stress" usbnet-stress --cycles "$cycles" --modules-dir "$d"
	run "$n-rx" usb-gadget -t 8s -P 2 --speed super --direction receive --modules-dir "$d"
done
echo "done: $out" >&2
