#!/usr/bin/env python3
"""usbnet-rx-summary.py DIR [--json OUT] - receive-side figures for issue 12
from a scripts/usbnet-rx.sh run: per pair (stock, ours) and medians of

  nic-icount-*:    usb-nic receiving from iperf3 on the host under -icount
                   (fails its validity rule: the host's iperf3 ends by the
                   host's clock, the guest's bench marks every run incomplete);
  gadget-icount-*: usb-gadget at super speed, bus uncapped, -icount: the
                   guest CPU is the bottleneck, throughput (in guest time) is
                   the loop's capacity;
  nic-tcg-*:       usb-nic with multi-threaded TCG in real time: the link rate
                   this lab gives (QEMU's usb-net emulation bounds it), and the
                   receiver-only CPU (the sender is iperf3 on the host).

CPU per Mbit/s = the guest's total busy CPU (both vCPUs) over bench's load
window / the device under test's receive rate from its counters over the
same window.

Validity (DIR/PLAN.md, written before the runs): a pair counts when both
boots' vm.json say ok and both wrote a complete bench JSON; for nic-tcg a
pair is dropped when a host-top.txt shows a process other than QEMU or
wirespeed above 20% CPU before its boot (for gadget-tcg any QEMU counts too:
before a boot, a QEMU is another run's). Nothing else drops a pair."""
import glob, json, re, statistics as st, sys

d = sys.argv[1]
jout = sys.argv[sys.argv.index('--json') + 1] if '--json' in sys.argv else None


def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None


def bench(name):
    v = load(f'{d}/{name}/vm.json') or {}
    r = load(f'{d}/{name}/bench-receive.json')
    if v.get('ok') is not True or not r or not r.get('runs') or not r['runs'][0].get('complete', True):
        return None
    run = r['runs'][0]
    m = run['metrics']
    cpus = (run.get('load') or {}).get('cpus') or []
    n = len(cpus) or 2
    mbit = m['receive_mbit']
    # CPU per Mbit/s over one window: the load phase's CPU and the device
    # under test's receive counters over the same span.
    devs_load = (run.get('load') or {}).get('devices') or {}
    dut = next(iter(devs_load.values()), {}) if len(devs_load) == 1 else devs_load.get('usb0', {})
    dmbit = dut.get('rx_mbit') or mbit
    if 'cpu_idle_pct' not in m:
        # bench found no CPU samples in its load window (seen once under
        # real-time TCG on arm64): the throughput counts, the CPU is n/a
        out = {'mbit': mbit, 'dev_rx_mbit': dmbit, 'busy_pct': None, 'busy_per_mbit': None,
               'softirq_per_mbit': None, 'sys_per_mbit': None, 'usr_per_mbit': None,
               'load_p50_ms': m.get('icmp_load_p50_ms')}
    else:
        busy = (100 - m['cpu_idle_pct']) * n  # % of one CPU, all CPUs
        out = {'mbit': mbit, 'dev_rx_mbit': dmbit, 'busy_pct': busy, 'busy_per_mbit': busy / dmbit,
               'softirq_per_mbit': m.get('cpu_softirq_pct', 0) * n / dmbit,
               'sys_per_mbit': m.get('cpu_sys_pct', 0) * n / dmbit,
               'usr_per_mbit': sum(c.get('user_pct', 0) for c in cpus) / dmbit,
               'load_p50_ms': m.get('icmp_load_p50_ms')}
    # observe's entry for the device under test (the one the load counters
    # name), not its "(no_device)" entry for the per-CPU backlogs
    names = set(devs_load) or {'usb0'}
    for dv in (run.get('observe') or {}).get('devices') or []:
        if dv.get('name') in names:
            out['rx_path'] = dv.get('rx_path')
            out['gro_ratio'] = dv.get('gro_ratio')
    return out


def outside_load(name, qemu_counts=False):
    """The busiest process before the boot other than QEMU and wirespeed
    (QEMU too with qemu_counts: before a boot any QEMU is another run's)."""
    try:
        lines = open(f'{d}/{name}/host-top.txt').read().splitlines()
    except OSError:
        return None
    worst = 0.0
    for l in lines:
        f = l.split()
        mine = r'^(wirespeed|ws|ps)' if qemu_counts else r'^(qemu|wirespeed|ws|ps)'
        if len(f) == 3 and re.match(r'^[0-9.]+$', f[0]) and not re.match(mine, f[2]):
            worst = max(worst, float(f[0]))
    return worst


def med(x):
    return round(st.median(x), 3) if x else None


summary = {'dir': d, 'phases': {}}
for ph, title in (('nic-icount', 'usb-nic receive, -icount (invalid by PLAN.md: every run incomplete)'),
                  ('gadget-icount', 'usb-gadget receive, super speed, uncapped, -icount'),
                  ('nic-tcg', 'usb-nic receive, multi-threaded TCG (real time)'),
                  ('gadget-tcg', 'usb-gadget receive, super speed, uncapped, multi-threaded TCG (real time)')):
    reps = sorted({int(m.group(1)) for p in glob.glob(f'{d}/{ph}-stock-*/') for m in [re.search(r'-(\d+)/$', p)] if m})
    if not reps:
        continue
    print(f'== {title}')
    pairs = []
    for i in reps:
        a, b = bench(f'{ph}-stock-{i}'), bench(f'{ph}-ours-{i}')
        if not a or not b:
            print(f'  pair {i}: dropped (a boot failed or wrote no complete bench JSON)')
            continue
        if ph in ('nic-tcg', 'gadget-tcg'):
            q = ph == 'gadget-tcg'
            w = max(outside_load(f'{ph}-stock-{i}', q) or 0, outside_load(f'{ph}-ours-{i}', q) or 0)
            if w > 20:
                print(f'  pair {i}: dropped (outside load: a process at {w:.0f}% CPU before a boot)')
                continue
        cpu = a['busy_per_mbit'] is not None and b['busy_per_mbit'] is not None
        p = {'pair': i, 'stock': a, 'ours': b, 'throughput_ratio': b['mbit'] / a['mbit'],
             'busy_per_mbit_ratio': b['busy_per_mbit'] / a['busy_per_mbit'] if cpu else None,
             'softirq_per_mbit_ratio': (b['softirq_per_mbit'] / a['softirq_per_mbit']) if cpu and a['softirq_per_mbit'] else None}
        pairs.append(p)

        def side(x):
            if x['busy_per_mbit'] is None:
                return f'{x["mbit"]:.1f} Mbit/s, CPU n/a (no samples in the load window)'
            return f'{x["mbit"]:.1f} Mbit/s busy {x["busy_pct"]:.0f}% ({x["busy_per_mbit"]:.4f}/Mbit: softirq {x["softirq_per_mbit"]:.4f} sys {x["sys_per_mbit"]:.4f})'
        r = f'{p["busy_per_mbit_ratio"]:.3f}' if cpu else 'n/a'
        print(f'  pair {i}: stock {side(a)} {a.get("rx_path")} | ours {side(b)} {b.get("rx_path")}, GRO {b.get("gro_ratio") or 0:.1f}'
              f' | throughput {p["throughput_ratio"]:.3f}, busy/Mbit {r}')
    res = {'pairs': pairs, 'n': len(pairs)}
    if pairs:
        res['stock_mbit_median'] = med([p['stock']['mbit'] for p in pairs])
        res['ours_mbit_median'] = med([p['ours']['mbit'] for p in pairs])
        res['throughput_ratio_median'] = med([p['throughput_ratio'] for p in pairs])
        res['busy_per_mbit_ratio_median'] = med([p['busy_per_mbit_ratio'] for p in pairs if p['busy_per_mbit_ratio'] is not None])
        res['softirq_per_mbit_ratio_median'] = med([p['softirq_per_mbit_ratio'] for p in pairs if p['softirq_per_mbit_ratio']])
        print(f'  n={len(pairs)}: throughput stock median {res["stock_mbit_median"]} Mbit/s, ours {res["ours_mbit_median"]}; '
              f'ours/stock per pair {[round(p["throughput_ratio"], 3) for p in pairs]} (median {res["throughput_ratio_median"]})')
        print(f'  total busy CPU per Mbit/s ours/stock per pair {[round(p["busy_per_mbit_ratio"], 3) for p in pairs if p["busy_per_mbit_ratio"] is not None]} '
              f'(median {res["busy_per_mbit_ratio_median"]}); softirq per Mbit/s median {res["softirq_per_mbit_ratio_median"]}')
    summary['phases'][ph] = res
if jout:
    json.dump(summary, open(jout, 'w'), indent=1)
