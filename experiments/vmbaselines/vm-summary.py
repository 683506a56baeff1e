#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""vm-summary.py DIR... - one line per 'wirespeed lab vm' result directory
(from experiments/vmbaselines/vm-baselines.sh): outcome, guard, throughput, ICMP RTT idle and
under load (p50/p99), per-CPU softirq share during the load, the busiest
CPU's share of NET_RX softirqs, and observe's RX path class of the device."""
import json
import os
import sys


def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


for d in [a for a in sys.argv[1:] if os.path.isdir(a)]:
    vm = load(os.path.join(d, "vm.json"))
    if vm is None:
        print(f"{d}: no vm.json")
        continue
    name = os.path.basename(d.rstrip("/"))
    status = "ok" if vm.get("ok") else "FAILED: " + ", ".join(h["guard"] for h in vm.get("guards") or []) or vm.get("failure", "")[:80]
    facts = vm.get("facts") or {}
    dut = facts.get("dut_if", "?")
    print(f"{name}: {status}; {facts.get('dut_driver', '?')} {dut} {facts.get('usb_speed', '')} RX path: {(vm.get('rx_paths') or {}).get(dut, '-')}")
    for direction in ("send", "receive"):
        r = load(os.path.join(d, f"bench-{direction}.json"))
        if r is None:
            raw = load(os.path.join(d, f"iperf3-{direction}.json"))
            if raw:
                bps = raw.get("end", {}).get("sum_received", {}).get("bits_per_second", 0)
                print(f"  {direction:7s} iperf3 -J only: {bps/1e6:.0f} Mbit/s")
            continue
        for run in r.get("runs", []):
            tp = run.get("throughput", {}).get(direction, {}).get("mbit", 0)
            m = run.get("metrics", {})
            cpus = run.get("load", {}).get("cpus", [])
            si = " ".join(f"cpu{c['cpu']}={c['softirq_pct']:.0f}%" for c in cpus)
            rx = [c.get("net_rx_per_s", 0) for c in cpus]
            rxshare = max(rx) / sum(rx) * 100 if sum(rx) else 0
            print(f"  {direction:7s} {tp:6.1f} Mbit/s; ICMP idle p50 {m.get('icmp_idle_p50_ms', 0):.1f} ms, "
                  f"load p50/p99 {m.get('icmp_load_p50_ms', 0):.1f}/{m.get('icmp_load_p99_ms', 0):.1f} ms; "
                  f"softirq {si}; NET_RX on busiest CPU {rxshare:.0f}%")
