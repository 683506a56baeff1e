#!/bin/sh
# self-bench.sh [OUT_DIR] - the instruments' own cost and noise (issue 20)
# in one run, written as raw files to OUT_DIR (default
# experiments/selfbench/data/DATE-COMMIT); experiments/selfbench computes
# the table in docs/results.md from them (make experiments-update).
#
#   1. bench in the host lab at full veth rate (receiver GRO on, sender
#      offloads off), REPEAT times each of: observation off, --observe light
#      continuous (--observe-sample 100%), and sampled 10% (bench's default);
#      the three modes interleaved, the order rotated each repetition.
#      Gives observe's throughput cost (paired ratios to "off") and bench's
#      repeatability (CoV of each mode's runs).
#   2. scrapeload on the exporter (--observe off): CPU per scrape between
#      full snapshots and with a full snapshot every scrape (--refresh 0),
#      and latency under 20 concurrent scrapers; with BEFORE=path/to/an old
#      wirespeed binary, that one too, interleaved.
#   3. one more light run with kernel.bpf_stats_enabled (restored after),
#      not counted in 1: bpftool's run_cnt and run_time_ns of each program
#      SECS-4 s apart under load - where the per-event cost goes.
#   4. env.json: load average, CPU count and kernel before and after; the
#      summary marks the run invalid when the 1-minute load average before
#      it was 0.5 or more (the validity rule: an idle machine); it waits up
#      to 5 min for the load average to fall below 0.5 before starting.
#
# Environment: WIRESPEED (default ./wirespeed), BEFORE, REPEAT (default 5),
# SECONDS_PER_RUN (default 10). Needs root, iperf3, ethtool, go.
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "self-bench: needs root (host lab namespaces, eBPF)" >&2; exit 1; }
for t in iperf3 ethtool go bpftool; do
	command -v $t >/dev/null || { echo "self-bench: missing $t (sudo make setup)" >&2; exit 1; }
done
WS=${WIRESPEED:-./wirespeed}
[ -x "$WS" ] || { echo "self-bench: no $WS: run make build first" >&2; exit 1; }
REPEAT=${REPEAT:-5}
SECS=${SECONDS_PER_RUN:-10}
out=${1:-experiments/selfbench/data/$(date -u +%Y%m%dT%H%M%SZ)-$(git describe --always --dirty 2>/dev/null || echo dev)}
mkdir -p "$out"

# the validity rule wants an idle machine: wait up to 5 min for the 1-minute
# load average to fall below 0.5 (a build or a run just before raises it)
waited=0
while [ "$(awk '{print ($1 < 0.5)}' /proc/loadavg)" != 1 ] && [ "$waited" -lt 300 ]; do
	[ "$waited" = 0 ] && echo "self-bench: waiting for the load average ($(cut -d' ' -f1 /proc/loadavg)) to fall below 0.5" >&2
	sleep 10
	waited=$((waited + 10))
done

env_json() {
	printf '{"when":"%s","loadavg":"%s","cpus":%s,"kernel":"%s","commit":"%s"}\n' \
		"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)" \
		"$(uname -r)" "$(git describe --always --dirty 2>/dev/null || echo dev)"
}
{
	printf '{"before":'
	env_json | tr -d '\n'
	printf ',\n'
} >"$out/env.json.part"

modes="off light sampled"
flags() {
	case $1 in
	off) echo "--observe off" ;;
	light) echo "--observe light --observe-sample 100%" ;;
	sampled) echo "--observe light --observe-sample 10%" ;;
	esac
}
i=1
while [ "$i" -le "$REPEAT" ]; do
	# rotate: off light sampled, light sampled off, sampled off light, ...
	# shellcheck disable=SC2086 # the mode names, split on purpose
	set -- $modes
	r=$(( (i - 1) % 3 ))
	while [ "$r" -gt 0 ]; do
		first=$1
		shift
		set -- "$@" "$first"
		r=$((r - 1))
	done
	for m in "$@"; do
		echo "self-bench: bench $i/$REPEAT, observation $m" >&2
		# shellcheck disable=SC2046
		"$WS" bench --gro on --sender-offloads off -t "${SECS}s" $(flags "$m") \
			--out "$out/bench-$m-$i.json" >/dev/null
	done
	i=$((i + 1))
done

echo "self-bench: one more light run, with BPF program statistics" >&2
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled="$stats_was"' EXIT
sysctl -q kernel.bpf_stats_enabled=1
# the load runs from ~4 s after the start (lab, 2 s idle, 1 s omitted) for
# SECS: sample at 6 s and SECS-4 s later
gap=$((SECS - 4))
[ "$gap" -ge 1 ] || gap=1
progs() { printf '{"time":%s,"progs":%s}\n' "$(date +%s.%N)" "$(bpftool prog show -j)" >"$1"; }
(
	sleep 6
	progs "$out/bpfprogs-1.json"
	sleep "$gap"
	progs "$out/bpfprogs-2.json"
) &
# shellcheck disable=SC2046
"$WS" bench --gro on --sender-offloads off -t "${SECS}s" $(flags light) \
	--out "$out/bpfstats-light.json" >/dev/null
wait
sysctl -q kernel.bpf_stats_enabled="$stats_was"

echo "self-bench: exporter" >&2
set -- -bin "now=$WS" -bin "now-full=$WS --refresh 0"
[ -n "${BEFORE:-}" ] && set -- "$@" -bin "before=$BEFORE"
go run ./experiments/selfbench/scrapeload "$@" -rounds 2 -o "$out/scrapes.json" 2>&1 |
	grep -v '^wirespeed exporter:' >&2 || true
[ -s "$out/scrapes.json" ] || { echo "self-bench: scrapeload wrote nothing" >&2; exit 1; }

{
	cat "$out/env.json.part"
	printf '"after":'
	env_json
	printf '}\n'
} >"$out/env.json"
rm -f "$out/env.json.part"
gzip -9 "$out"/bench-*.json "$out"/bpfstats-light.json "$out"/bpfprogs-*.json
echo "self-bench: raw files in $out; make experiments-update puts its table in docs/results.md" >&2
