#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
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
#      repeatability (CoV of each mode's runs). The host-speed canary
#      (experiments/selfbench/canary) runs just before and just after each
#      of these runs: canary-MODE-N.json.
#   2. bench at a fixed rate (--bitrate RATE, well below saturation),
#      REPEAT times each of: observation off, and light continuous with each
#      program set in PROGRAMS (--observe-programs P), interleaved and
#      rotated: rate-off-N.json, rate-light-P-N.json. Gives observe's CPU
#      cost (busy CPU per Gbit/s, paired ratios to "off").
#   3. scrapeload on the exporter (--observe off): CPU per scrape between
#      full snapshots and with a full snapshot every scrape (--refresh 0),
#      and latency under 20 concurrent scrapers; with BEFORE=path/to/an old
#      wirespeed binary, that one too, interleaved.
#   4. per program set in PROGRAMS, one more light run with
#      kernel.bpf_stats_enabled (restored after), not counted in 1 or 2:
#      bpftool's program list just before it (bpfprogs-P-0.json, to tell
#      the programs it loads), and run_cnt and run_time_ns of each program
#      SECS-4 s apart under load (bpfprogs-P-1.json, -2.json) - where the
#      per-event cost goes.
#   5. env.json: load average, CPU count and kernel before and after; the
#      summary marks the run invalid when the 1-minute load average before
#      it was 0.5 or more (the validity rule: an idle machine); it waits up
#      to 5 min for the load average to fall below 0.5 before starting.
#      bpfprogs-start.json(.gz): bpftool's program list at the start; the run is
#      invalid when a tracing program (someone's observe) was attached.
#
# Environment: WIRESPEED (default ./wirespeed), BEFORE, REPEAT (default 5),
# SECONDS_PER_RUN (default 10), RATE (step 2's cap, default 3G), PROGRAMS
# (default "btf classic"; empty: one light mode, "light-default", with no
# --observe-programs flag). Needs root, iperf3, ethtool, go, bpftool.
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
RATE=${RATE:-3G}
PROGRAMS=${PROGRAMS-btf classic}
bad() { echo "self-bench: $*" >&2; exit 2; }
case $REPEAT in '' | *[!0-9]* | 0*) bad "REPEAT=$REPEAT: want a whole number from 1" ;; esac
case $SECS in '' | *[!0-9]* | 0*) bad "SECONDS_PER_RUN=$SECS: want a whole number of seconds from 1" ;; esac
# bench checks the rate itself; this keeps a typo from failing halfway
echo "$RATE" | grep -Eq '^[0-9]+(\.[0-9]+)?[KMGkmg]?$' || bad "RATE=$RATE: want a rate like 3G or 500M"
sets=
for p in $PROGRAMS; do
	case $p in *[!a-z0-9]*) bad "PROGRAMS: \"$p\": want words of a-z and 0-9 (they name files)" ;; esac
	sets="$sets $p"
done
[ -n "$sets" ] || sets=default # PROGRAMS empty: no --observe-programs flag
if [ "$sets" != default ] && ! "$WS" bench -h 2>&1 | grep -q -- -observe-programs; then
	bad "PROGRAMS=\"$PROGRAMS\": $WS has no bench --observe-programs (PROGRAMS= runs without it)"
fi
out=${1:-experiments/selfbench/data/$(date -u +%Y%m%dT%H%M%SZ)-$(git describe --always --dirty 2>/dev/null || echo dev)}

# the canary is built before the wait below (a build raises the load)
tmp=$(mktemp -d)
stats_was=
cleanup() {
	[ -z "$stats_was" ] || sysctl -q kernel.bpf_stats_enabled="$stats_was"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# experiments/ is a module of its own: go -C builds in it
go -C experiments build -o "$tmp/canary" ./selfbench/canary
mkdir -p "$out"

# the validity rule wants an idle machine: wait up to 5 min for the 1-minute
# load average to fall below 0.5 (a build or a run just before raises it)
waited=0
while [ "$(awk '{print ($1 < 0.5)}' /proc/loadavg)" != 1 ] && [ "$waited" -lt 300 ]; do
	[ "$waited" = 0 ] && echo "self-bench: waiting for the load average ($(cut -d' ' -f1 /proc/loadavg)) to fall below 0.5" >&2
	sleep 10
	waited=$((waited + 10))
done

# the second validity rule: no tracing BPF program attached when the run
# starts (another observe left running would load every measurement)
bpftool prog show -j >"$out/bpfprogs-start.json"
if grep -Eq '"type": ?"(tracepoint|raw_tracepoint|raw_tracepoint_writable|tracing|kprobe|perf_event)"' "$out/bpfprogs-start.json"; then
	echo "self-bench: tracing BPF programs are attached (bpftool prog show): this run will be marked invalid" >&2
fi

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

flags() {
	case $1 in
	off) echo "--observe off" ;;
	light) echo "--observe light --observe-sample 100%" ;;
	sampled) echo "--observe light --observe-sample 10%" ;;
	light-default) echo "--observe light --observe-sample 100%" ;;
	light-*) echo "--observe light --observe-sample 100% --observe-programs ${1#light-}" ;;
	esac
}
# rotated I WORD...: the words rotated left by I-1 (off light sampled,
# light sampled off, sampled off light, ...)
rotated() {
	k=$(( ($1 - 1) % ($# - 1) ))
	shift
	while [ "$k" -gt 0 ]; do
		first=$1
		shift
		set -- "$@" "$first"
		k=$((k - 1))
	done
	echo "$@"
}

i=1
while [ "$i" -le "$REPEAT" ]; do
	for m in $(rotated "$i" off light sampled); do
		echo "self-bench: bench $i/$REPEAT, observation $m" >&2
		before=$("$tmp/canary")
		# shellcheck disable=SC2046 # the flags, split on purpose
		"$WS" bench --gro on --sender-offloads off -t "${SECS}s" $(flags "$m") \
			--out "$out/bench-$m-$i.json" >/dev/null
		printf '{"before":%s,"after":%s}\n' "$before" "$("$tmp/canary")" >"$out/canary-$m-$i.json"
	done
	i=$((i + 1))
done

ratemodes=off
for p in $sets; do ratemodes="$ratemodes light-$p"; done
i=1
while [ "$i" -le "$REPEAT" ]; do
	# shellcheck disable=SC2086 # the mode names, split on purpose
	for m in $(rotated "$i" $ratemodes); do
		echo "self-bench: bench at $RATE $i/$REPEAT, observation $m" >&2
		# shellcheck disable=SC2046
		"$WS" bench --gro on --sender-offloads off -t "${SECS}s" --bitrate "$RATE" $(flags "$m") \
			--out "$out/rate-$m-$i.json" >/dev/null
	done
	i=$((i + 1))
done

stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q kernel.bpf_stats_enabled=1
# the load runs from ~4 s after the start (lab, 2 s idle, 1 s omitted) for
# SECS: sample at 6 s and SECS-4 s later (short test runs: at 4 s and 1 s
# later)
at=6
gap=$((SECS - 4))
[ "$SECS" -ge 8 ] || { at=4 gap=1; }
progs() { printf '{"time":%s,"progs":%s}\n' "$(date +%s.%N)" "$(bpftool prog show -j)" >"$1"; }
for p in $sets; do
	echo "self-bench: one more light run ($p), with BPF program statistics" >&2
	progs "$out/bpfprogs-$p-0.json"
	(
		sleep "$at"
		progs "$out/bpfprogs-$p-1.json"
		sleep "$gap"
		progs "$out/bpfprogs-$p-2.json"
	) &
	# shellcheck disable=SC2046
	"$WS" bench --gro on --sender-offloads off -t "${SECS}s" $(flags "light-$p") \
		--out "$out/bpfstats-light-$p.json" >/dev/null
	wait
done
sysctl -q kernel.bpf_stats_enabled="$stats_was"
stats_was=

echo "self-bench: exporter" >&2
set -- -bin "now=$WS" -bin "now-full=$WS --refresh 0"
[ -n "${BEFORE:-}" ] && set -- "$@" -bin "before=$BEFORE"
go -C experiments build -o "$tmp/scrapeload" ./selfbench/scrapeload
"$tmp/scrapeload" "$@" -rounds 2 -o "$out/scrapes.json" 2>&1 |
	grep -v '^wirespeed exporter:' >&2 || true
[ -s "$out/scrapes.json" ] || { echo "self-bench: scrapeload wrote nothing" >&2; exit 1; }

{
	cat "$out/env.json.part"
	printf '"after":'
	env_json
	printf '}\n'
} >"$out/env.json"
rm -f "$out/env.json.part"
gzip -9 "$out"/bench-*.json "$out"/rate-*.json "$out"/bpfstats-light-*.json "$out"/bpfprogs-*.json
echo "self-bench: raw files in $out; experiments/archive-run.sh $out makes the run one file, then make experiments-update puts its table in docs/results.md" >&2
