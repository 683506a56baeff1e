#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs wirespeed on a table of hostile inputs (issue 34) and classifies each
# outcome as clear, unclear, wrong or hang; the rule is in README.md, and
# in classify() below. Usage (as root):
#   experiments/hostile/hostile-sweep.sh BINARY OUT.json
# Everything runs in one private network + mount namespace (its own sysfs,
# a veth pair d0/d1, a tmpfs on /run/wirespeed, copies of /etc/passwd and
# /etc/shadow bind-mounted over them); the host is checked after.
set -u
if [ "${1:-}" != --inner ]; then
	BIN=$(readlink -f "$1")
	OUT=$(readlink -f "$(dirname "$2")")/$(basename "$2")
	[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 2; }
	for c in jq python3 unshare ip tc; do command -v $c >/dev/null || { echo "needs $c" >&2; exit 2; }; done
	[ -d /run/wirespeed ] || { echo "/run/wirespeed missing: run any 'wirespeed tune' once, or mkdir it (the sweep mounts a tmpfs on it)" >&2; exit 2; }
	F=$(mktemp -d /tmp/ws-hostile-XXXXXX)
	trap 'rm -rf "$F"' EXIT
	host_values() {
		for f in /sys/kernel/mm/ksm/pages_to_scan /proc/sys/kernel/hostname /proc/sys/net/core/somaxconn \
			/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor /proc/irq/*/smp_affinity_list; do
			[ -r "$f" ] && printf '%s=%s\n' "$f" "$(cat "$f" 2>/dev/null)"
		done
		sha256sum /etc/passwd /etc/shadow
		ls /run/wirespeed; find /tmp -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | grep -i 'wirespeed\|^ws-' | grep -v '^ws-hostile-' # others compile in /tmp
	}
	host_values > "$F/host.before"
	unshare -n -m --propagation private "$0" --inner "$BIN" "$OUT" "$F"
	rc=$?
	host_values > "$F/host.after"
	if ! diff "$F/host.before" "$F/host.after" >&2; then
		echo "THE HOST CHANGED (above)" >&2
		jq '.host_changed = true' "$OUT" > "$F/o" && cat "$F/o" > "$OUT"
		exit 1
	fi
	exit $rc
fi

BIN=$2 OUT=$3 F=$4
mount -t sysfs sysfs /sys || exit 1
mount -t tmpfs tmpfs /run/wirespeed || exit 1
for f in passwd shadow; do
	cp /etc/$f "$F/etc-$f" && echo "SECRET-$f-34" >> "$F/etc-$f"
	mount --bind "$F/etc-$f" /etc/$f || exit 1
done
ip link add d0 type veth peer name d1 && ip link set d0 up && ip link set d1 up || exit 1
MAC=$(cat /sys/class/net/d0/address) IDX=$(cat /sys/class/net/d0/ifindex)
NS=$(readlink /proc/self/ns/net)
HOST=machine-id:$(cat /etc/machine-id)
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SNAP=$REPO/testdata/snapshots/rpi4-ax88179.tar.gz
echo "SECRET-canary-34" > "$F/canary"
ln -s /dev/zero "$F/zero"
mkfifo "$F/fifo"
truncate -s 300M "$F/huge.json"
printf 'not json' > "$F/garbage.json"
echo null > "$F/null.json"
echo '{}' > "$F/obj.json"
cp "$REPO/experiments/doctorlive/data/vm-usb-nic/ours/bench-receive.json" "$F/bench.json"
jq '.runs = []' "$F/bench.json" > "$F/noruns.json"
jq '.runs[].samples = null' "$F/bench.json" > "$F/nullsamples.json"
# Runs whose figures were lost (hand-broken): missing must be said to be missing.
jq '.runs[].metrics = null | .runs[].throughput = null | .summary = null' "$F/bench.json" > "$F/broken.json"
# Snapshots: answers.json null, and one whose tree links out to /etc/shadow.
mk_snap() { # NAME EDIT-COMMAND
	local d; d=$(mktemp -d "$F/snap-XXXXXX")
	# shellcheck disable=SC2046,SC2010 # a snapshot's top-level names are few and plain (answers.json, root)
	tar -xzf "$SNAP" -C "$d" && (cd "$d" && eval "$2") &&
		tar -C "$d" -czf "$F/$1" meta.json $(cd "$d" && ls | grep -v '^meta.json$')
	rm -rf "$d"
}
mk_snap null-answers.tar.gz 'echo null > answers.json'
# shellcheck disable=SC2016 # mk_snap evals these in the snapshot's tree
mk_snap link-out.tar.gz 'for a in $(find root -path "*/net/*/address"); do rm -f "$a"; ln -s /etc/shadow "$a"; done'
# shellcheck disable=SC2016 # as above
mk_snap link-up.tar.gz 'for a in $(find root -path "*/net/*/address"); do rm -f "$a"; ln -s ../../../../../../../../../../../../../../../../etc/shadow "$a"; done'
cat > "$F/mkj.py" <<'PY'
# mkj.py FILE KIND DEVICE TARGET VALUE OLD [k=v ...]: a journal of one applied entry
import json, sys
f, kind, dev, tgt, val, old = sys.argv[1:7]
e = {"seq": 1, "action": {"id": "x1", "kind": kind, "device": dev, "target": tgt, "value": val, "command": ""},
     "old": old, "state": "applied", "netns": sys.argv[7], "host": sys.argv[8], "ifindex": int(sys.argv[9]),
     "mac": sys.argv[10], "time": "2026-01-01T00:00:00Z"}
ver = 2
for kv in sys.argv[11:]:
    k, v = kv.split("=", 1)
    if k == "version": ver = int(v)
    elif k == "ifindex": e[k] = int(v)
    elif v == "DEL": del e[k]
    else: e[k] = v
json.dump({"version": ver, "entries": [e]}, open(f, "w"))
PY
# journal KIND DEVICE TARGET VALUE OLD [k=v...]: into the case's state dir $S
journal() { python3 "$F/mkj.py" "$S/tune-journal.json" "$1" "$2" "$3" "$4" "$5" "$NS" "$HOST" "$IDX" "$MAC" "${@:6}"; }
# actions KIND DEVICE TARGET VALUE: an --actions file $F/acts.json
actions() { jq -nc --arg k "$1" --arg d "$2" --arg t "$3" --arg v "$4" '[{id: "a1", kind: $k, device: $d, target: $t, value: $v}]' > "$F/acts.json"; }

watched() {
	cat "$F/canary" /etc/passwd /etc/shadow 2>&1 | sha256sum
	for d in d0 d1; do
		for k in tx_queue_len threaded gro_flush_timeout napi_defer_hard_irqs ifalias queues/rx-0/rps_cpus queues/rx-0/rps_flow_cnt queues/tx-0/xps_cpus; do
			printf '%s/%s=%s\n' "$d" "$k" "$(cat /sys/class/net/$d/$k 2>&1)"
		done
		tc qdisc show dev $d root
	done
	cat /proc/sys/net/core/somaxconn /proc/sys/kernel/hostname /sys/kernel/mm/ksm/pages_to_scan
	find "$F" -mindepth 1 -maxdepth 1 ! -name '.*' -printf '%f\n' | sort | grep -v '^state-\|^work-\|^acts.json$\|^out-\|^root-'
	stat -c '%n %F' "$F/null" "$F/full" # the output devices of section 7: never replaced
}
mknod "$F/null" c 1 3 && mknod "$F/full" c 1 7 && chmod 666 "$F/null" "$F/full" # section 7's outputs
mkdir "$F/.w"; watched > "$F/.w/base"; ls -A "$F" > "$F/.w/files"

WORDS='\b(want|use|give|run|see|pass|needs?|try|move|set|name|add|leave|wait|start|takes?|install|expects?|must|only|check|fix|chmod|chown|remove|put|inspect|is not|refused|upgrade)\b'
results=()
# c EXPECT TOKEN ARGS... : run one case with the state dir $S set up before
c() {
	local expect=$1 token=$2; shift 2
	local argv=() a
	for a in "$@"; do argv+=("${a//@S/$S}"); done
	local out err code first crashed=false changed=false leaked=false oom=false class
	out=$(mktemp "$F/out-XXXXXX") err=$(mktemp "$F/out-XXXXXX")
	(cd "$W" && ulimit -v 2000000 && WIRESPEED_STATE_DIR=$S timeout -s KILL 20 "$BIN" "${argv[@]}" >"$out" 2>"$err" </dev/null)
	code=$?
	grep -q '^panic:\|goroutine [0-9]* \[' "$err" && crashed=true
	grep -qi 'out of memory\|cannot allocate memory' "$err" && oom=true
	grep -q 'SECRET-' "$out" "$err" && leaked=true
	watched > "$F/.w/now"
	cmp -s "$F/.w/base" "$F/.w/now" || changed=true
	[ -n "$(ls -A "$W")" ] && changed=true
	# The line judged: for a refusal, the error line (the first stderr line
	# starting "wirespeed", after any progress lines), else the first one.
	first=$(grep -m1 '^wirespeed' "$err")
	[ -n "$first" ] || first=$(grep -m1 -v '^[[:space:]]*$' "$err")
	[ "$expect" = ok ] && first=$(cat "$out" "$err" | tr '\n' ' ')
	if [ "$code" = 137 ] || $oom; then
		class=hang
	elif $crashed || $changed || $leaked || { [ "$expect" = refuse ] && [ "$code" = 0 ]; } || { [ "$expect" = ok ] && [ "$code" != 0 ]; }; then
		class=wrong
	elif [ "$expect" = any ]; then
		class=clear
	elif grep -qiF -- "$token" <<<"$first" && grep -qiE "$WORDS|gone|another|not made permanent|no change" <<<"$first"; then
		class=clear
	else
		class=unclear
	fi
	if $changed; then # put the namespace back for the next case
		diff "$F/.w/base" "$F/.w/now" | sed 's/^/  /' >&2
		for d in d0 d1; do echo 1000 > /sys/class/net/$d/tx_queue_len; echo 0 > /sys/class/net/$d/queues/rx-0/rps_cpus; tc qdisc del dev $d root 2>/dev/null; done
		echo 4096 > /proc/sys/net/core/somaxconn
		[ -c "$F/null" ] || { rm -f "$F/null"; mknod "$F/null" c 1 3; chmod 666 "$F/null"; }
		[ -c "$F/full" ] || { rm -f "$F/full"; mknod "$F/full" c 1 7; chmod 666 "$F/full"; }
		find "$F" -mindepth 1 -maxdepth 1 -printf '%f\n' | grep -vxF -f "$F/.w/files" | grep -v '^state-\|^work-\|^out-' | while read -r e; do rm -rf "${F:?}/$e"; done
	fi
	results+=("$(jq -nc --arg args "${argv[*]//$F/@F}" --arg expect "$expect" --arg token "$token" --argjson code "$code" \
		--arg first "$(printf '%s' "${first//$F/@F}" | cut -c1-400)" --arg class "$class" \
		--argjson crashed "$crashed" --argjson changed "$changed" --argjson leaked "$leaked" \
		'{args: $args, expect: $expect, token: $token, exit: $code, first_line: $first, class: $class, crashed: $crashed, changed: $changed, leaked: $leaked}')")
	printf '%-7s %3s %s\n' "$class" "$code" "${argv[*]//$F/@F}" >&2
	rm -f "$out" "$err"
}
# new: a fresh state dir $S (mode 0755) and working dir $W for the next case
new() { rm -rf "${S:-/nonexistent}" "${W:-/nonexistent}"; S=$(mktemp -d "$F/state-XXXXXX"); chmod 755 "$S"; W=$(mktemp -d "$F/work-XXXXXX"); }
T=/sys/class/net/d0/tx_queue_len

# 1. Journals naming files outside tune's targets: status, revert, persist.
while IFS='|' read -r kind dev tgt val token; do
	[ -z "$kind" ] && continue
	for cmd in status "revert --all" "persist --root @S/root"; do
		new; journal "$kind" "$dev" "$tgt" "$val" "old-34"; mkdir -p "$S/root"
		# shellcheck disable=SC2086 # $cmd is a sub-command and its flags, split on purpose
		c refuse "$token" tune $cmd --state-dir @S
	done
	new; actions "$kind" "$dev" "$tgt" "$val"
	c refuse "$token" tune apply --actions "$F/acts.json" --state-dir @S
done <<T
sysfs|d0|/etc/passwd|500|/etc/passwd
sysfs|d0|../../etc/passwd|500|../../etc/passwd
sysfs||/sys/../etc/shadow|500|/sys/../etc/shadow
sysfs|d0|/sys/class/net/d0/../../../../etc/passwd|500|/etc/passwd
sysfs|d0|$F/canary|500|canary
sysfs||/sys/kernel/mm/ksm/pages_to_scan|500|pages_to_scan
sysfs||/proc/sys/kernel/hostname|owned|hostname
sysfs|d0|/sys/class/net/d1/tx_queue_len|500|d1
sysfs|d0|/sys/class/net/d0/ifalias|owned|ifalias
sysfs||/sys/devices/system/cpu/cpu0/online|0|online
sysfs|d0|/sys//class/net/d0/tx_queue_len|500|tx_queue_len
sysfs|d0|/sys/class/net/d0/tx_queue_len|5", RUN+="/bin/touch /tmp/pwned|RUN
sysfs|d0|/sys/class/net/d0/tx_queue_len|5 6|5 6
sysctl||kernel.hostname|owned|kernel.hostname
sysctl||net/../../kernel/hostname|owned|hostname
sysctl||net..core.somaxconn|5|net..core
governor||0/../../../../etc/passwd|performance|passwd
irq-affinity|d0|../../etc/passwd|0|passwd
ethtool|-s|rx-gro|on|-s
qdisc|d0|root|fq_codel;rm|fq_codel;rm
napi-set||1:../../etc/passwd|1|passwd
bogus|d0|$T|5|bogus
T

# 2. Entries of another host, namespace or device, or stripped of them.
new; journal sysfs d0 $T 500 777 host=machine-id:elsewhere; c ok "another machine" tune status --state-dir @S
new; journal sysfs d0 $T 500 777 host=machine-id:elsewhere; c refuse "another machine" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777 host=machine-id:elsewhere; mkdir "$S/root"; c refuse "another machine" tune persist --state-dir @S --root @S/root
new; journal sysfs d0 $T 500 777 netns="net:[1]"; c refuse "net:[1]" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777 netns="net:[1]"; mkdir "$S/root"; c refuse "net:[1]" tune persist --state-dir @S --root @S/root
new; journal sysfs d0 $T 500 777 mac=02:00:00:00:00:01; c ok "another device" tune status --state-dir @S
new; journal sysfs d0 $T 500 777 mac=02:00:00:00:00:01; c ok "another device" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777 mac=02:00:00:00:00:01; mkdir "$S/root"; c refuse "another device" tune persist --state-dir @S --root @S/root
new; journal sysfs d0 $T 500 777 mac= ifindex=99; c ok "new ifindex" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777 host=; c refuse "no host" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777 netns=; c refuse "no network namespace" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777 netns=; mkdir "$S/root"; c refuse "no network namespace" tune persist --state-dir @S --root @S/root
new; journal sysfs d0 $T 500 777 ifindex=0; c refuse "ifindex" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777 ifindex=0; c refuse "ifindex" tune status --state-dir @S
new; journal sysfs nosuch0 /sys/class/net/nosuch0/tx_queue_len 500 777; c ok "nosuch0" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777 version=9; c refuse "newer" tune revert --all --state-dir @S
new; journal sysctl "" net.core.somaxconn 500 4096 state=nonsense; c refuse "nonsense" tune revert --all --state-dir @S

# 3. State directories and files that are not wirespeed's own record.
new; ln -s /dev/zero "$S/tune-journal.json"; c refuse "symbolic link" tune status --state-dir @S
new; ln -s /dev/zero "$S/tune-journal.json"; c refuse "symbolic link" tune revert --all --state-dir @S
new; ln -s /etc/passwd "$S/tune-journal.json"; c refuse "symbolic link" tune status --state-dir @S
new; mkfifo "$S/tune-journal.json"; c refuse "not a regular file" tune status --state-dir @S
new; mkfifo "$S/tune-journal.json"; c refuse "not a regular file" tune revert --all --state-dir @S
new; truncate -s 9M "$S/tune-journal.json"; c refuse "bytes" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777; chmod 666 "$S/tune-journal.json"; c refuse "writable by group or others" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777; chmod 777 "$S"; c refuse "writable by group or others" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777; chown 65534 "$S"; c refuse "owned by uid 65534" tune revert --all --state-dir @S
new; journal sysfs d0 $T 500 777; chown 65534 "$S/tune-journal.json"; c refuse "owned by uid 65534" tune status --state-dir @S
new; c refuse "not a directory" tune status --state-dir "$F/canary"
new; c refuse "state-dir" tune status --state-dir ""
new; rm -rf "$S"; ln -s /dev/zero "$S"; c refuse "not a directory" tune revert --all --state-dir @S; rm -f "$S"
# persist's manifest
M='{"version":1,"root":"/","files":["FILE"]}'
for f in "../../../../../../..$F/canary" "$F/canary" /etc/passwd "/etc/udev/rules.d/../../passwd"; do
	new; journal sysfs d0 $T 500 777; mkdir "$S/root"; echo "${M/FILE/$f}" > "$S/persist.json"
	c refuse "not a file persist writes" tune persist --remove --state-dir @S --root @S/root
done
new; mkfifo "$S/persist.json"; mkdir "$S/root"; c refuse "not a regular file" tune persist --remove --state-dir @S --root @S/root
new; ln -s /dev/zero "$S/persist.json"; mkdir "$S/root"; c refuse "symbolic link" tune persist --remove --state-dir @S --root @S/root
new; truncate -s 1M "$S/persist.json"; mkdir "$S/root"; c refuse "bytes" tune persist --remove --state-dir @S --root @S/root
new; echo "${M/FILE//etc/sysctl.d/90-wirespeed-tune.conf}" > "$S/persist.json"; chown 65534 "$S/persist.json"; mkdir "$S/root"
c refuse "owned by uid 65534" tune persist --remove --state-dir @S --root @S/root
new; chmod 777 "$S"; mkdir "$S/root"; c refuse "writable by group or others" tune persist --remove --state-dir @S --root @S/root
new; journal sysfs d0 $T 500 777; mkdir -p "$S/root/etc"; ln -s "$F" "$S/root/etc/udev"
c refuse "symbolic link" tune persist --state-dir @S --root @S/root

# 4. --actions files.
new; c refuse "FIFO" tune apply --actions "$F/fifo" --state-dir @S
new; c refuse "character device" tune apply --actions "$F/zero" --state-dir @S
new; c refuse "bytes" tune apply --actions "$F/huge.json" --state-dir @S
new; c refuse "null.json" tune apply --actions "$F/null.json" --state-dir @S
new; c refuse "garbage.json" tune plan --actions "$F/garbage.json"
new; jq -nc '[{id:"a",kind:"sysctl",target:"net.core.somaxconn",value:"100"},{id:"a",kind:"sysctl",target:"net.core.somaxconn",value:"200"}]' > "$F/acts.json"
c refuse '"a"' tune apply --actions "$F/acts.json" --state-dir @S
new; echo '{"schema":"wirespeed-doctor/1","host":"pi-in-the-attic","kernel":"6.18.20","actions":[{"id":"s","kind":"sysctl","target":"net.core.somaxconn","value":"100"}]}' > "$F/acts.json"
c refuse "pi-in-the-attic" tune apply --actions "$F/acts.json" --state-dir @S
new; actions sysfs d0 /sys/class/net/d0/queues/rx-0/rps_cpus ffff; c refuse "CPU" tune apply --actions "$F/acts.json" --state-dir @S
new; actions irq-affinity d0 1 0; c refuse "IRQ 1" tune apply --actions "$F/acts.json" --state-dir @S
new; actions napi-set "" 99999:threaded 1; c refuse "99999" tune apply --actions "$F/acts.json" --state-dir @S
new; actions sysfs nosuch0 /sys/class/net/nosuch0/tx_queue_len 5; c refuse "nosuch0" tune apply --actions "$F/acts.json" --state-dir @S
new; actions sysfs d0 $T -5; c refuse "tx_queue_len" tune apply --actions "$F/acts.json" --state-dir @S

# 5. Flags: empty, mode-less, children without an end.
actions sysfs d0 $T 500
new; c refuse "--only" tune apply --actions "$F/acts.json" --only "" --state-dir @S
new; c refuse "--verify-cmd" tune apply --actions "$F/acts.json" --verify-cmd "" --state-dir @S
new; c refuse "--fail-on" doctor --from "$SNAP" --fail-on ""
new; c refuse "--qdisc" tune apply --actions "$F/acts.json" --qdisc fq --state-dir @S
new; c refuse "--nonsense" tune apply --actions "$F/acts.json" --peer 198.18.0.2 --bench-args "--nonsense" --state-dir @S
new; c refuse "2s" tune apply --actions "$F/acts.json" --verify-cmd "sleep 1000" --verify-timeout 2s --pairs 2 --state-dir @S
new; c refuse "-x" lab up -x
new; c refuse "bench.json" report "$F/bench.json" -o "$F/bench.json"
new; c refuse "198.18.0.2" bench --peer 198.18.0.2 -t 2s --repeat 1

# 6. Results and snapshots as input.
for cmd in show "compare @F/bench.json" "report -o @S/r.html" "doctor --from $SNAP --result"; do
	for f in fifo zero huge.json garbage.json null.json obj.json noruns.json broken.json; do
		e=refuse t=$f
		case "$cmd/$f" in
		show/broken.json) t="no throughput" ;;                  # refused, saying it is missing
		report*/broken.json) e=ok t="no throughput" ;;         # the page names what is missing
		doctor*/noruns.json | doctor*/broken.json) e=ok t="no observation" ;; # diagnosed without it, said so
		esac
		new
		# shellcheck disable=SC2086 # $cmd is a command and its flags, split on purpose
		c "$e" "$t" ${cmd//@F/$F} "$F/$f" # (c replaces @S)
	done
done
for cmd in "inspect --from" "doctor --from"; do
	for f in fifo zero garbage.json null-answers.tar.gz link-out.tar.gz link-up.tar.gz; do
		case $f in link-*) e=any ;; *) e=refuse ;; esac
		new
		# shellcheck disable=SC2086 # as above
		c "$e" "$f" $cmd "$F/$f"
	done
done

# 7. Issue 40: outputs that are devices, what goes into files other programs
# parse, flags read late or not at all, control characters in messages.
new; c refuse "no space left" report -o "$F/full" "$F/bench.json"
new; c ok "wrote" report -o "$F/null" "$F/bench.json"
new; c refuse "directory" bench --peer 198.18.0.2 -t 2s --out @S
new; actions sysctl "" $'net.core.netdev_budget\nkernel.hostname' 600; c refuse "not a sysctl name" tune apply --actions "$F/acts.json" --state-dir @S
new; actions sysctl "" net.core.netdev_budget $'600\r'; c refuse "control characters" tune apply --actions "$F/acts.json" --state-dir @S
new; actions sysfs d0 $T 500; c refuse "would be ignored" tune plan --actions "$F/acts.json" d0
new; c refuse "100ms" doctor --observe 0.001
new; c refuse "--bogus" tune apply --actions "$F/acts.json" --lab --bench-args "--bogus 1" --state-dir @S
new; c refuse "never negative" tune apply --actions "$F/acts.json" --verify-cmd "echo -5" --pairs 2 --state-dir @S
new; c refuse "name the action ids" tune revert --keep --all --state-dir @S
new; c refuse '\x1b' bench --peer 198.18.0.2 --iface $'e\x1b[2J'

rm -rf "$S" "$W"
printf '%s\n' "${results[@]}" | jq -s --arg bin "$BIN" --arg version "$("$BIN" --version)" '
	{binary: $bin, version: $version, tried: length,
	 clear: (map(select(.class == "clear")) | length), unclear: (map(select(.class == "unclear")) | length),
	 wrong: (map(select(.class == "wrong")) | length), hang: (map(select(.class == "hang")) | length),
	 host_changed: false, cases: .}' > "$OUT"
jq -r '"\(.version): \(.tried) hostile inputs: \(.clear) clear, \(.unclear) unclear, \(.wrong) wrong, \(.hang) hang"' "$OUT"
