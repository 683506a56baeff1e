#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usbnet-stress-series.sh OUT_DIR RUNS OURS_MODS [LAB_VM_ARGS...] - usbnet-stress,
# RUNS times each, ours (OURS_MODS as --modules-dir) then stock (the
# kernel's own modules), interleaved; every boot's files in OUT_DIR/NAME,
# one line per boot in OUT_DIR/runs.txt, and a summary at the end.
# usbnet and cdc_ncm load with dyndbg=+p, so a failure's dmesg.txt shows
# usbnet's kevents. Example (the arm64 Pi 3-class guest):
#   experiments/arm64-lab/usbnet-stress-series.sh /tmp/stress 3 /var/tmp/a64mods-6.12 --arch arm64
set -u
out=${1:?usage: usbnet-stress-series.sh OUT_DIR RUNS OURS_MODS [LAB_VM_ARGS...]}
runs=${2:?RUNS}
mods=${3:?OURS_MODS}
shift 3
ws=${WIRESPEED:-./wirespeed}
cycles=${CYCLES:-30}
mkdir -p "$out"
i=1
while [ "$i" -le "$runs" ]; do
	for side in ours stock; do
		name=$side-$i
		extra=
		[ "$side" = ours ] && extra="--modules-dir $mods"
		s=$(date +%s)
		# shellcheck disable=SC2086 # extra is empty or two words
		if "$ws" lab vm usbnet-stress --cycles "$cycles" $extra --load 'usbnet dyndbg=+p' --load 'cdc_ncm dyndbg=+p' "$@" \
			--out "$out/$name" > "$out/$name.txt" 2>&1; then
			r=ok
		else
			r="FAILED: $(grep -m1 'stress: FAIL' "$out/$name.txt" || tail -n 1 "$out/$name.txt")"
		fi
		echo "$name $r ($(($(date +%s) - s)) s) $(grep -h '^stress_result=' "$out/$name/facts.txt" 2>/dev/null)" >> "$out/runs.txt"
	done
	i=$((i + 1))
done
cat "$out/runs.txt"
