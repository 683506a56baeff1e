# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# /ksft/ws-napi-threaded.sh of the selftests scenario (selftests.go), run in
# the Debian root: napi_threaded.py wants two channels, which a one-queue
# usbnet device does not have, so this checks per-NAPI threaded on and off
# through the netdev netlink family directly (the selftests' own YNL library
# and spec), on the device $IF, with traffic to @PEER@ while threaded.
# KTAP on stdout, as the kernel's Python tests print it.

exec /usr/bin/python3 - "$IF" <<'EOF'
import os, subprocess, sys, time
sys.path.append('/ksft')
try:
    from net.lib.ynl.pyynl.lib import YnlFamily
except ImportError:  # before 6.14 the library was tools/net/ynl/lib
    from net.lib.ynl.lib import YnlFamily

ifname = sys.argv[1]
nl = YnlFamily('/ksft/net/lib/specs/netdev.yaml', schema='')
ifindex = int(open(f'/sys/class/net/{ifname}/ifindex').read())
cases = []

def napis():
    return nl.napi_get({'ifindex': ifindex}, dump=True)

def result(name, ok, why='', skip=False):
    d = ' # SKIP ' + why if skip else ''
    if not ok and why and not skip:
        print('# ' + name + ': ' + why)
    cases.append((name, ok or skip, d, skip))

def kthread(pid):
    try:
        return open(f'/proc/{pid}/comm').read().strip()
    except OSError:
        return ''

def ping_ok():
    r = subprocess.run(['ping', '-c', '20', '-i', '0.05', '-W', '2', '-q', '@PEER@'], capture_output=True, text=True)
    return r.returncode == 0, r.stdout.strip().splitlines()[-2:] if r.stdout else r.stderr

try:
    ns = napis()
except Exception as e:  # the family or command missing
    ns = []
    print('# napi-get: ' + str(e))
result('napi_listed', len(ns) > 0, f'napi-get lists {len(ns)} NAPI instances of {ifname}')
print(f'# {ifname}: {ns}')
if not ns or not hasattr(nl, 'napi_set'):
    why = 'no NAPI instance' if not ns else "no napi-set in this kernel's netdev family"
    for n in ('threaded_enable', 'threaded_traffic', 'threaded_disable'):
        result(n, False, why, skip=True)
else:
    nid = ns[0]['id']
    nl.napi_set({'id': nid, 'threaded': 'enabled'})
    n = nl.napi_get({'id': nid})
    comm = kthread(n.get('pid', 0))
    print(f'# after napi-set threaded enabled: {n}, kthread {comm!r}')
    result('threaded_enable', n.get('threaded') == 'enabled' and comm.startswith('napi/'), f'napi-get says {n}, comm {comm!r}')
    ok, out = ping_ok()
    print(f'# ping while threaded: {out}')
    result('threaded_traffic', ok, 'ping over the device lost packets while its NAPI was threaded')
    nl.napi_set({'id': nid, 'threaded': 'disabled'})
    time.sleep(0.5)
    n = nl.napi_get({'id': nid})
    print(f'# after napi-set threaded disabled: {n}')
    result('threaded_disable', n.get('threaded') == 'disabled' and n.get('pid') is None, f'napi-get says {n}')

print('TAP version 13')
print(f'1..{len(cases)}')
for i, (name, ok, d, _) in enumerate(cases, 1):
    print(f"{'ok' if ok else 'not ok'} {i} napi_threaded_nl.{name}{d}")
fails = sum(1 for c in cases if not c[1])
skips = sum(1 for c in cases if c[3])
print(f'# Totals: pass:{len(cases) - fails - skips} fail:{fails} xfail:0 xpass:0 skip:{skips} error:0')
sys.exit(1 if fails else 0)
EOF
