#!/usr/bin/env python3
"""Summarize a tune-quality.py result: scripts/tune-quality-summary.py FILE.json"""
import json, math, statistics, sys

d = json.load(open(sys.argv[1]))
e, t, v = d["exhaustive"], d["tuner"], d["validation"]
means = sorted(((sum(x) / len(x), k) for k, x in e["samples"].items()), reverse=True)
start = [m for m, k in means if json.loads(k) == d["start"]][0]
print("run %s - %s, args %s" % (d["started"], d["finished"], d["args"]))
print("exhaustive: %d configurations, %d trials; best %s mean %.0f Mbit/s (start config %.0f)" %
      (e["configs"], e["trials"], e["best"], e["best_mean_mbit"], start))
for m, k in means[:5]:
    print("  %6.0f %s %s" % (m, k, [round(x) for x in e["samples"][k]]))
print("tuner: %d trials, exit %d, final %s" % (t["trials"], t["exit"], t["config"]))
for tr in t["result"]["trials"]:
    g = tr.get("goal") or {}
    print("  %-9s %-8s before %s after %s ratio %s median pair ratio %s p %s" % (
        tr["action"]["id"], tr["verdict"], [round(x) for x in g.get("before", [])], [round(x) for x in g.get("after", [])],
        "%.3f" % g["ratio"] if g else "-", "%.3f" % g["median_ratio"] if g else "-", "%.3g" % g["p"] if g else "-"))
r = [b / a for a, b in zip(v["optimum"], v["tuner"])]
print("validation (interleaved): optimum %s tuner %s" % ([round(x) for x in v["optimum"]], [round(x) for x in v["tuner"]]))
print("  tuner/optimum: ratio of means %.3f, median of pair ratios %.3f, geometric mean %.3f, pair ratios %s" % (
    sum(v["tuner"]) / sum(v["optimum"]), statistics.median(r), math.exp(sum(map(math.log, r)) / len(r)),
    [round(x, 3) for x in r]))
print("  trials: tuner %d vs exhaustive %d = %.2f" % (t["trials"], e["trials"], t["trials"] / e["trials"]))
