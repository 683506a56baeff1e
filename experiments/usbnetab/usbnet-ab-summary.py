#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""usbnet-ab-summary.py DIR - the per-pair table of docs/results.md (usbnet, stock
vs ours, and vs ours-softirq where run) from a experiments/usbnetab/usbnet-ab.sh run: for
usb-gadget and usb-nic (both directions) and bql (send), each repetition where
both sides completed, with throughput, the probe under load, softirq,
observe's RX path and GRO ratio, then ratios of means and per pair, and
softirq per 100 Mbit/s."""
import json,glob,os,re,statistics as st,sys
d=sys.argv[1]
reps=sorted({int(m.group(1)) for p in glob.glob(f'{d}/*-*-*/') for m in [re.search(r'-(\d+)/$',p)] if m})
variants=[v for v in ('ours','ours-softirq','ours-threaded') if glob.glob(f'{d}/*-{v}-*/')]
def load(p):
    try: return json.load(open(p))
    except Exception: return None
def metrics(scn,v,i,dirn):
    r=load(f'{d}/{scn}-{v}-{i}/bench-{dirn}.json')
    if not r or not r.get('runs'): return None
    run=r['runs'][0]; m=dict(run['metrics'])
    ob=run.get('observe')
    if isinstance(ob,dict):
        for x in ob.get('devices',[]):
            if x['name'] in ('usb0','usb1') and x.get('rx_path','').startswith(('NAPI','netif')):
                m['path']=x['rx_path']; m['gro']=x.get('gro_ratio',0)
                ctx=[]
                for n in x.get('napis',[]):
                    for c in n.get('contexts',[]) or []:
                        ctx.append((c.get('context') or c.get('kind'), round(c.get('share',0),2)))
                m['ctx']=ctx[:2]
    # BQL samples
    bq=[]
    for s in run.get('samples',[]):
        for dev in (s.get('devices') or {}).values():
            for q in (dev.get('bql') or []):
                bq.append((q.get('inflight') or 0,q.get('limit') or 0))
    if bq:
        m['bql_max_inflight']=max(x[0] for x in bq); m['bql_max_limit']=max(x[1] for x in bq)
        m['bql_samples']=bq
    return m
for ours,scn,dirs in [(v,s,ds) for v in variants for s,ds in [('usb-gadget',['receive','send']),('usb-nic',['receive','send']),('bql',['send'])]]:
    for dirn in dirs:
        key=f'{dirn}_mbit'
        if not glob.glob(f'{d}/{scn}-{ours}-*/'): continue
        print(f'== {scn} {dirn}: stock vs {ours}')
        pairs=[]
        for i in reps:
            a=metrics(scn,'stock',i,dirn); b=metrics(scn,ours,i,dirn)
            fa=lambda m,k: (round(m[k],1) if m and k in m else None)
            print(f'  rep{i}: stock {fa(a,key)} Mbit/s p50 {fa(a,"icmp_load_p50_ms")} p99 {fa(a,"icmp_load_p99_ms")} sirq {fa(a,"cpu_softirq_busiest_pct")} {a.get("path") if a else ""} gro {fa(a,"gro")} bql {a.get("bql_max_inflight") if a else ""}/{a.get("bql_max_limit") if a else ""}'
                  f' | {ours} {fa(b,key)} p50 {fa(b,"icmp_load_p50_ms")} p99 {fa(b,"icmp_load_p99_ms")} sirq {fa(b,"cpu_softirq_busiest_pct")} {b.get("path") if b else ""} gro {fa(b,"gro")} bql {b.get("bql_max_inflight") if b else ""}/{b.get("bql_max_limit") if b else ""}')
            if a and b and key in a and key in b: pairs.append((a,b))
        if pairs:
            for k in [key,'icmp_load_p50_ms','icmp_load_p99_ms','cpu_softirq_busiest_pct','cpu_softirq_pct']:
                xa=[p[0][k] for p in pairs if k in p[0] and k in p[1]]; xb=[p[1][k] for p in pairs if k in p[0] and k in p[1]]
                if xa and st.mean(xa):
                    rs=[b/a for a,b in zip(xa,xb) if a]
                    print(f'   {k}: stock mean {st.mean(xa):.1f} {ours} {st.mean(xb):.1f} ratio of means {st.mean(xb)/st.mean(xa):.2f} per-pair ratios {[round(r,2) for r in rs]} (n={len(xa)})')
            # cpu per mbit
            cpm=[(p[0]['cpu_softirq_pct']/p[0][key], p[1]['cpu_softirq_pct']/p[1][key]) for p in pairs if p[0].get(key) and p[1].get(key)]
            if cpm: print(f'   softirq%% per 100 Mbit/s: stock {100*st.mean([x[0] for x in cpm]):.1f} {ours} {100*st.mean([x[1] for x in cpm]):.1f}')

# BQL over all samples of the bql runs: stock never calls the hooks
for v in ('stock','ours'):
    allq=[]
    for i in reps:
        m=metrics('bql',v,i,'send')
        if m and 'bql_samples' in m: allq+=m['bql_samples']
    if allq:
        inf=[x[0] for x in allq]; lim=[x[1] for x in allq]
        print(f'bql {v}: {len(allq)} samples, inflight median {st.median(inf):.0f} max {max(inf)}, limit median {st.median(lim):.0f} min {min(lim)} max {max(lim)}')
