#!/bin/sh
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
# Writes OUTDIR/pairN-{off,on}.json.gz (bench results, gzipped after the
# summary; zcat or gunzip -k for 'wirespeed show'), OUTDIR/pairN-on.scrapes
# (one line per scrape: seconds, bytes) and OUTDIR/summary.json, and prints
# the per-pair ratios.
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
	[ -n "$scraper" ] && kill "$scraper" 2>/dev/null || true
	[ -n "$exp" ] && kill -TERM "$exp" 2>/dev/null && wait "$exp" 2>/dev/null || true
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

python3 - "$OUT" "$PAIRS" "$SECS" "$SCRAPE" <<'EOF'
import json, statistics, sys
out, pairs, secs, scrape = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
import gzip, os
def mbit(f):
    if not os.path.exists(f):  # committed compressed
        return json.load(gzip.open(f + ".gz"))["runs"][0]["throughput"]["send"]["mbit"]
    return json.load(open(f))["runs"][0]["throughput"]["send"]["mbit"]
rows = []
for p in range(1, pairs + 1):
    off, on = mbit(f"{out}/pair{p}-off.json"), mbit(f"{out}/pair{p}-on.json")
    sc = [l.split() for l in open(f"{out}/pair{p}-on.scrapes") if l.strip()]
    ticks = int(open(f"{out}/pair{p}-on.cputicks").read())
    rows.append({"pair": p, "order": "off,on" if p % 2 else "on,off", "off_mbit": off, "on_mbit": on,
                 "ratio": on / off, "scrapes": len(sc),
                 "scrape_s_median": statistics.median(float(s[0]) for s in sc) if sc else None,
                 "scrape_bytes_median": statistics.median(int(s[1]) for s in sc) if sc else None,
                 "exporter_cpu_s": ticks / 100})
ratios = [r["ratio"] for r in rows]
summary = {"command": f"sudo experiments/exporteroverhead/exporter-overhead.sh {pairs} {secs} {scrape}",
           "bench": f"wirespeed bench --gro on -t {secs}s --observe off",
           "exporter": f"wirespeed exporter (defaults: --observe light --observe-sample 10% --interval 10s), scraped every {scrape}s with curl",
           "pairs": rows, "ratio_median": statistics.median(ratios), "ratio_mean": statistics.mean(ratios),
           "ratio_min": min(ratios), "ratio_max": max(ratios)}
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
print("pair order   off Mbit/s  on Mbit/s  on/off  scrapes  scrape ms  exporter CPU s")
for r in rows:
    print("%4d %-7s %10.0f %10.0f %7.3f %8d %10.1f %14.2f" % (r["pair"], r["order"], r["off_mbit"], r["on_mbit"], r["ratio"],
          r["scrapes"], 1000 * (r["scrape_s_median"] or 0), r["exporter_cpu_s"]))
print("median on/off %.3f, mean %.3f (min %.3f, max %.3f)" % (summary["ratio_median"], summary["ratio_mean"], min(ratios), max(ratios)))
EOF
gzip -9f "$OUT"/pair*-o*.json
