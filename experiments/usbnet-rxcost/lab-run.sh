# SPDX-License-Identifier: Apache-2.0
# lab-run.sh - sourced by threaded.sh and profile.sh: run NAME ARGS... boots
# one usb-gadget receive run (super speed, bus uncapped, -P 2, 8 s) into
# $out/NAME with the caller's $ws, $kver, $accel, $profile ("" or
# --profile), LABVM_ARGS and ARGS; the host's load before the boot goes to
# NAME/host-top.txt, the command and its outcome to $out/runs.txt.
# shellcheck shell=sh disable=SC2154 # the caller sets out, ws, kver, accel, profile
run() { # NAME ARGS...
	name=$1
	shift
	mkdir -p "$out/$name"
	{ date -u +%FT%TZ; uptime; ps -eo pcpu,pid,comm --sort=-pcpu | head -n 8; } >"$out/$name/host-top.txt"
	echo "== $name: wirespeed lab vm $* ${LABVM_ARGS:-}" >>"$out/runs.txt"
	s=$(date +%s)
	# shellcheck disable=SC2086 # LABVM_ARGS is a list of flags, profile empty or one
	if "$ws" lab vm usb-gadget -t 8s -P 2 --speed super --direction receive --accel "$accel" $profile \
		--kernel-version "$kver" "$@" ${LABVM_ARGS:-} --out "$out/$name" >"$out/$name.txt" 2>&1; then
		echo "   ok in $(($(date +%s) - s)) s" >>"$out/runs.txt"
	else
		echo "   FAILED: $(tail -n 1 "$out/$name.txt")" >>"$out/runs.txt"
	fi
}
