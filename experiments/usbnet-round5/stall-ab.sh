#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# stall-ab.sh OUT N: the 7.3.4 stall's mechanism put to the test. The
# guest sees QEMU TCG's hypervisor CPUID bit, so its spinlocks take
# virt_spin_lock(), an unfair test-and-set loop, instead of the queued,
# fair slow path; under -icount, single-threaded TCG runs one vCPU at a
# time and ends a vCPU's turn when it reprograms a timer (which hrtimer
# code does holding its base lock) or executes pause. If that is the
# stall, clearing the bit (clearcpuid=hypervisor) removes it. N
# usbnet-stress boots (12 cycles, the kernel's own usbnet, tcg-icount)
# each way, interleaved: default-I, then fair-I.
#   sudo experiments/usbnet-round5/stall-ab.sh DIR 4
set -eu
out=${1:?usage: stall-ab.sh OUT_DIR N}
n=${2:?usage: stall-ab.sh OUT_DIR N}
ws=${WIRESPEED:-./wirespeed}
kver=7.3.4+deb13-amd64
stock=${STOCK_MODS:-kernel/usbnet/out/stock-lab-$kver}
[ -f "$stock/dummy_hcd.ko" ] || { echo "no $stock/dummy_hcd.ko: sudo make -C kernel/usbnet/net-next lab-modules-7.x" >&2; exit 2; }
mkdir -p "$out"
boot() { # NAME [APPEND]
	[ ! -f "$out/$1/vm.json" ] || return 0
	mkdir -p "$out/$1"
	echo "== $1 ${2:-} $(date -u +%T)" >>"$out/runs.txt"
	if "$ws" lab vm usbnet-stress --cycles 12 --kernel-version "$kver" --accel tcg-icount --timeout 12m \
		--modules-dir "$stock" ${2:+--append "$2"} --out "$out/$1" >"$out/$1.txt" 2>&1; then
		echo "   $1 ok $(date -u +%T)" >>"$out/runs.txt"
	else
		echo "   $1 FAILED $(date -u +%T): $(grep -m1 -o 'RCU stall\|soft lockup\|timed out' "$out/$1.txt" || tail -n 1 "$out/$1.txt")" >>"$out/runs.txt"
	fi
}
i=1
while [ "$i" -le "$n" ]; do
	boot "default-$i"
	boot "fair-$i" clearcpuid=hypervisor
	i=$((i + 1))
done
echo "done: $out" >&2
