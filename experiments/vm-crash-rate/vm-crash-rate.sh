#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vm-crash-rate.sh OUT ROUNDS NAME=BINARY [NAME=BINARY...]
#
# How often does the x86 VM lab's default configuration crash? Boots
# 'wirespeed lab vm' with each named binary (no --accel: its default) in
# turn, ROUNDS times, alternating two scenarios - usb-gadget -t 5s and
# wireguard --threaded on -t 5s - and reversing the order of the binaries
# every other round, so host load hits every configuration alike. Extra
# 'lab vm' flags for all boots: VMFLAGS='--accel tcg' etc. With
# BOOT_EXEC='CMD' every round boots each binary once in the boot scenario
# running CMD instead (experiments/vm-crash-rate/vm-textpoke-toggle.sh is such a CMD).
#
# Every boot keeps its result directory OUT/runs/NNN-NAME-SCENARIO and adds
# one JSON line to OUT/boots.jsonl: config, scenario, accel, ok, failure
# kind (int3, another guard's name, timeout, guest, none), the first guard's
# line and uptime, boot_s, elapsed, and the bench's throughput. The tables
# are computed from OUT/boots.jsonl by experiments/vm-crash-rate (Go) once
# OUT is under its data/. Needs root.
set -u
if [ $# -lt 3 ]; then
	echo "usage: $0 OUT ROUNDS NAME=BINARY [NAME=BINARY...]" >&2
	exit 2
fi
out=$1 rounds=$2
shift 2
configs=("$@")
mkdir -p "$out/runs"
log=$out/boots.jsonl
n=$(find "$out/runs" -mindepth 1 -maxdepth 1 | wc -l)

record() { # record NAME BIN SCENARIO DIR RC
	python3 - "$@" <<'EOF' >>"$log"
import hashlib, json, os, re, sys
name, binary, scenario, d, rc = sys.argv[1:6]
vm = {}
try:
    with open(os.path.join(d, "vm.json")) as f:
        vm = json.load(f)
except (OSError, ValueError):
    pass
hits = vm.get("guards") or []
failure = vm.get("failure", "")
console = ""
try:
    with open(os.path.join(d, "console.log"), errors="replace") as f:
        console = f.read()
except OSError:
    pass
if not vm:
    kind = "no-vm.json"
elif vm.get("ok"):
    kind = "none"
elif "Oops: int3" in console:
    kind = "int3"
elif hits:
    kind = hits[0]["guard"]
elif "timed out" in failure:
    kind = "timeout"
else:
    kind = "guest"
first = hits[0] if hits else {}
m = re.match(r"\[\s*([0-9.]+)\]", first.get("text", ""))
rip = re.search(r"RIP: 0010:(\S+)", console)
tp = {}
for direction in ("send", "receive"):
    try:
        with open(os.path.join(d, f"bench-{direction}.json")) as f:
            b = json.load(f)
        tp[direction] = [r["throughput"][direction]["mbit"] for r in b.get("runs", [])]
    except (OSError, ValueError, KeyError):
        pass
exec_tail = ""
try:
    with open(os.path.join(d, "exec.txt"), errors="replace") as f:
        exec_tail = " ".join(f.read().split("\n")[-3:]).strip()
except OSError:
    pass
with open(binary, "rb") as f:
    sha = hashlib.sha256(f.read()).hexdigest()[:12]
print(json.dumps({
    "config": name, "binary_sha256": sha, "scenario": scenario, "dir": os.path.basename(d),
    "accel": vm.get("accel", ""), "ok": bool(vm.get("ok")), "exit": int(rc), "kind": kind,
    "guard": first.get("guard", ""), "guard_text": first.get("text", ""),
    "guard_uptime_s": float(m.group(1)) if m else None,
    "kernel_rip": rip.group(1) if (rip and kind != "none") else "",
    "stages": vm.get("stages") or [], "boot_s": vm.get("boot_s"), "elapsed_s": vm.get("elapsed_s"),
    "failure": failure.splitlines()[0][:200] if failure else "",
    "mbit": tp, "started": vm.get("started", ""), "exec": exec_tail,
}))
EOF
}

boot() { # boot NAME=BIN SCENARIO ARGS...
	local name=${1%%=*} bin=${1#*=} scenario=$2
	shift 2
	n=$((n + 1))
	local d
	d=$out/runs/$(printf %03d "$n")-$name-$scenario
	echo "$(date +%T) boot $n: $name $scenario $*" >&2
	# shellcheck disable=SC2086
	timeout 1200 "$bin" lab vm "$scenario" "$@" ${VMFLAGS:-} --out "$d" >"$d.lab.log" 2>&1
	local rc=$?
	mkdir -p "$d"
	mv "$d.lab.log" "$d/lab.log"
	record "$name" "$bin" "$scenario" "$d" "$rc"
	tail -n1 "$log" >&2
}

for ((r = 1; r <= rounds; r++)); do
	order=("${configs[@]}")
	if ((r % 2 == 0)); then
		order=()
		for ((i = ${#configs[@]} - 1; i >= 0; i--)); do order+=("${configs[i]}"); done
	fi
	if [ -n "${BOOT_EXEC:-}" ]; then
		for c in "${order[@]}"; do
			boot "$c" boot --exec "$BOOT_EXEC" --timeout "${BOOT_TIMEOUT:-5m}"
		done
		continue
	fi
	for c in "${order[@]}"; do
		boot "$c" usb-gadget -t 5s
	done
	# the second scenario in the reverse order: each configuration boots
	# first and last equally often
	for ((i = ${#order[@]} - 1; i >= 0; i--)); do
		boot "${order[i]}" wireguard --threaded on -t 5s
	done
done
echo "done: $log. Its tables: experiments/vm-crash-rate (Go) computes them from boots.jsonl under data/" >&2
