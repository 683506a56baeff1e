#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# devlab-hostile.sh OUT_DIR MODEL... - issue 41's hostile mode: for each
# model (ncm, mbim), a receive bench through the emulated adapter with
# BAD (default 150) malformed aggregates per 1000 for T (default 10s), 5 stalled and 5 slow
# answers per 1000, seed SEED (default 7), once with stock usbnet and once
# with ours (OURS_MODS). A boot passes when the console guards saw no
# KASAN report, WARNING, BUG, Oops or lockup and the bench completed
# (traffic went on); OUT/NAME/usbdev.json counts what was sent malformed
# by kind, facts.txt the guest's rx_errors. LABVM_ARGS are added to every
# boot (a KASAN kernel: --kernel IMG --modules DIR, with OURS_MODS built for
# it). Write OUT_DIR/PLAN.md before running.
set -u
out=${1:?usage: devlab-hostile.sh OUT_DIR MODEL...}
shift
ws=${WIRESPEED:-./wirespeed}
ours=${OURS_MODS:-kernel/usbnet/out/7.3.4+deb13-amd64}
dev="--bad ${BAD:-150} --stall 5 --slow 5 --seed ${SEED:-7}"
mkdir -p "$out"
run() { # NAME ARGS...
	name=$1
	shift
	echo "== $name: wirespeed lab vm $* ${LABVM_ARGS:-}" >> "$out/runs.txt"
	# shellcheck disable=SC2086 # LABVM_ARGS is a list of flags
	if "$ws" lab vm "$@" ${LABVM_ARGS:-} --timeout "${TIMEOUT:-10m}" --out "$out/$name" > "$out/$name.txt" 2>&1; then
		echo "   ok" >> "$out/runs.txt"
	else
		echo "   FAILED: $(tail -n 1 "$out/$name.txt")" >> "$out/runs.txt"
	fi
}
for m in "$@"; do
	run "$m-stock" usbdev --device "$m" --device-args "$dev" -t "${T:-10s}" -P 2 --direction receive
	run "$m-ours" usbdev --device "$m" --device-args "$dev" -t "${T:-10s}" -P 2 --direction receive --modules-dir "$ours"
done
