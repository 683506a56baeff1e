#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# prefix-repeat.sh OUT N DIR...: a failure rate, not one run. N rounds; in
# each, one 12-cycle usbnet-stress boot per modules DIR (a prefix's at-N
# from check.sh's PREFIX_OUT or build.sh --series-upto, or any --modules-dir),
# interleaved so host load falls on every side alike. Boots are named
# BASENAME-ROUND, or PARENT-BASENAME-ROUND for every DIR when two DIRs share
# a basename (two builds' at-5); a boot whose vm.json exists is not run
# again (a stopped run resumes). KVER (6.12.117), ACCEL (tcg-icount), APPEND and CYCLES (12)
# as in prefix-runs.sh.
#   sudo KVER=6.12.117 APPEND=clearcpuid=hypervisor \
#        experiments/usbnet-round5/prefix-repeat.sh DIR 8 /work/p612/at-2 /work/p612/at-3
set -eu
out=${1:?usage: prefix-repeat.sh OUT_DIR N DIR...}
n=${2:?usage: prefix-repeat.sh OUT_DIR N DIR...}
shift 2
[ $# -gt 0 ] || { echo "usage: prefix-repeat.sh OUT_DIR N DIR..." >&2; exit 2; }
ws=${WIRESPEED:-./wirespeed}
for d in "$@"; do
	ls "$d"/usbnet.ko "$d"/dummy_hcd.ko >/dev/null 2>&1 || { echo "$d: no usbnet.ko and dummy_hcd.ko (build.sh --lab-bus)" >&2; exit 2; }
done
# side DIR: the name of DIR's boots (see above)
dup=$(for d in "$@"; do basename "$d"; done | sort | uniq -d)
side() {
	if [ -n "$dup" ]; then
		echo "$(basename "$(dirname "$1")")-$(basename "$1")"
	else
		basename "$1"
	fi
}
mkdir -p "$out"
for d in "$@"; do
	[ ! -f "$d/SOURCE" ] || cp "$d/SOURCE" "$out/$(side "$d").source"
done
i=1
while [ "$i" -le "$n" ]; do
	for d in "$@"; do
		name="$(side "$d")-$i"
		[ ! -f "$out/$name/vm.json" ] || continue
		mkdir -p "$out/$name"
		echo "== $name: $d $(date -u +%T)" >>"$out/runs.txt"
		if "$ws" lab vm usbnet-stress --cycles "${CYCLES:-12}" --kernel-version "${KVER:-6.12.117}" \
			--accel "${ACCEL:-tcg-icount}" --timeout 12m --modules-dir "$d" \
			${APPEND:+--append "$APPEND"} --out "$out/$name" >"$out/$name.txt" 2>&1; then
			echo "   ok $(date -u +%T)" >>"$out/runs.txt"
		else
			echo "   FAILED $(date -u +%T): $(grep -m1 -o 'double fault\|BUG: [^ ]*\|RCU stall\|soft lockup\|timed out' "$out/$name/console.log" "$out/$name.txt" 2>/dev/null | head -n 1)" >>"$out/runs.txt"
		fi
	done
	i=$((i + 1))
done
echo "done: $out" >&2
