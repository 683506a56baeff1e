#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs wirespeed on a table of bad inputs and records, per input, the exit
# code, the first line of stderr and whether anything was changed, into a
# JSON file. Usage (as root, so the checks past "needs root" are reached):
#   experiments/bad-inputs/bad-inputs.sh BINARY OUT.json
# Each input runs in a fresh empty working directory with a fresh empty
# $WIRESPEED_STATE_DIR, in a network namespace of its own (unshare -n: no
# host device is in reach), under a 15 s limit. An input counts as "clear"
# when it exits non-zero without a crash, the first stderr line names the
# input (the case's TOKEN) and says what to do (a word such as want, use,
# give, run, see, pass, needs), and neither directory got a file.
set -u
BIN=$(readlink -f "$1")
OUT=$2
[ "$(id -u)" = 0 ] || { echo "run as root (the checks after 'needs root' are part of the table)" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$(mktemp -d /tmp/ws-bad-fix-XXXXXX)
trap 'rm -rf "$FIX"' EXIT
# Files the inputs name.
: > "$FIX/empty.json"
printf 'not json at all' > "$FIX/garbage.json"
echo '{}' > "$FIX/obj.json"
echo '{"foo":1}' > "$FIX/foo.json"
echo '[1,2]' > "$FIX/nums.json"
"$BIN" doctor --from "$REPO/testdata/snapshots/rpi4-ax88179.tar.gz" --json > "$FIX/doctor.json" 2>/dev/null
"$BIN" inspect --from "$REPO/testdata/snapshots/rpi4-ax88179.tar.gz" --json > "$FIX/inspect.json" 2>/dev/null
cp "$REPO/internal/bench/testdata/iperf3-3.12-tcp.json" "$FIX/iperf3.json"
printf 'x' | gzip > "$FIX/notsnap.tar.gz"
SNAP="$REPO/testdata/snapshots/rpi4-ax88179.tar.gz"
# A bench result (the VM lab's), and the same without its samples.
cp "$REPO/experiments/doctorlive/data/vm-usb-nic/ours/bench-receive.json" "$FIX/bench.json"
jq 'del(.runs[].samples)' "$FIX/bench.json" > "$FIX/nosamples.json"

# TOKEN|ARGS (ARGS split on spaces; @F is the fixture directory)
cases=$(cat <<'T'
nosuchcmd|nosuchcmd
-x|-x
nosuchif0|inspect nosuchif0
-bogus|inspect --bogus
nope.tar.gz|inspect --from /nonexistent/nope.tar.gz
notsnap|inspect --from @F/notsnap.tar.gz
garbage|inspect --from @F/garbage.json
/proc/x|inspect --save /proc/x/snap.tar.gz
nosuchif0|observe nosuchif0 --duration 1s
-1s|observe --duration -1s
abc|observe --duration abc
150|observe --sample 150
0|observe --sample 0
-5|observe --sample -5
abc|observe --sample abc
0|observe --duration 0
-bogus|observe --bogus
0|watch --interval 0
-1|watch --count -1
abc|watch --count abc
150|watch --sample 150
-2s|watch --interval -2s
nosuchif0|watch nosuchif0 --count 1
150|exporter --observe-sample 150
0|exporter --interval 0
-1s|exporter --interval -1s
abc|exporter --observe abc
bogus|exporter --observe bogus
0.0.0.0:9977|exporter --listen 0.0.0.0:9977
nohost|exporter --listen nohost
99999|exporter --listen 127.0.0.1:99999
extra|exporter extra
0|doctor --observe 0
-5s|doctor --observe -5s
abc|doctor --observe abc
nope|doctor --fail-on nope
nope.tar.gz|doctor --from /nonexistent/nope.tar.gz
notsnap|doctor --from @F/notsnap.tar.gz
iperf3.json|doctor --result @F/iperf3.json
empty.json|doctor --result @F/empty.json
garbage.json|doctor --result @F/garbage.json
doctor.json|doctor --result @F/doctor.json
nope.json|doctor --result /nonexistent/nope.json
iperf3.json|doctor --from @SNAP --result @F/iperf3.json
--observe|doctor --from @SNAP --observe 5s
nosuchif0|doctor nosuchif0
nosuchif0|doctor --from @SNAP nosuchif0
-bogus|doctor --bogus
doctor.json|show @F/doctor.json
garbage.json|show @F/garbage.json
nope.json|show /nonexistent/nope.json
empty.json|show @F/empty.json
inspect.json|show @F/inspect.json
iperf3.json|show @F/iperf3.json
show|show
doctor.json|compare @F/doctor.json @F/doctor.json
garbage.json|compare @F/garbage.json @F/garbage.json
nope.json|compare /nonexistent/nope.json /nonexistent/nope.json
compare|compare
as many|compare @F/bench.json,@F/bench.json @F/bench.json
nope|compare @F/bench.json @F/bench.json --a nope
A.json B.json|compare @F/bench.json @F/bench.json @F/bench.json
iperf3.json|compare @F/iperf3.json @F/iperf3.json
inspect.json|compare @F/inspect.json @F/inspect.json
doctor.json|report @F/doctor.json -o @F/out.html
inspect.json|report @F/inspect.json -o @F/out.html
garbage.json|report @F/garbage.json -o @F/out.html
nope.json|report /nonexistent/nope.json
report|report
empty.json|report @F/empty.json
--rep|report @F/iperf3.json --rep -1
/proc/x|report @F/iperf3.json --flent /proc/x
-bogus|report --bogus
bogus|bench --direction bogus
-P|bench -P 0
-P|bench -P -4
abc|bench -P abc
-t|bench -t 0
abc|bench -t abc
-t|bench -t -10s
--omit|bench --omit -1s
--repeat|bench --repeat 0
--repeat|bench --repeat -2
--port|bench --port 0
--port|bench --port 70000
--port|bench --port -1
--procs|bench --procs -1
--priority|bench --priority 99
--priority|bench --priority -5
--probe-interval|bench --probe-interval 1ms
--probe-interval|bench --probe-interval 5s
abc|bench --probe-interval abc
--idle|bench --idle -1s
--tos|bench --tos 300
bogus|bench --tos bogus
bogus|bench --observe bogus
bogus|bench --bitrate bogus
bogus|bench --gro bogus
zz|bench --rps zz
bogus|bench --rate bogus
bogus|bench --qdisc bogus
--pin-sender|bench --pin-sender 9999
--pin-receiver|bench --pin-receiver -7
not-an-ip|bench --peer not-an-ip:x
-bogus|bench --bogus
extra|bench extra
bogus|lab bogus
--pin-sender|lab up --pin-sender 9999
bogus|lab up --gro bogus
zz|lab up --rps zz
bad/name|lab up --name bad/name
nolab|lab down nolab
extra|lab status extra
bogus|lab vm bogus
-3|lab vm usbnet-stress --cycles -3
--cycles 0|lab vm usbnet-stress --cycles 0
abc|lab vm usb-gadget --bus-rate abc
-5|lab vm usb-gadget --bus-rate -5
--bus-rate|lab vm usb-nic --bus-rate 100
-1|lab vm usb-nic -P -1
--tunnels|lab vm wireguard --tunnels 0
--tunnels|lab vm wireguard --tunnels 1000
--cpus|lab vm usb-nic --cpus -2
--cpus|lab vm usb-nic --cpus 1000
--mem|lab vm usb-nic --mem 12
--mem|lab vm usb-nic --mem -100
abc|lab vm usb-nic -t abc
-t|lab vm usb-nic -t -5s
--timeout|lab vm usb-nic --timeout -5s
--timeout|lab vm usb-nic --timeout 1ms
-t 0|lab vm usb-nic -t 0
-t|lab vm usb-nic -t 0.3
--duration|observe --duration 0.0001
--rep|report @F/bench.json --rep -1 --flent @F/x.flent.gz
--pairs|tune apply --actions @F/doctor.json --pairs 101
--repeat|bench --repeat 1001
--procs|bench --procs 129
--interval|watch --interval 0.001
--tos|bench --tos -1
bogus|lab vm usb-nic --accel bogus
bogus|lab vm usb-nic --arch bogus
bogus|lab vm usb-nic --machine bogus
bogus|lab vm usb-nic --speed bogus
bogus|lab vm usb-nic --threaded bogus
bogus|lab vm usbnet-stress --steps bogus
bogus|lab vm usb-nic --direction bogus
9.9|lab vm usb-nic --kernel-version 9.9
lab vm|lab vm
bogus|tune bogus
obj.json|tune apply --actions @F/obj.json
foo.json|tune apply --actions @F/foo.json
foo.json|tune plan --actions @F/foo.json
nums.json|tune apply --actions @F/nums.json
garbage.json|tune apply --actions @F/garbage.json
nope.json|tune apply --actions /nonexistent/nope.json
--pairs|tune apply --actions @F/doctor.json --pairs 1
--pairs|tune apply --actions @F/doctor.json --pairs -3
abc|tune apply --actions @F/doctor.json --pairs abc
speed|tune apply --actions @F/doctor.json --goal speed
speed|tune apply --actions @F/doctor.json --guard speed
--duration|tune apply --actions @F/doctor.json --duration 0
--duration|tune apply --actions @F/doctor.json --duration -3s
bogus|tune apply --actions @F/doctor.json --direction bogus
-P|tune apply --actions @F/doctor.json --peer 192.0.2.1 -P 0
repeat|tune apply --actions @F/doctor.json --peer 192.0.2.1 --bench-args --repeat=3
nope|tune apply --actions @F/doctor.json --only nope
--peer|tune apply --actions @F/doctor.json --peer 192.0.2.1 --lab
nope|tune revert nope
revert|tune revert
extra|tune status extra
extra|tune persist extra
nosuchif0|tune plan nosuchif0
-bogus|tune --bogus
T
)
results=()
n=0
while IFS='|' read -r token args; do
	[ -z "$args" ] && continue
	n=$((n + 1))
	work=$(mktemp -d /tmp/ws-bad-work-XXXXXX)
	state=$(mktemp -d /tmp/ws-bad-state-XXXXXX)
	argv=()
	for a in $args; do
		a=${a//@F/$FIX}
		a=${a//@SNAP/$SNAP}
		argv+=("$a")
	done
	errf=$(mktemp)
	(cd "$work" && WIRESPEED_STATE_DIR=$state timeout -s KILL 15 unshare -n "$BIN" "${argv[@]}" >/dev/null 2>"$errf" </dev/null)
	code=$?
	first=$(grep -m1 -v '^[[:space:]]*$' "$errf")
	crashed=false
	grep -q '^panic:\|goroutine [0-9]* \[' "$errf" && crashed=true
	changed=false
	[ -n "$(ls -A "$work")" ] && changed=true
	[ -n "$(ls -A "$state")" ] && changed=true
	rm -f "$FIX/out.html"
	clear=false
	if [ "$code" != 0 ] && [ "$code" != 137 ] && ! $crashed && ! $changed &&
		grep -qiF -- "$token" <<<"$first" &&
		grep -qiE '\b(want|use|give|run|see|pass|needs?|try|move|set|name|add|leave|wait|start|takes?|install|expects?|must|only)\b' <<<"$first"; then
		clear=true
	fi
	results+=("$(jq -nc --arg args "$args" --arg token "$token" --argjson code "$code" --arg first "${first//$FIX/@F}" \
		--argjson crashed "$crashed" --argjson changed "$changed" --argjson clear "$clear" \
		'{args: $args, token: $token, exit: $code, stderr_first_line: $first, crashed: $crashed, changed: $changed, clear: $clear}')")
	rm -rf "$work" "$state" "$errf"
done <<<"$cases"
"$BIN" lab reap >/dev/null 2>&1
printf '%s\n' "${results[@]}" | jq -s --arg bin "$BIN" --arg version "$("$BIN" --version)" \
	'{binary: $bin, version: $version, tried: length, clear: (map(select(.clear)) | length),
	  nonzero: (map(select(.exit != 0)) | length), crashed: (map(select(.crashed)) | length),
	  changed: (map(select(.changed)) | length), inputs: .}' > "$OUT"
jq -r '"\(.version): \(.tried) bad inputs, \(.clear) clear, \(.nonzero) non-zero exits, \(.crashed) crashes, \(.changed) changed something"' "$OUT"
