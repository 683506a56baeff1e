#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Throughput cost of `wirespeed observe` versus no tracing and versus the
# equivalent bpftrace script (experiments/observeoverhead/observe-equivalent.bt), in a host lab:
# two namespaces, a veth pair, receiver GRO on (veth NAPI + GRO) and sender
# TSO/GSO/GRO off, so every wire-sized segment passes napi_gro_receive - the
# busiest case for the tracepoints. TCP bulk with iperf3. Modes: A no
# tracing, B wirespeed observe, L wirespeed observe --light, S wirespeed
# observe --light --sample 10% (what bench uses), C bpftrace; interleaved
# A B L S C, B L S C A, L S C A B, ... so drift on this shared machine hits
# all alike.
#
# Usage: sudo experiments/observeoverhead/observe-overhead.sh [REPS] [SECONDS]   (default 6 8;
#        REPS 0: only the program cost part)
#        WIRESPEED=path/to/wirespeed to use a built binary (default: go build)
#        STATS=0 to skip the second part
#        MODES=AS to run only some modes (letters as above; A is required,
#        the ratios are to it), rotated the same way
# Prints one line per run and a summary table (markdown) at the end. Then,
# unless STATS=0, one more run each of B, L, S and C with kernel.bpf_stats_enabled
# set (restored afterwards) to show what the BPF programs themselves cost:
# events, ns per event and CPU time, which on a shared machine is steadier
# than throughput. (The tracepoints' own record building is not in it.)
set -eu

REPS=${1:-6}
SECS=${2:-8}
MODES=${MODES:-ABLSC}
case $MODES in
*A*) ;;
*) echo "MODES=$MODES: A (no tracing) must be one of them" >&2; exit 2 ;;
esac
[ -z "$(echo "$MODES" | tr -d ABLSC)" ] || { echo "MODES=$MODES: letters from ABLSC only" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
tag=$$
S=ws-ovh$tag-s
R=ws-ovh$tag-r
SIF=wsovh$tag-s
RIF=wsovh$tag-r
work=$(mktemp -d)

[ "$(id -u)" = 0 ] || { echo "needs root (namespaces, BPF)" >&2; exit 1; }
for t in ip ethtool iperf3 bpftrace python3; do
	command -v $t >/dev/null || { echo "missing $t" >&2; exit 1; }
done
if [ -z "${WIRESPEED:-}" ]; then
	(cd "$here/../.." && go build -o "$work/wirespeed" ./cmd/wirespeed)
	WIRESPEED=$work/wirespeed
fi

tracer=
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
cleanup() {
	sysctl -q kernel.bpf_stats_enabled="$stats_was" 2>/dev/null || true
	if [ -n "$tracer" ]; then kill -INT "$tracer" 2>/dev/null || true; wait "$tracer" 2>/dev/null || true; fi
	ip netns pids "$R" 2>/dev/null | xargs -r kill 2>/dev/null || true
	ip netns del "$S" 2>/dev/null || true
	ip netns del "$R" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$S"
ip netns add "$R"
ip link add "$SIF" netns "$S" type veth peer name "$RIF" netns "$R"
ip -n "$S" addr add 198.18.0.1/30 dev "$SIF"
ip -n "$R" addr add 198.18.0.2/30 dev "$RIF"
ip -n "$S" link set "$SIF" up
ip -n "$R" link set "$RIF" up
ip netns exec "$S" ethtool -K "$SIF" tso off gso off gro off
ip netns exec "$R" ethtool -K "$RIF" gro on
ip netns exec "$R" iperf3 -s >/dev/null 2>&1 &
sleep 1

start_tracer() {
	case $1 in
	A) tracer= ;;
	B|L)	light=
		[ "$1" = L ] && light=--light
		"$WIRESPEED" observe --duration 3600 --json $light >"$work/$1.out" 2>&1 &
		tracer=$!
		# attached when the process holds its BPF links
		for _ in $(seq 50); do
			n=$(grep -l '^link_id' /proc/$tracer/fdinfo/* 2>/dev/null | wc -l)
			[ "$n" -ge 8 ] && break
			sleep 0.2
		done ;;
	S)	"$WIRESPEED" observe --duration 3600 --json --light --sample 10% >"$work/S.out" 2>&1 &
		tracer=$!
		# sampled: the links come and go; ready when the programs are
		# loaded (the first window opens right after)
		for _ in $(seq 50); do
			n=$(grep -l '^prog_type' /proc/$tracer/fdinfo/* 2>/dev/null | wc -l)
			[ "$n" -ge 8 ] && break
			sleep 0.2
		done ;;
	C)	bpftrace "$here/observe-equivalent.bt" >"$work/C.out" 2>&1 &
		tracer=$!
		for _ in $(seq 100); do
			grep -q Attaching "$work/C.out" && break
			sleep 0.2
		done
		sleep 1 ;;
	esac
}

stop_tracer() {
	if [ -n "$tracer" ]; then
		kill -INT "$tracer"
		wait "$tracer" || true
		tracer=
	fi
}

# Tracepoint BPF programs loaded by anyone but this script's tracer: another
# tool (or a wirespeed bench run) tracing the same events taxes every mode
# and adds noise, so each run first waits until there are none - up to
# QUIET_WAIT seconds (default 300) once; after a timeout it stops waiting -
# and the summary says how many runs had company.
foreign() {
	mine=" "
	if [ -n "$tracer" ]; then
		mine=" $(grep -h '^prog_id' /proc/"$tracer"/fdinfo/* 2>/dev/null | awk '{print $2}' | tr '\n' ' ') "
	fi
	bpftool prog show 2>/dev/null | awk -F: '/: tracepoint / {print $1}' | while read -r id; do
		case "$mine" in *" $id "*) ;; *) echo "$id" ;; esac
	done | wc -l
}
quiet_wait=${QUIET_WAIT:-300}
wait_quiet() {
	n=0
	while [ "$(foreign)" != 0 ]; do
		if [ $n -ge "$quiet_wait" ]; then
			[ "$quiet_wait" -gt 0 ] && echo "warning: other tracepoint programs stay loaded; measuring anyway" >&2
			quiet_wait=0
			echo x >>"$work/dirty"
			return 0
		fi
		sleep 1
		n=$((n + 1))
	done
}

gbps() {
	python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9))'
}

: >"$work/results"
i=0
while [ $i -lt "$REPS" ]; do
	# MODES rotated by one more each rep: A B L S C, B L S C A, ...
	order=$(awk -v s="$MODES" -v k=$((i % ${#MODES})) 'BEGIN { r = substr(s, k + 1) substr(s, 1, k); gsub(/./, "& ", r); print r }')
	for m in $order; do
		wait_quiet
		start_tracer "$m"
		g=$(ip netns exec "$S" iperf3 -c 198.18.0.2 -t "$SECS" -O 1 -P 2 -J | gbps)
		stop_tracer
		echo "rep $((i + 1)) mode $m: $g Gbit/s"
		echo "$m $g" >>"$work/results"
	done
	i=$((i + 1))
done

[ "$REPS" -gt 0 ] && [ -f "$work/dirty" ] && echo "$(wc -l <"$work/dirty") runs had other tracepoint programs loaded"
[ "$REPS" -gt 0 ] && python3 - "$work/results" "$REPS" "$SECS" "$MODES" <<'PY'
import statistics, sys
modes = sys.argv[4]
rows = [l.split() for l in open(sys.argv[1])]
runs, reps = {}, []
for i in range(0, len(rows) - len(modes) + 1, len(modes)):  # one rep = one run of each mode
    rep = {m: float(g) for m, g in rows[i:i + len(modes)]}
    reps.append(rep)
    for m, g in rep.items():
        runs.setdefault(m, []).append(g)
names = {"A": "no tracing", "B": "wirespeed observe", "L": "wirespeed observe --light",
         "S": "wirespeed observe --light --sample 10%", "C": "bpftrace, same events"}
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]
print()
print("| mode | runs | median Gbit/s | min-max | paired ratio to no tracing, median (IQR) |")
print("|---|---|---|---|---|")
for m in modes:
    v = runs[m]
    r = [x[m] / x["A"] for x in reps]
    print("| %s | %d | %.2f | %.2f-%.2f | %+.1f%% (%+.1f%% .. %+.1f%%) |" % (
        names[m], len(v), statistics.median(v), min(v), max(v),
        100 * (statistics.median(r) - 1), 100 * (q(r, 0.25) - 1), 100 * (q(r, 0.75) - 1)))
print()
print("%s reps x %s s, iperf3 -P 2 TCP, veth GRO on, sender TSO/GSO off; a rep runs each mode once, back to back" % (sys.argv[2], sys.argv[3]))
PY

[ "${STATS:-1}" = 0 ] && exit 0

# Program run time of the tracer's BPF programs (ids from its fdinfo).
prog_stats() {
	ids=$(grep -h '^prog_id' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u)
	for id in $ids; do bpftool prog show id "$id" -j; echo; done
}
echo
echo "BPF program cost (kernel.bpf_stats_enabled=1 during one run each):"
sysctl -q kernel.bpf_stats_enabled=1
for m in $(echo "$MODES" | tr -d A | sed 's/./& /g'); do
	wait_quiet
	start_tracer "$m"
	prog_stats "$tracer" >"$work/$m.before"
	t0=$(date +%s.%N)
	g=$(ip netns exec "$S" iperf3 -c 198.18.0.2 -t "$SECS" -O 1 -P 2 -J | gbps)
	t1=$(date +%s.%N)
	prog_stats "$tracer" >"$work/$m.after"
	stop_tracer
	python3 - "$m" "$g" "$t0" "$t1" "$work/$m.before" "$work/$m.after" <<'PY'
import json, sys
m, g = sys.argv[1], sys.argv[2]
secs = float(sys.argv[4]) - float(sys.argv[3])
sys.argv[3:] = sys.argv[4:]
def load(p):
    out = {}
    for line in open(p):
        line = line.strip()
        if line:
            j = json.loads(line)
            out[j["id"]] = j
    return out
b, a = load(sys.argv[4]), load(sys.argv[5])
name = {"B": "wirespeed observe", "L": "wirespeed observe --light",
        "S": "wirespeed observe --light --sample 10% (events/s and CPU per wall second)", "C": "bpftrace"}[m]
tot_ns = tot_cnt = 0
print("\n%s (%s Gbit/s in this run):" % (name, g))
print("| program | events/s | ns/event | CPU ms/s |")
print("|---|---|---|---|")
for i, p in sorted(a.items(), key=lambda kv: -kv[1].get("run_time_ns", 0)):
    cnt = p.get("run_cnt", 0) - b.get(i, {}).get("run_cnt", 0)
    ns = p.get("run_time_ns", 0) - b.get(i, {}).get("run_time_ns", 0)
    if cnt <= 0:
        continue
    tot_ns += ns; tot_cnt += cnt
    print("| %s | %.0f | %.0f | %.1f |" % (p.get("name", "?"), cnt / secs, ns / cnt, ns / secs / 1e6))
print("| all | %.0f | %.0f | %.1f |" % (tot_cnt / secs, tot_ns / max(tot_cnt, 1), tot_ns / secs / 1e6))
PY
done
sysctl -q kernel.bpf_stats_enabled="$stats_was"
