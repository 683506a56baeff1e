#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# devlab-rx.sh OUT_DIR PHASE... - issue 41's receive figures on the device
# lab: a CDC-NCM adapter emulated on the host (wirespeed lab usbdev, reached
# through QEMU's usb-redir on the guest's xHCI), stock usbnet vs ours,
# REPS (default 5) interleaved pairs per phase, the device unpaced (its
# capacity is what is measured), --accel tcg-icount (the guest's clock
# counts instructions, so host load slows a run but does not change what
# the guest measures; the device process outside runs in real time and is
# so never the guest's limit - its CPU is in each run's usbdev.json):
#   ncm-x86    the pc guest, 2 vCPUs;
#   ncm-virt   the arm64 virt board, 4 vCPUs (GICv2: the xHCI interrupt on
#              CPU0, as on a Pi);
#   ncm-x86-rt the pc guest in real time (--accel tcg-single: one host CPU
#              for the guest, the other for the adapter and iperf3). Under
#              -icount the guest's clock jumps while it idles and the
#              adapter and the host's iperf3 run in real time: most benches
#              end with iperf3's control connection closed (2026-11-28), so
#              the device lab measures in real time, on an idle host;
#   ncm-virt-rt the arm64 virt board in real time (--accel tcg, 4 vCPUs on
#              the host's CPUs; WIRESPEED_ARM64: the guest's binary, make
#              cross's dist/wirespeed-linux-arm64 by default);
#   ncm-virt-rt-profile  the same boots with --profile (perf in the guest,
#              every vCPU): where the board's cycles go, per vCPU (issue 41);
#   ax-virt-rt seed 003's shape (issue 42): the AX88179 model paced to
#              1000 Mbit/s on the arm64 virt board in real time, -P 10 both
#              directions: stock, stock + RPS, ours, ours + RPS, ours
#              threaded (RPS mask e: every vCPU but CPU0, which takes the
#              xHCI interrupt - doctor's irq-stuck-rps-off mask);
#   ax-x86-rt  the same adapter on the pc guest (tcg-single): stock, ours,
#              ours threaded (no RPS: tcg-single runs every vCPU on one
#              host thread, so spreading over vCPUs adds no capacity);
#   ax-virt-rt-bql, ax-x86-rt-bql  the same adapter and boards: stock, ours
#              (OURS_MODS*) and ours with patch 1's batched BQL reports
#              (BQL_MODS, BQL_MODS_ARM64), for the send direction's
#              regression of per-URB reports.
#   ax-virt-rt-poll, ax-x86-rt-poll  the same: stock, ours (OURS_MODS*) and
#              ours-poll (POLL_MODS, POLL_MODS_ARM64), for the receive cost of
#              batched BQL reports from a BH work item vs from the NAPI poll.
#   ax-virt-rt-tune  the same board and adapter, receive only: stock and
#              ours (OURS_MODS_ARM64), each boot running 'wirespeed tune
#              apply' after its bench (lab vm --tune TUNE, default '--pairs
#              3 --direction receive -P 10 --duration 5s'), then persist,
#              the re-plugs and revert (issue 42: tune's advice on this
#              adapter); VARIANTS: a subset of 'stock ours' for added boots;
#   ax-virt-rt-cap  the same board: stock, ours (OURS_MODS_ARM64), ours-cap
#              (the same with BQL's limit_max at CAP bytes, default 32004)
#              and ours-perurb (PERURB_MODS_ARM64: the series that reported
#              each TX URB to BQL alone), for what BQL's limit on the ACK
#              stream does to receive.
#   mbim-x86-rt, mbim-virt-rt  the emulated MBIM modem (cdc_mbim, raw IP on
#              a tun), unpaced, receive -P 4, the pc guest (tcg-single) and the
#              arm64 virt board (tcg, 4 vCPUs): stock, ours (OURS_MODS*) and
#              ours-staged (STAGED_MODS, STAGED_MODS_ARM64: the series with
#              staging/7.x-frags' cdc_mbim and, until 2026-11-29, ax88179_178a patches), for the
#              staged cdc_mbim patch's receive figures (issue 41);
#   ax-virt-rt-staged  the AX88179 at 1000 Mbit/s on the virt board, receive
#              -P 10: the same three, for the staged ax88179_178a patch
#              (issue 42).
#   seed003-virt-rt, seed003-x86-rt  seed 003's two adapters side by side
#              (issue 42), receive -P 10 at 1000 Mbit/s: the AX88179 on stock
#              usbnet (stock), on ours (OURS_MODS*), and the RTL8153 model on
#              the guest's own r8152 (its own NAPI + GRO; r8152); the arm64
#              virt board (tcg, 4 vCPUs) and the pc guest (tcg-single).
# FIRST: the first rep's number (default 1), to add reps to a run.
# OURS_MODS (amd64) and OURS_MODS_ARM64: the series' modules for KVER.
# Write OUT_DIR/PLAN.md before running. Tables: experiments/usbnet-devlab.
set -u
out=${1:?usage: devlab-rx.sh OUT_DIR PHASE...}
shift
ws=${WIRESPEED:-./wirespeed}
kver=${KVER:-7.3.4}
ours=${OURS_MODS:-kernel/usbnet/out/7.3.4+deb13-amd64}
ours64=${OURS_MODS_ARM64:-kernel/usbnet/out/7.3.4+deb13-arm64}
ws64=${WIRESPEED_ARM64:-dist/wirespeed-linux-arm64}
n=${REPS:-5}
bql=${BQL_MODS:-}
bql64=${BQL_MODS_ARM64:-}
poll=${POLL_MODS:-}
poll64=${POLL_MODS_ARM64:-}
perurb64=${PERURB_MODS_ARM64:-}
cap=${CAP:-32004}
staged=${STAGED_MODS:-}
staged64=${STAGED_MODS_ARM64:-}
tune=${TUNE:---pairs 3 --direction receive -P 10 --duration 5s}
mkdir -p "$out"
run() { # NAME ARGS...
	name=$1
	shift
	mkdir -p "$out/$name"
	{ date -u +%FT%TZ; uptime; ps -eo pcpu,pid,comm --sort=-pcpu | head -n 8; } > "$out/$name/host-top.txt"
	echo "== $name: wirespeed lab vm $*" >> "$out/runs.txt"
	s=$(date +%s)
	# the hard timeout is real time; under -icount on a loaded host a boot
	# takes several times its estimate
	if "$ws" lab vm "$@" --kernel-version "$kver" --timeout "${TIMEOUT:-10m}" --out "$out/$name" > "$out/$name.txt" 2>&1; then
		echo "   ok in $(($(date +%s) - s)) s" >> "$out/runs.txt"
	else
		echo "   FAILED: $(tail -n 1 "$out/$name.txt")" >> "$out/runs.txt"
	fi
}
for ph in "$@"; do
	i=${FIRST:-1}
	while [ "$i" -lt "$((${FIRST:-1} + n))" ]; do
		case $ph in
		ncm-x86)
			run "ncm-x86-stock-$i" usbdev --device ncm -t 8s -P 4 --direction receive --accel tcg-icount
			run "ncm-x86-ours-$i" usbdev --device ncm -t 8s -P 4 --direction receive --accel tcg-icount --modules-dir "$ours" ;;
		ncm-virt)
			run "ncm-virt-stock-$i" usbdev --device ncm --arch arm64 --machine virt --cpus 4 -t 8s -P 4 --direction receive --accel tcg-icount
			run "ncm-virt-ours-$i" usbdev --device ncm --arch arm64 --machine virt --cpus 4 -t 8s -P 4 --direction receive --accel tcg-icount --modules-dir "$ours64" ;;
		ncm-x86-rt)
			run "ncm-x86-rt-stock-$i" usbdev --device ncm -t 8s -P 4 --direction receive --accel tcg-single
			run "ncm-x86-rt-ours-$i" usbdev --device ncm -t 8s -P 4 --direction receive --accel tcg-single --modules-dir "$ours" ;;
		ncm-virt-rt)
			run "ncm-virt-rt-stock-$i" usbdev --device ncm --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 4 --direction receive --accel tcg
			run "ncm-virt-rt-ours-$i" usbdev --device ncm --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 4 --direction receive --accel tcg --modules-dir "$ours64" ;;
		ncm-virt-rt-profile)
			run "ncm-virt-stock-$i" usbdev --device ncm --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 4 --direction receive --accel tcg --profile
			run "ncm-virt-ours-$i" usbdev --device ncm --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 4 --direction receive --accel tcg --profile --modules-dir "$ours64" ;;
		ax-virt-rt)
			for v in stock stock-rps ours ours-rps ours-threaded; do
				set -- usbdev --device ax88179 --device-args "--mbit 1000" --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 10 --direction both --accel tcg
				case $v in ours*) set -- "$@" --modules-dir "$ours64" ;; esac
				case $v in *-rps) set -- "$@" --rps e ;; *-threaded) set -- "$@" --threaded on ;; esac
				run "ax-virt-rt-$v-$i" "$@"
			done ;;
		ax-x86-rt)
			for v in stock ours ours-threaded; do
				set -- usbdev --device ax88179 --device-args "--mbit 1000" -t 8s -P 10 --direction both --accel tcg-single
				case $v in ours*) set -- "$@" --modules-dir "$ours" ;; esac
				case $v in *-threaded) set -- "$@" --threaded on ;; esac
				run "ax-x86-rt-$v-$i" "$@"
			done ;;
		ax-virt-rt-bql)
			for v in stock ours ours-bql; do
				set -- usbdev --device ax88179 --device-args "--mbit 1000" --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 10 --direction both --accel tcg
				case $v in ours) set -- "$@" --modules-dir "$ours64" ;; ours-bql) set -- "$@" --modules-dir "${bql64:?BQL_MODS_ARM64}" ;; esac
				run "ax-virt-rt-bql-$v-$i" "$@"
			done ;;
		ax-x86-rt-bql)
			for v in stock ours ours-bql; do
				set -- usbdev --device ax88179 --device-args "--mbit 1000" -t 8s -P 10 --direction both --accel tcg-single
				case $v in ours) set -- "$@" --modules-dir "$ours" ;; ours-bql) set -- "$@" --modules-dir "${bql:?BQL_MODS}" ;; esac
				run "ax-x86-rt-bql-$v-$i" "$@"
			done ;;
		ax-virt-rt-poll)
			for v in stock ours ours-poll; do
				set -- usbdev --device ax88179 --device-args "--mbit 1000" --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 10 --direction both --accel tcg
				case $v in ours) set -- "$@" --modules-dir "$ours64" ;; ours-poll) set -- "$@" --modules-dir "${poll64:?POLL_MODS_ARM64}" ;; esac
				run "ax-virt-rt-poll-$v-$i" "$@"
			done ;;
		ax-virt-rt-cap)
			for v in stock ours ours-cap ours-perurb; do
				set -- usbdev --device ax88179 --device-args "--mbit 1000" --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 10 --direction both --accel tcg
				case $v in ours) set -- "$@" --modules-dir "$ours64" ;; ours-cap) set -- "$@" --modules-dir "$ours64" --bql-max "$cap" ;; ours-perurb) set -- "$@" --modules-dir "${perurb64:?PERURB_MODS_ARM64}" ;; esac
				run "ax-virt-rt-cap-$v-$i" "$@"
			done ;;
		ax-virt-rt-tune)
			for v in ${VARIANTS:-stock ours}; do
				set -- usbdev --device ax88179 --device-args "--mbit 1000" --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 10 --direction receive --accel tcg --tune "$tune"
				case $v in ours) set -- "$@" --modules-dir "$ours64" ;; esac
				run "ax-virt-rt-tune-$v-$i" "$@"
			done ;;
		ax-x86-rt-poll)
			for v in stock ours ours-poll; do
				set -- usbdev --device ax88179 --device-args "--mbit 1000" -t 8s -P 10 --direction both --accel tcg-single
				case $v in ours) set -- "$@" --modules-dir "$ours" ;; ours-poll) set -- "$@" --modules-dir "${poll:?POLL_MODS}" ;; esac
				run "ax-x86-rt-poll-$v-$i" "$@"
			done ;;
		mbim-x86-rt)
			for v in stock ours ours-staged; do
				set -- usbdev --device mbim -t 8s -P 4 --direction receive --accel tcg-single
				case $v in ours) set -- "$@" --modules-dir "$ours" ;; ours-staged) set -- "$@" --modules-dir "${staged:?STAGED_MODS}" ;; esac
				run "mbim-x86-rt-$v-$i" "$@"
			done ;;
		mbim-virt-rt)
			for v in stock ours ours-staged; do
				set -- usbdev --device mbim --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 4 --direction receive --accel tcg
				case $v in ours) set -- "$@" --modules-dir "$ours64" ;; ours-staged) set -- "$@" --modules-dir "${staged64:?STAGED_MODS_ARM64}" ;; esac
				run "mbim-virt-rt-$v-$i" "$@"
			done ;;
		ax-virt-rt-staged)
			for v in stock ours ours-staged; do
				set -- usbdev --device ax88179 --device-args "--mbit 1000" --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" -t 8s -P 10 --direction receive --accel tcg
				case $v in ours) set -- "$@" --modules-dir "$ours64" ;; ours-staged) set -- "$@" --modules-dir "${staged64:?STAGED_MODS_ARM64}" ;; esac
				run "ax-virt-rt-staged-$v-$i" "$@"
			done ;;
		seed003-virt-rt | seed003-x86-rt)
			for v in stock ours r8152; do
				case $v in r8152) set -- usbdev --device rtl8153 ;; *) set -- usbdev --device ax88179 ;; esac
				set -- "$@" --device-args "--mbit 1000" -t 8s -P 10 --direction receive
				case $ph in seed003-virt-rt) set -- "$@" --arch arm64 --machine virt --cpus 4 --wirespeed "$ws64" --accel tcg ;; *) set -- "$@" --accel tcg-single ;; esac
				case $v.$ph in ours.seed003-virt-rt) set -- "$@" --modules-dir "$ours64" ;; ours.*) set -- "$@" --modules-dir "$ours" ;; esac
				run "$ph-$v-$i" "$@"
			done ;;
		*) echo "unknown phase $ph: want ncm-x86, ncm-virt, ncm-x86-rt, ncm-virt-rt, ncm-virt-rt-profile, ax-virt-rt, ax-x86-rt, ax-virt-rt-bql, ax-x86-rt-bql, ax-virt-rt-poll, ax-x86-rt-poll, ax-virt-rt-cap, ax-virt-rt-tune, mbim-x86-rt, mbim-virt-rt, ax-virt-rt-staged, seed003-virt-rt or seed003-x86-rt" >&2; exit 2 ;;
		esac
		i=$((i + 1))
	done
done
