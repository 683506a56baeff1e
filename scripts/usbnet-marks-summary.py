#!/usr/bin/env python3
"""usbnet-marks-summary.py DIR - issue 12's marks from a scripts/usbnet-marks.sh run.

Validity rules, fixed before the runs:
  V1  a pair counts only when both boots completed (no guard hit) and both
      wrote their bench JSON;
  V2  RX CPU per Mbit/s compares equal work: a pair counts for it only when
      the two receive throughputs are within 5% of each other (both at the
      bus cap), else it is listed and left out;
  V3  the host's top CPU users before each boot are in NAME/host-top.txt; with
      --accel tcg-icount the guest's clock counts instructions, so host load
      slows a boot without changing what it measures, and no pair is dropped
      for it (with other --accel values, a pair whose boots' host load
      average differs by more than 2 is dropped).
Marks: BQL excess latency (probe p50 under load minus idle p50) ours/stock
<= 0.2 at >= 95% of stock's throughput; RX total busy CPU per Mbit/s
(all CPUs, NAPI threads included: 100 - idle %) ours/stock <= 0.67."""
import glob, json, os, re, statistics as st, sys

d = sys.argv[1]
reps = sorted({int(m.group(1)) for p in glob.glob(f'{d}/*-*-*/') for m in [re.search(r'-(\d+)/$', p)] if m})


def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None


def vmjson(name):
    return load(f'{d}/{name}/vm.json') or {}


def host_load(name):
    try:
        t = open(f'{d}/{name}/host-top.txt').read()
        return float(re.search(r'load average: ([0-9.]+)', t).group(1))
    except Exception:
        return None


def metrics(name, dirn):
    r = load(f'{d}/{name}/bench-{dirn}.json')
    if not r or not r.get('runs'):
        return None
    run = r['runs'][0]
    m = dict(run['metrics'])
    ncpu = len((run.get('load') or {}).get('cpus') or []) or 2
    if 'cpu_idle_pct' in m:
        m['busy_cpu_pct'] = (100 - m['cpu_idle_pct']) * ncpu  # % of one CPU
    return m


def samples(name):
    lim, inf, back = [], [], []
    try:
        for line in open(f'{d}/{name}/queue-samples.txt'):
            a = re.search(r'limit=(\d+) inflight=(\d+)', line)
            b = re.search(r'backlog (\d+)b', line)
            if a:
                lim.append(int(a.group(1)))
                inf.append(int(a.group(2)))
            if b:
                back.append(int(b.group(1)))
    except OSError:
        pass
    return lim, inf, back


def ok(name, dirn):
    v = vmjson(name)
    return v.get('ok') is True and metrics(name, dirn) is not None


def med(x):
    return st.median(x) if x else float('nan')


icount = 'tcg-icount' in (vmjson(f'bql-stock-{reps[0]}').get('accel', '') if reps else '')
print(f'{d}: {len(reps)} repetitions, accel {vmjson(f"bql-stock-{reps[0]}").get("accel", "?") if reps else "?"}')

# BQL
print('== bql send (bus capped): excess latency = probe p50 under load - idle p50')
ex, tp = [], []
for i in reps:
    a, b = f'bql-stock-{i}', f'bql-ours-{i}'
    if not (ok(a, 'send') and ok(b, 'send')):
        print(f'  rep{i}: dropped (V1: a boot failed or wrote no bench JSON)')
        continue
    la, lb = host_load(a), host_load(b)
    if not icount and la is not None and lb is not None and abs(la - lb) > 2:
        print(f'  rep{i}: dropped (V3: host load {la} vs {lb})')
        continue
    ma, mb = metrics(a, 'send'), metrics(b, 'send')
    ea = ma['icmp_load_p50_ms'] - ma['icmp_idle_p50_ms']
    eb = mb['icmp_load_p50_ms'] - mb['icmp_idle_p50_ms']
    la_, ia, ba = samples(a)
    lb_, ib, bb = samples(b)
    r = eb / ea if ea else float('nan')
    t = mb['send_mbit'] / ma['send_mbit']
    ex.append(r)
    tp.append(t)
    print(f'  rep{i}: stock {ma["send_mbit"]:.1f} Mbit/s idle {ma["icmp_idle_p50_ms"]:.2f} load {ma["icmp_load_p50_ms"]:.2f} ms (excess {ea:.2f}), '
          f'qdisc backlog median {med(ba):.0f} B | ours {mb["send_mbit"]:.1f} idle {mb["icmp_idle_p50_ms"]:.2f} load {mb["icmp_load_p50_ms"]:.2f} '
          f'(excess {eb:.2f}), qdisc backlog median {med(bb):.0f} B, BQL limit {min(lb_) if lb_ else "-"}..{max(lb_) if lb_ else "-"} '
          f'({len(set(lb_))} values in {len(lb_)} samples), inflight median {med(ib):.0f} | excess ratio {r:.3f}, throughput ratio {t:.3f}')
if ex:
    print(f'  excess latency ours/stock: median {med(ex):.3f}, per pair {[round(x, 3) for x in ex]} (n={len(ex)}; mark <= 0.2)')
    print(f'  throughput ours/stock: median {med(tp):.3f}, per pair {[round(x, 3) for x in tp]} (mark >= 0.95)')

# RX
print('== usb-gadget receive (bus capped): total busy CPU per Mbit/s (all CPUs, % of one CPU per Mbit/s)')
cr, sr, tr = [], [], []
for i in reps:
    a, b = f'rx-stock-{i}', f'rx-ours-{i}'
    if not (ok(a, 'receive') and ok(b, 'receive')):
        print(f'  rep{i}: dropped (V1)')
        continue
    ma, mb = metrics(a, 'receive'), metrics(b, 'receive')
    ta, tb = ma['receive_mbit'], mb['receive_mbit']
    ca, cb = ma['busy_cpu_pct'] / ta, mb['busy_cpu_pct'] / tb
    line = (f'  rep{i}: stock {ta:.1f} Mbit/s busy {ma["busy_cpu_pct"]:.0f}% ({ca:.3f}/Mbit) softirq {ma.get("cpu_softirq_pct", 0):.1f}% | '
            f'ours {tb:.1f} busy {mb["busy_cpu_pct"]:.0f}% ({cb:.3f}/Mbit) softirq {mb.get("cpu_softirq_pct", 0):.1f}% napi-thread {mb.get("napi_threads_cpu_pct", 0):.0f}%')
    tr.append(tb / ta)
    if abs(tb / ta - 1) > 0.05:
        print(line + ' | dropped from the CPU ratio (V2: throughputs differ by more than 5%)')
        continue
    cr.append(cb / ca)
    sr.append((mb.get('cpu_softirq_pct', 0) / tb) / (ma.get('cpu_softirq_pct', 0) / ta) if ma.get('cpu_softirq_pct') else float('nan'))
    print(line + f' | busy/Mbit ratio {cb / ca:.3f}')
if tr:
    print(f'  throughput ours/stock: median {med(tr):.3f}, per pair {[round(x, 3) for x in tr]}')
if cr:
    print(f'  total busy CPU per Mbit/s ours/stock: median {med(cr):.3f}, per pair {[round(x, 3) for x in cr]} (n={len(cr)}; mark <= 0.67)')
    print(f'  softirq per Mbit/s ours/stock: median {med(sr):.3f}, per pair {[round(x, 3) for x in sr]}')
