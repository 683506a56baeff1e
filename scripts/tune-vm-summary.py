#!/usr/bin/env python3
"""Summarize 'wirespeed lab vm usb-nic --tune' runs: per action the goal
metric before/after, per-pair ratios, median pair ratio, p and the verdict
from tune-apply.json, and the RPS knobs from the rps-*.txt files.

usage: scripts/tune-vm-summary.py RUNDIR...
"""
import json
import os
import sys


def knobs(d, name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return "-"
    out = []
    for line in open(p):
        k, _, v = line.strip().partition("=")
        if k.endswith("rps_cpus") or k.endswith("rps_flow_cnt") or k.endswith("rps_sock_flow_entries"):
            out.append(k.rsplit("/", 1)[-1].rsplit(".", 1)[-1] + "=" + v)
    return " ".join(out)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        print(f"## {d}")
        a = json.load(open(os.path.join(d, "tune-apply.json")))
        for t in a.get("trials") or []:
            g = t.get("goal")
            if not g:
                print(f"{t['action']['id']}: {t['verdict']} - {t['reason']}")
                continue
            pr = " ".join(f"{r:.2f}" for r in g["pair_ratios"])
            print(f"{t['action']['id']}: before {g['mean_before']:.1f} after {g['mean_after']:.1f} Mbit/s, "
                  f"ratio {g['ratio']:.3f}, median pair ratio {g['median_ratio']:.3f}, pairs {pr}, p {g['p']:.3g}: {t['verdict']}")
            for o in t.get("others") or []:
                print(f"    {o['metric']}: ratio {o['ratio']:.3f} median {o['median_ratio']:.3f} p {o['p']:.3g}{' WORSE' if o['worse'] else ''}")
        for f in ["rps-before.txt", "rps-after-tune.txt", "rps-replug-no-udevd.txt", "rps-replug-udevd.txt"]:
            print(f"{f}: {knobs(d, f)}")


if __name__ == "__main__":
    main()
