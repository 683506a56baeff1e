#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usbnet-ab.sh [OUT_DIR] [REPS] - the evidence for kernel/usbnet: stock
# usbnet vs ours in the VM lab, interleaved (stock, ours, ours-softirq,
# stock, ...), REPS boots each (default 5) of usb-gadget and usb-nic (both
# directions) and bql (send, super speed, EF probe under load; stock and
# ours only), bench observing in full mode so the GRO ratio counts
# segments (continuously: --observe-sample 100%). Since issue 12 our build
# polls in softirq by default, so the third variant forces the thread:
# VARIANTS="stock ours ours-threaded" (--threaded on); ours-softirq
# (--threaded off) is the same as ours now. Then the comparisons against
# stock, paired by repetition. The default VARIANTS are "stock ours". For
# the marks on the fixed-rate bus see experiments/usbnet-round2/usbnet-marks.sh. Needs root and
# the modules built (make -C kernel/usbnet KVER=6.12.117+deb12-amd64). Takes about 5 minutes per
# repetition with TCG on 2 host CPUs.
set -u
out=${1:-usbnet-ab-$(date +%Y%m%d-%H%M%S)}
n=${2:-5}
variants=${VARIANTS:-stock ours}
ws=${WIRESPEED:-./wirespeed}
kver=${KVER:-$(find kernel/usbnet/out -mindepth 1 -maxdepth 1 -name '6.*' -printf '%f\n' 2>/dev/null | sort -V | tail -1)}
mods=kernel/usbnet/out/$kver
[ -f "$mods/usbnet.ko" ] || { echo "no $mods/usbnet.ko: run make -C kernel/usbnet KVER=6.12.117+deb12-amd64 first" >&2; exit 1; }
mkdir -p "$out"
run() { # NAME VARIANT ARGS...
	name=$1 variant=$2; shift 2
	case $variant in
	stock) extra="" ;;
	ours) extra="--modules-dir $mods" ;;
	ours-softirq) extra="--modules-dir $mods --threaded off" ;;
	ours-threaded) extra="--modules-dir $mods --threaded on" ;;
	*) echo "unknown variant $variant" >&2; exit 2 ;;
	esac
	echo "== $name: wirespeed lab vm $* $extra" | tee -a "$out/runs.txt"
	# shellcheck disable=SC2086
	if "$ws" lab vm "$@" --kernel-version "$kver" $extra --bench-args '--observe full --observe-sample 100%' --out "$out/$name" > "$out/$name.txt" 2>&1; then
		echo "   ok" | tee -a "$out/runs.txt"
	else
		echo "   FAILED: $(tail -n 1 "$out/$name.txt")" | tee -a "$out/runs.txt"
	fi
}
i=1
while [ "$i" -le "$n" ]; do
	for v in $variants; do
		run "usb-gadget-$v-$i" "$v" usb-gadget -t 8s -P 2
		run "usb-nic-$v-$i" "$v" usb-nic -t 8s -P 2
		case $v in ours-*) ;; *) run "bql-$v-$i" "$v" bql -t 8s --speed super --direction send ;; esac
	done
	i=$((i + 1))
done
list() { # SCENARIO VARIANT FILE -> comma list of the result files that exist
	for f in "$out"/"$1"-"$2"-*/"$3"; do [ -e "$f" ] && echo "$f"; done | sort -V | paste -sd, -
}
for v in $variants; do
	[ "$v" = stock ] && continue
	for s in usb-gadget usb-nic; do
		for d in receive send; do
			echo "=== $s $d: A = stock, B = $v" | tee -a "$out/compare.txt"
			"$ws" compare "$(list $s stock bench-$d.json)" "$(list $s "$v" bench-$d.json)" | tee -a "$out/compare.txt"
		done
	done
done
echo "=== bql send: A = stock, B = ours" | tee -a "$out/compare.txt"
"$ws" compare "$(list bql stock bench-send.json)" "$(list bql ours bench-send.json)" | tee -a "$out/compare.txt"
python3 "$(dirname "$0")/../vmbaselines/vm-summary.py" "$out"/*/ | tee "$out/summary.txt"
python3 "$(dirname "$0")/usbnet-ab-summary.py" "$out" | tee "$out/pairs.txt"
