#!/bin/bash
# usbnet-build-matrix.sh [OUT.json] - kernel/usbnet's build test over the
# cross product that runs on one amd64 Debian host: each family's series
# against its own headers, a source of one patch level against headers of
# another (both families), and the refusals that must happen before any
# build (a --ksrc tree of the other family, a kernel of no family). Uses
# build.sh as a user would (sources and headers fetched with apt-get
# download into its cache). Prints one line per case and writes the cases
# as JSON (schema wirespeed.usbnet-build-matrix/v1) to OUT.json (default
# ./usbnet-build-matrix.json). Exit 1 if any case did not do what it must.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$here/kernel/usbnet/build.sh"
out_json="${1:-usbnet-build-matrix.json}"
work="$(mktemp -d /var/tmp/usbnet-matrix.XXXXXX)"
trap 'rm -rf "$work"' EXIT
k61=${K61:-6.1.0-56-amd64} k612=${K612:-6.12.117+deb12-amd64}
old61=${OLD61:-6.1.176-1} old612=${OLD612:-6.12.107-1~deb12u1}
fail=0 cases=()
run() { # NAME EXPECT(ok|refused) ARGS... : one build.sh run
	local name=$1 expect=$2 start rc got src mods
	shift 2
	start=$(date +%s)
	"$build" "$@" --out "$work/$name" >"$work/$name.log" 2>&1
	rc=$?
	got=ok; [ $rc = 0 ] || got=refused
	src="$(cat "$work/$name/SOURCE" 2>/dev/null || true)"
	mods=$(ls "$work/$name"/*.ko 2>/dev/null | wc -l)
	if [ "$got" = "$expect" ] && { [ "$expect" = refused ] || [ "$mods" = 28 ]; }; then
		echo "ok   $name: $got ($mods modules${src:+, $src}) in $(($(date +%s) - start)) s"
	else
		echo "FAIL $name: want $expect, got $got ($mods modules): $(tail -n 3 "$work/$name.log" | tr '\n' ' ')"
		fail=1
	fi
	cases+=("$(python3 -c 'import json,sys; print(json.dumps({"name":sys.argv[1],"args":sys.argv[2].split("\x1f"),"expect":sys.argv[3],"got":sys.argv[4],"modules":int(sys.argv[5]),"source":sys.argv[6],"seconds":int(sys.argv[7]),"log_tail":sys.argv[8]}))' \
		"$name" "$(IFS=$'\x1f'; echo "$*")" "$expect" "$got" "$mods" "$src" "$(($(date +%s) - start))" "$(tail -n 4 "$work/$name.log")")")
}
run series-6.1-own-headers ok --kver "$k61"
run series-6.12-own-headers ok --kver "$k612"
run series-6.1-older-source ok --kver "$k61" --debver "$old61"
run series-6.12-older-source ok --kver "$k612" --debver "$old612"
src612="$("$build" --kver "$k612" --source-only 2>/dev/null)"
run ksrc-6.12-tree-for-6.1-kernel refused --kver "$k61" --ksrc "$src612"
run ksrc-6.12-tree-for-6.12-kernel ok --kver "$k612" --ksrc "$src612"
run kernel-6.6-refused refused --kver 6.6.51+rpt-rpi-v8
{
	echo "{\"schema\": \"wirespeed.usbnet-build-matrix/v1\", \"date\": \"$(date -u +%FT%TZ)\", \"host\": \"$(uname -m)\", \"cases\": ["
	(IFS=,; echo "${cases[*]}")
	echo "]}"
} | python3 -m json.tool >"$out_json"
echo "usbnet-build-matrix: $( [ $fail = 0 ] && echo ok || echo FAILED ) (${#cases[@]} cases) -> $out_json"
exit $fail
