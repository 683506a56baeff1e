#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# usbnet-build-matrix.sh [OUT.json] - kernel/usbnet's build test over the
# cross product that runs on one amd64 Debian host: each family's series
# against its own headers, a source of one patch level against headers of
# another (both families), and the refusals that must happen before any
# build (a --ksrc tree of the other family, a kernel of no family), and
# both families cross-built for Debian's arm64 kernels (needs
# gcc-aarch64-linux-gnu). Uses build.sh as a user would (sources and headers
# fetched with apt-get download into its cache; arm64 headers through its
# private arm64 apt lists). A build passes with 28 modules whose usbnet.ko
# carries the kernel's vermagic (and, for arm64, is an AArch64 ELF whose
# vermagic ends in aarch64). Prints one line per case and writes the cases
# as JSON (schema wirespeed.usbnet-build-matrix/v1) to OUT.json (default
# ./usbnet-build-matrix.json). Exit 1 if any case did not do what it must.
set -u
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="$here/kernel/usbnet/build.sh"
out_json="${1:-usbnet-build-matrix.json}"
work="$(mktemp -d /var/tmp/usbnet-matrix.XXXXXX)"
trap 'rm -rf "$work"' EXIT
k61=${K61:-6.1.0-56-amd64} k612=${K612:-6.12.117+deb12-amd64}
a61=${A61:-6.1.0-56-arm64} a612=${A612:-6.12.117+deb12-arm64}
old61=${OLD61:-6.1.176-1} old612=${OLD612:-6.12.107-1~deb12u1}
fail=0 cases=()
# modcheck KVER KO: empty when KO is a module for KVER (vermagic, and for an
# arm64 kernel an AArch64 ELF with an aarch64 vermagic), else what is wrong.
modcheck() {
	local kver=$1 ko=$2 vm machine
	vm="$(modinfo -F vermagic "$ko" 2>/dev/null)"
	machine="$(readelf -h "$ko" 2>/dev/null | sed -n 's/^ *Machine: *//p')"
	case "$vm" in "$kver "*) ;; *) echo "vermagic '$vm' is not $kver's"; return ;; esac
	case "$kver" in *-arm64*)
		case "$vm" in *" aarch64") ;; *) echo "vermagic '$vm' does not end in aarch64"; return ;; esac
		[ "$machine" = AArch64 ] || echo "ELF machine '$machine', not AArch64" ;;
	esac
}
run() { # NAME EXPECT(ok|refused) ARGS... : one build.sh run
	local name=$1 expect=$2 start rc got src mods kver="" vm="" bad="" a prev=""
	shift 2
	for a in "$@"; do [ "$prev" != --kver ] || kver=$a; prev=$a; done
	start=$(date +%s)
	"$build" "$@" --out "$work/$name" >"$work/$name.log" 2>&1
	rc=$?
	got=ok; [ $rc = 0 ] || got=refused
	src="$(cat "$work/$name/SOURCE" 2>/dev/null || true)"
	mods=$(find "$work/$name" -maxdepth 1 -name '*.ko' 2>/dev/null | wc -l)
	if [ "$got" = ok ] && [ "$expect" = ok ]; then
		vm="$(modinfo -F vermagic "$work/$name/usbnet.ko" 2>/dev/null)"
		bad="$(modcheck "$kver" "$work/$name/usbnet.ko")"
	fi
	if [ "$got" = "$expect" ] && { [ "$expect" = refused ] || { [ "$mods" = 28 ] && [ -z "$bad" ]; }; }; then
		echo "ok   $name: $got ($mods modules${src:+, $src}${vm:+, vermagic ${vm% }}) in $(($(date +%s) - start)) s"
	else
		echo "FAIL $name: want $expect, got $got ($mods modules${bad:+; usbnet.ko: $bad}): $(tail -n 3 "$work/$name.log" | tr '\n' ' ')"
		fail=1
	fi
	cases+=("$(python3 -c 'import json,sys; print(json.dumps({"name":sys.argv[1],"args":sys.argv[2].split("\x1f"),"expect":sys.argv[3],"got":sys.argv[4],"modules":int(sys.argv[5]),"source":sys.argv[6],"seconds":int(sys.argv[7]),"log_tail":sys.argv[8],"vermagic":sys.argv[9]}))' \
		"$name" "$(IFS=$'\x1f'; echo "$*")" "$expect" "$got" "$mods" "$src" "$(($(date +%s) - start))" "$(tail -n 4 "$work/$name.log")" "$vm")")
}
run series-6.1-own-headers ok --kver "$k61"
run series-6.12-own-headers ok --kver "$k612"
run series-6.1-older-source ok --kver "$k61" --debver "$old61"
run series-6.12-older-source ok --kver "$k612" --debver "$old612"
src612="$("$build" --kver "$k612" --source-only 2>/dev/null)"
run ksrc-6.12-tree-for-6.1-kernel refused --kver "$k61" --ksrc "$src612"
run ksrc-6.12-tree-for-6.12-kernel ok --kver "$k612" --ksrc "$src612"
run kernel-6.6-refused refused --kver 6.6.51+rpt-rpi-v8
run series-6.1-arm64-cross ok --kver "$a61"
run series-6.12-arm64-cross ok --kver "$a612"
{
	echo "{\"schema\": \"wirespeed.usbnet-build-matrix/v1\", \"date\": \"$(date -u +%FT%TZ)\", \"host\": \"$(uname -m)\", \"cases\": ["
	(IFS=,; echo "${cases[*]}")
	echo "]}"
} | python3 -m json.tool >"$out_json"
echo "usbnet-build-matrix: $( [ $fail = 0 ] && echo ok || echo FAILED ) (${#cases[@]} cases) -> $out_json"
exit $fail
