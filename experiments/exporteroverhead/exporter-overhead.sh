#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What `wirespeed exporter` costs a busy link: `wirespeed bench` in the host
# lab (veth pair between two namespaces, receiver GRO on, TCP bulk with
# iperf3) without and with the exporter running on this host and scraped
# every SCRAPE seconds, interleaved in pairs whose order alternates
# (off on, on off, ...) so drift on this shared machine hits both alike.
# bench's own eBPF observation is off (--observe off) so that only the
# exporter's (default: light, 10% sampled) is there when it runs.
#
# Usage: sudo experiments/exporteroverhead/exporter-overhead.sh [PAIRS] [SECONDS] [SCRAPE] [OUTDIR]
#        (default 6 10 2 experiments/exporteroverhead/data)
#        WIRESPEED=path/to/wirespeed to use a built binary (default: go build)
#        EXPORTER_ARGS="..." extra exporter flags (default none)
# Writes OUTDIR/pairN-{off,on}.json.gz (bench results, gzipped at the end;
# zcat or gunzip -k for 'wirespeed show'), OUTDIR/pairN-on.scrapes (one line
# per scrape: seconds, bytes) and OUTDIR/pairN-on.cputicks (the exporter's
# utime + stime in clock ticks), and prints each run's throughput.
set -eu

PAIRS=${1:-6}
SECS=${2:-10}
SCRAPE=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
OUT=${4:-$here/data}
PORT=${PORT:-19977}
work=$(mktemp -d)

[ "$(id -u)" = 0 ] || { echo "needs root (the bench lab, BPF)" >&2; exit 1; }
for t in curl python3 iperf3; do
	command -v $t >/dev/null || { echo "missing $t" >&2; exit 1; }
done
if [ -z "${WIRESPEED:-}" ]; then
	(cd "$here/../.." && go build -o "$work/wirespeed" ./cmd/wirespeed)
	WIRESPEED=$work/wirespeed
fi
mkdir -p "$OUT"

exp=
scraper=
cleanup() {
	if [ -n "$scraper" ]; then kill "$scraper" 2>/dev/null || true; fi
	if [ -n "$exp" ]; then kill -TERM "$exp" 2>/dev/null || true; wait "$exp" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_exporter() {
	# shellcheck disable=SC2086
	"$WIRESPEED" exporter --listen 127.0.0.1:$PORT ${EXPORTER_ARGS:-} >"$work/exporter.log" 2>&1 &
	exp=$!
	i=0
	until grep -q "serving http" "$work/exporter.log"; do
		i=$((i + 1))
		[ $i -lt 100 ] || { cat "$work/exporter.log" >&2; exit 1; }
		sleep 0.1
	done
	(
		while :; do
			curl -s -o /dev/null -w '%{time_total} %{size_download}\n' "http://127.0.0.1:$PORT/metrics"
			sleep "$SCRAPE"
		done
	) >"$1" &
	scraper=$!
}

stop_exporter() {
	kill "$scraper"
	wait "$scraper" 2>/dev/null || true
	scraper=
	# CPU time the exporter used (utime + stime, clock ticks)
	awk '{print $14 + $15}' "/proc/$exp/stat" >"$1"
	kill -TERM "$exp"
	wait "$exp" || { cat "$work/exporter.log" >&2; exit 1; }
	exp=
}

run() { # pair mode
	f=$OUT/pair$1-$2.json
	if [ "$2" = on ]; then
		start_exporter "$OUT/pair$1-on.scrapes"
	fi
	"$WIRESPEED" bench --gro on -t "${SECS}s" --observe off --out "$f" >/dev/null
	if [ "$2" = on ]; then
		stop_exporter "$OUT/pair$1-on.cputicks"
	fi
	python3 -c 'import json,sys; print(sys.argv[2], sys.argv[3], "%.0f Mbit/s" % json.load(open(sys.argv[1]))["runs"][0]["throughput"]["send"]["mbit"])' "$f" "$1" "$2"
}

p=1
while [ $p -le "$PAIRS" ]; do
	if [ $((p % 2)) = 1 ]; then run $p off; run $p on; else run $p on; run $p off; fi
	p=$((p + 1))
done

# The table in docs/results.md is computed from these files by
# experiments/exporteroverhead (make experiments-update, after the new files
# replace data/).
gzip -9f "$OUT"/pair*-o*.json
