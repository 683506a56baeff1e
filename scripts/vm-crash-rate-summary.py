#!/usr/bin/env python3
"""vm-crash-rate-summary.py BOOTS.jsonl - the table of scripts/vm-crash-rate.sh:
per configuration the boots, the crashes (kernel trouble on the console:
"Oops: int3" and any other guard), other failures, the crash rate with its
exact (Clopper-Pearson) 95% interval; then the bench throughput per
scenario and direction, median per configuration, and the ratio of every
configuration's median to the first one's, with the per-pair ratios
(the k-th boot of a scenario in one configuration against the k-th in the
first: the script boots them in the same round). For BOOT_EXEC runs of
scripts/vm-textpoke-toggle.sh, the text-patching turns each configuration
completed."""
import json
import re
import statistics
import sys
from math import comb


def binom_cdf(k, n, p):
    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def clopper_pearson(k, n, alpha=0.05):
    def solve(f):  # f increasing in p on [0, 1]; root by bisection
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if f(mid) < 0:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(lambda p: (1 - binom_cdf(k - 1, n, p)) - alpha / 2)
    high = 1.0 if k == n else solve(lambda p: alpha / 2 - binom_cdf(k, n, p))
    return low, high


rows = []
with open(sys.argv[1]) as f:
    for line in f:
        line = line.strip()
        if line:
            rows.append(json.loads(line))
configs = []
for r in rows:
    if r["config"] not in configs:
        configs.append(r["config"])

print("| config | accel | boots | ok | crashes (int3) | other failures | crash rate (95% CI) |")
print("|---|---|---|---|---|---|---|")
for c in configs:
    rs = [r for r in rows if r["config"] == c]
    n = len(rs)
    crash = [r for r in rs if r["kind"] not in ("none", "timeout", "guest", "no-vm.json")]
    int3 = [r for r in crash if r["kind"] == "int3"]
    other = [r for r in rs if r["kind"] in ("timeout", "guest", "no-vm.json")]
    ok = sum(1 for r in rs if r["ok"])
    lo, hi = clopper_pearson(len(crash), n)
    accels = ",".join(sorted({r["accel"] for r in rs}))
    print(f"| {c} | {accels} | {n} | {ok} | {len(crash)} ({len(int3)}) | {len(other)} | "
          f"{100 * len(crash) / n:.0f}% ({100 * lo:.0f}-{100 * hi:.0f}%) |")
print()
for r in rows:
    if r["kind"] != "none":
        print(f"- {r['dir']}: {r['kind']} {r['guard_text'] or r['failure']} (RIP {r['kernel_rip'] or '-'})")
print()

turns = {}
for r in rows:
    m = re.search(r"toggles=(\d+)", r.get("exec") or "")
    if m:
        turns[r["config"]] = turns.get(r["config"], 0) + int(m.group(1))
if turns:  # scripts/vm-textpoke-toggle.sh boots
    for c in configs:
        print(f"- {c}: {turns.get(c, 0)} text-patching turns in the boots that finished")
    print()
if not any(r["mbit"] for r in rows):
    sys.exit(0)
print("| scenario | direction | " + " | ".join(f"{c} median Mbit/s (n)" for c in configs)
      + " | " + " | ".join(f"{c}/{configs[0]}" for c in configs[1:]) + " | per-pair ratios |")
print("|---|---|" + "---|" * (2 * len(configs) - 1) + "---|")
for sc in sorted({r["scenario"] for r in rows}):
    for d in ("send", "receive"):
        per = {}
        for c in configs:
            per[c] = [statistics.mean(r["mbit"][d]) if r["ok"] and r["mbit"].get(d) else None
                      for r in rows if r["config"] == c and r["scenario"] == sc]
        vals = {c: [v for v in per[c] if v is not None] for c in configs}
        if not vals[configs[0]]:
            continue
        med = {c: statistics.median(v) if v else float("nan") for c, v in vals.items()}
        pairs = []
        for c in configs[1:]:
            for a, b in zip(per[configs[0]], per[c]):
                if a and b:
                    pairs.append(b / a)
        pr = f"{statistics.median(pairs):.2f} ({min(pairs):.2f}-{max(pairs):.2f}, {len(pairs)} pairs)" if pairs else "-"
        print(f"| {sc} | {d} | " + " | ".join(f"{med[c]:.1f} ({len(vals[c])})" for c in configs)
              + " | " + " | ".join(f"{med[c] / med[configs[0]]:.2f}" for c in configs[1:]) + f" | {pr} |")
