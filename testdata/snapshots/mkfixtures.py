#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Build the hand-made snapshot fixtures (see README.md for the facts each
encodes). Writes wirespeed snapshot files: a gzip'd tar with meta.json
first, errors.json, answers.json and a root/ tree of sys/ and proc/.

    python3 testdata/snapshots/mkfixtures.py   # rewrites their .txt, then builds the .tar.gz

Each fixture's source is its text form, NAME.txt (README.md); the
.tar.gz is built from it by go run ./testdata/snapshots/fixtures, which
this script runs at the end.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MTIME = 1700000000
# Where the .txt go: here, or (WIRESPEED_FIXTURES_OUT) a directory of a
# test that compares them with the committed ones, building nothing.
OUT = os.environ.get("WIRESPEED_FIXTURES_OUT", HERE)


class Tree:
    def __init__(self):
        self.files = {}  # path -> bytes
        self.links = {}  # path -> target
        self.dirs = set()
        self.errors = {}  # path -> errno name

    def _parents(self, p):
        parts = p.strip("/").split("/")
        for i in range(1, len(parts)):
            self.dirs.add("/" + "/".join(parts[:i]))

    def file(self, p, content):
        self._parents(p)
        if isinstance(content, (int,)):
            content = str(content)
        if not content.endswith("\n"):
            content += "\n"
        self.files[p] = content.encode()

    def err(self, p, errno):
        self._parents(p)
        self.files[p] = b""
        self.errors[p] = errno

    def link(self, p, target):
        self._parents(p)
        self.links[p] = target

    def dir(self, p):
        self._parents(p + "/x")

    def write(self, name, meta, answers, version=1):
        """Write NAME.txt, the snapshot's text form (snaptext/snaptext.go
        says the form; this writes what its Encode writes for the same
        entries). build() makes the .tar.gz from it."""
        meta = dict(meta, format="wirespeed-snapshot", version=version)
        entries = [("file", "meta.json", json.dumps(meta, indent=2)),
                   ("file", "errors.json", json.dumps(self.errors, indent=2, sort_keys=True)),
                   ("file", "answers.json", json.dumps(answers, indent=2, sort_keys=True))]
        entries += [("dir", "root" + d + "/", None) for d in sorted(self.dirs)]
        entries += [("link", "root" + p, self.links[p]) for p in sorted(self.links)]
        entries += [("file", "root" + p, self.files[p].decode()) for p in sorted(self.files)]
        out = ["# A wirespeed snapshot fixture as text (testdata/snapshots/README.md: the form);",
               "# go run ./testdata/snapshots/fixtures builds its .tar.gz from it.",
               "wirespeed-snapshot-text 1", "mtime %d" % MTIME]
        for kind, path, body in entries:
            if not plain_path(path) or (kind == "link" and not plain_path(body)):
                raise ValueError("%s: write paths without spaces, quotes or control characters" % path)
            if kind == "dir":
                out.append("dir " + path)
            elif kind == "link":
                out.append("link %s -> %s" % (path, body))
            else:
                out.append("")
                out.append("file " + path + (" noeol" if body and not body.endswith("\n") else ""))
                if body:
                    for line in (body[:-1] if body.endswith("\n") else body).split("\n"):
                        if not plain_line(line):
                            raise ValueError("%s: line %r: the scripts write plain lines (no trailing blanks or control characters)" % (path, line))
                        out.append(("| " + line).rstrip(" "))
        txt = name[:-len(".tar.gz")] + ".txt"
        with open(os.path.join(OUT, txt), "w") as f:
            f.write("\n".join(out) + "\n")
        print("wrote", txt)


def plain_line(s):
    return not s.endswith((" ", "\t")) and all(c == "\t" or (ord(c) >= 0x20 and ord(c) != 0x7f) for c in s)


def plain_path(s):
    return s != "" and plain_line(s) and not any(c in s for c in " \"\t\\")


def build():
    """Build every .tar.gz from its .txt (the Go command; Go 1.25+)."""
    if OUT != HERE:
        return  # a check of the text alone (internal/cli's fixture tests)
    root = os.path.join(HERE, "..", "..")
    try:
        subprocess.run(["go", "run", "./testdata/snapshots/fixtures"], cwd=root, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit("building the .tar.gz failed (%s): run go run ./testdata/snapshots/fixtures" % e)


def vl805(t):
    """A Raspberry Pi 4's VL805 xHCI controller behind the BCM2711 PCIe
    root port (MSI 46): usb1, the 480M root hub with the VL805's internal
    hub; usb2, 5000M. Returns the controller's sysfs path."""
    pcie = "/sys/devices/platform/scb/fd500000.pcie"
    hc = pcie + "/pci0000:00/0000:00:00.0/0000:01:00.0"
    t.link(pcie + "/subsystem", "../../../../bus/platform")
    t.link(hc + "/subsystem", "../../../../../../../bus/pci")
    t.link(hc + "/driver", "../../../../../../../bus/pci/drivers/xhci_hcd")
    t.dir(hc + "/msi_irqs/46")
    t.file(hc + "/irq", 46)
    t.file(hc + "/usb1/speed", 480)
    t.file(hc + "/usb1/1-1/speed", 480)
    t.file(hc + "/usb1/1-1/product", "USB2.0 Hub")
    t.link(hc + "/usb1/1-1/1-1:1.0/driver", "../../../../../../../../../../../bus/usb/drivers/hub")
    t.file(hc + "/usb2/speed", 5000)
    return hc


def netdev(t, devpath, name, ifindex, mtu=1500, txqlen=1000, operstate="up", speed=None,
           duplex=None, threaded="0", rx=1, tx=1, rps=None, xps_enoent=True, bql=None,
           stats=None, device_link=None, uevent=None):
    base = devpath + "/net/" + name if device_link else devpath
    t.link("/sys/class/net/" + name, os.path.relpath(base, "/sys/class/net"))
    if device_link:
        t.link(base + "/device", os.path.relpath(devpath, base))
    t.file(base + "/ifindex", ifindex)
    t.file(base + "/mtu", mtu)
    t.file(base + "/tx_queue_len", txqlen)
    t.file(base + "/operstate", operstate)
    t.file(base + "/carrier", "0" if operstate == "down" else "1")
    if speed is None:
        t.err(base + "/speed", "EINVAL")
    else:
        t.file(base + "/speed", speed)
    t.file(base + "/duplex", duplex or "unknown")
    t.file(base + "/threaded", threaded)
    t.file(base + "/gro_flush_timeout", 0)
    t.file(base + "/napi_defer_hard_irqs", 0)
    t.file(base + "/uevent", uevent or ("INTERFACE=%s\nIFINDEX=%d" % (name, ifindex)))
    for i in range(rx):
        q = "%s/queues/rx-%d" % (base, i)
        t.file(q + "/rps_cpus", (rps or ["0"] * rx)[i])
        t.file(q + "/rps_flow_cnt", 0)
    for i in range(tx):
        q = "%s/queues/tx-%d" % (base, i)
        if tx == 1 and xps_enoent:
            t.err(q + "/xps_cpus", "ENOENT")
        else:
            t.file(q + "/xps_cpus", "0")
        t.file(q + "/tx_maxrate", 0)
        if bql is not None:
            for k, v in bql.items():
                t.file(q + "/byte_queue_limits/" + k, v)
    st = stats or {}
    for k in ["rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped", "rx_errors", "tx_errors"]:
        t.file(base + "/statistics/" + k, st.get(k, 0))
    return base


def host(t, hostname, release, arch, cpus, pid, softnet, sysctls, cpufreq=None):
    t.file("/proc/sys/kernel/hostname", hostname)
    t.file("/proc/sys/kernel/osrelease", release)
    if arch:
        t.file("/proc/sys/kernel/arch", arch)
    t.file("/sys/devices/system/cpu/online", "0-%d" % (cpus - 1))
    for c in range(cpus):
        t.dir("/sys/devices/system/cpu/cpu%d" % c)
        if cpufreq:
            b = "/sys/devices/system/cpu/cpu%d/cpufreq" % c
            for k, v in cpufreq.items():
                t.file(b + "/" + k, v)
    t.link("/proc/self", str(pid))
    t.link("/proc/net", "self/net")
    t.file("/proc/%d/net/softnet_stat" % pid, "".join(
        " ".join("%08x" % v for v in row) + "\n" for row in softnet))
    for k, v in sysctls.items():
        t.file("/proc/sys/net/core/" + k, v)


def softnet_row(cpu, processed, dropped=0, squeeze=0, rps=0):
    return [processed, dropped, squeeze, 0, 0, 0, 0, 0, 0, rps, 0, 0, cpu, 0, 0]


def irq(t, n, chip, actions, hwirq, typ, smp, smp_list, eff_list):
    t.file("/sys/kernel/irq/%d/chip_name" % n, chip)
    t.file("/sys/kernel/irq/%d/actions" % n, actions)
    t.file("/sys/kernel/irq/%d/hwirq" % n, hwirq)
    t.file("/sys/kernel/irq/%d/type" % n, typ)
    t.file("/proc/irq/%d/smp_affinity" % n, smp)
    t.file("/proc/irq/%d/smp_affinity_list" % n, smp_list)
    t.file("/proc/irq/%d/effective_affinity_list" % n, eff_list)


FEATURES_USBNET = {
    "rx-gro": (True, False), "rx-gro-hw": (False, True), "rx-gro-list": (False, False),
    "rx-udp-gro-forwarding": (False, False), "rx-lro": (False, True),
    "tx-tcp-segmentation": (True, False), "tx-tcp6-segmentation": (True, False),
    "tx-generic-segmentation": (True, False),
}


def features(spec):
    return {k: {"name": k, "active": a, "fixed": f, "requested": a} for k, (a, f) in spec.items()}


def rpi4():
    """Raspberry Pi 4B, Alpine 3.15, 5.15.4-0-rpi4 aarch64 (seed 003)."""
    t = Tree()
    sysctls = {"netdev_budget": 300, "netdev_budget_usecs": 8000, "netdev_max_backlog": 1000,
               "dev_weight": 64, "busy_poll": 0, "busy_read": 0, "rps_sock_flow_entries": 0,
               "gro_normal_batch": 8, "default_qdisc": "pfifo_fast"}
    host(t, "lbox", "5.15.4-0-rpi4", "aarch64", 4, 2101,
         [softnet_row(0, 9143277, 0, 48211), softnet_row(1, 512004, 0, 12, 498120),
          softnet_row(2, 488311, 0, 3, 480021), softnet_row(3, 501776, 0, 9, 494310)],
         sysctls,
         cpufreq={"scaling_governor": "performance", "scaling_driver": "cpufreq-dt",
                  "scaling_cur_freq": 1500000, "cpuinfo_max_freq": 1500000, "cpuinfo_min_freq": 600000})
    # /proc/interrupts exactly as printed in the seed article.
    with open(os.path.join(HERE, "..", "..", "internal", "procfs", "testdata", "interrupts.rpi4")) as f:
        t.file("/proc/interrupts", f.read())
    hc = vl805(t)
    dev = hc + "/usb2/2-2"
    for k, v in {"speed": 5000, "version": " 3.00", "idVendor": "0b95", "idProduct": "1790",
                 "manufacturer": "ASIX Elec. Corp.", "product": "AX88179", "busnum": 2, "devnum": 2}.items():
        t.file(dev + "/" + k, v)
    iface = dev + "/2-2:1.0"
    t.link(iface + "/subsystem", "../../../../../../../../../../bus/usb")
    t.link(iface + "/driver", "../../../../../../../../../../bus/usb/drivers/ax88179_178a")
    netdev(t, iface, "eth1", 3, speed=1000, duplex="full", rps=["f"],
           bql={"limit": 0, "limit_min": 0, "limit_max": 1879048192, "inflight": 0, "hold_time": 1000},
           stats={"rx_packets": 48110233, "tx_packets": 21773518, "rx_bytes": 72012345678, "tx_bytes": 1534567890},
           device_link=True)
    t.dir("/sys/module/usbnet/holders/ax88179_178a")
    irq(t, 46, "BRCM STB PCIe MSI", "xhci_hcd", 524288, "edge", "f", "0-3", "0")
    # The built-in GENET: its two GIC interrupts were moved to CPU1 and CPU2
    # (the counts in the seed's /proc/interrupts show where they ran).
    genet = "/sys/devices/platform/scb/fd580000.ethernet"
    t.link(genet + "/subsystem", "../../../../bus/platform")
    t.link(genet + "/driver", "../../../../bus/platform/drivers/bcmgenet")
    netdev(t, genet, "eth0", 2, speed=1000, duplex="full", operstate="up",
           bql={"limit": 3028, "limit_min": 0, "limit_max": 1879048192, "inflight": 0, "hold_time": 1000},
           device_link=True)
    irq(t, 38, "GICv2", "eth0", 189, "level", "2", "1", "1")
    irq(t, 39, "GICv2", "eth0", 190, "level", "4", "2", "2")
    netdev(t, "/sys/devices/virtual/net/lo", "lo", 1, mtu=65536, operstate="unknown")
    answers = {
        "euid": 0,
        "napis": None, "napis_unsupported": True,
        "napis_error": "netdevnl: napi-get: not supported by this kernel: generic netlink family \"netdev\": no such file or directory",
        "queues": None,
        "queues_error": "netdevnl: queue-get: not supported by this kernel: generic netlink family \"netdev\": no such file or directory",
        "qdiscs": [{"ifindex": 2, "kind": "pfifo_fast", "handle": "0:", "parent": "root", "root": True},
                   {"ifindex": 3, "kind": "pfifo_fast", "handle": "0:", "parent": "root", "root": True}],
        "features": {"eth1": features(FEATURES_USBNET),
                     "eth0": features(dict(FEATURES_USBNET, **{"tx-tcp-segmentation": (False, True),
                                                               "tx-tcp6-segmentation": (False, True)})),
                     "lo": features(dict(FEATURES_USBNET, **{"rx-lro": (False, True)}))},
        "drivers": {},
        "driver_errors": {"lo": "ethtoolnl: ETHTOOL_GDRVINFO lo: not supported by this kernel or device: operation not supported"},
        # All three pass the kernel's user-affinity check; the MSI chip's
        # callback then refuses (EINVAL in the seed), the GIC's does not.
        "affinity_probes": {"38": "accepted", "39": "accepted", "46": "accepted"},
    }
    t.write("rpi4-ax88179.tar.gz", {"created": "2022-01-15T12:00:00Z", "hostname": "lbox",
                                    "kernel": "5.15.4-0-rpi4", "wirespeed": "fixture",
                                    "command": "hand-built from seed 003 (testdata/snapshots/mkfixtures.py)"}, answers)


def wg_gateway():
    """A 32-core WireGuard concentrator with 16 tunnels on 6.16 (seed 002)."""
    t = Tree()
    sysctls = {"netdev_budget": 300, "netdev_budget_usecs": 2000, "netdev_max_backlog": 1000,
               "dev_weight": 64, "busy_poll": 0, "busy_read": 0, "rps_sock_flow_entries": 0,
               "gro_normal_batch": 8, "default_qdisc": "fq_codel"}
    pid = 4000
    host(t, "wg-gw", "6.16.0", "x86_64", 32, pid,
         [softnet_row(c, 1000 + 10 * c) for c in range(32)], sysctls)
    t.file("/proc/interrupts", "           " + "".join("CPU%-8d" % c for c in range(32)).rstrip() + "\n")
    t.dir("/proc/1")
    threads = {}
    for n in range(16):
        name = "wg%d" % n
        netdev(t, "/sys/devices/virtual/net/" + name, name, 10 + n, mtu=1420, txqlen=1000,
               operstate="unknown", threaded="1", uevent="DEVTYPE=wireguard\nINTERFACE=%s\nIFINDEX=%d" % (name, 10 + n))
        # One peer per tunnel: its NAPI has no id (NO_BUSY_POLL), so the
        # thread is napi/wgN-0 and napi-get lists nothing for it.
        kpid = 900 + n
        cpu = (n * 2) % 32
        t.file("/proc/%d/comm" % kpid, "napi/%s-0" % name)
        t.file("/proc/%d/stat" % kpid, "%d (napi/%s-0) S 2 0 0 0 -1 2129984 0 0 0 0 0 5123 0 0 20 0 1 0 100 0 0 "
               "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 %d 0 0 0 0 0 0 0 0 0 0 0 0 0" % (kpid, name, cpu))
        t.file("/proc/%d/status" % kpid, "Name:\tnapi/%s-0\nCpus_allowed_list:\t0-31\n" % name)
        threads[name] = kpid
    t.file("/proc/%d/comm" % pid, "wirespeed")
    netdev(t, "/sys/devices/virtual/net/lo", "lo", 1, mtu=65536, operstate="unknown")
    wgfeat = features(dict(FEATURES_USBNET, **{"tx-tcp-segmentation": (False, True), "tx-tcp6-segmentation": (False, True)}))
    answers = {
        "euid": 0, "napis": [], "queues": [],
        "qdiscs": [{"ifindex": 10 + n, "kind": "fq_codel", "handle": "0:", "parent": "root", "root": True} for n in range(16)],
        "features": dict({"wg%d" % n: wgfeat for n in range(16)}, lo=features(FEATURES_USBNET)),
        "drivers": {"wg%d" % n: {"driver": "wireguard", "version": "1.0.0"} for n in range(16)},
        "driver_errors": {"lo": "ethtoolnl: ETHTOOL_GDRVINFO lo: not supported by this kernel or device: operation not supported"},
        "affinity_probes": {},
    }
    t.write("wg-gateway-16.tar.gz", {"created": "2025-06-01T12:00:00Z", "hostname": "wg-gw",
                                     "kernel": "6.16.0", "wirespeed": "fixture",
                                     "command": "hand-built from seed 002 (testdata/snapshots/mkfixtures.py)"}, answers)


def usbnet_619():
    """A Debian laptop on 6.19 with an ax88179 on USB 3: usbnet has BQL in
    tree ("usbnet: Add support for Byte Queue Limits (BQL)", 6.19). The
    interface was taken down and up again (a dock re-plugged, NetworkManager
    reconnecting): the BQL limit restarts at 0 and reads 0 while idle, while
    tx_packets keeps the count from before."""
    t = Tree()
    sysctls = {"netdev_budget": 300, "netdev_budget_usecs": 2000, "netdev_max_backlog": 1000,
               "dev_weight": 64, "busy_poll": 0, "busy_read": 0, "rps_sock_flow_entries": 0,
               "gro_normal_batch": 8, "default_qdisc": "fq_codel"}
    host(t, "laptop", "6.19.10+deb14-amd64", "x86_64", 8, 3100,
         [softnet_row(0, 4811230, 0, 2211)] + [softnet_row(c, 21000 + c) for c in range(1, 8)], sysctls,
         cpufreq={"scaling_governor": "performance", "scaling_driver": "intel_pstate",
                  "scaling_cur_freq": 2400000, "cpuinfo_max_freq": 4700000, "cpuinfo_min_freq": 400000})
    # The xHCI controller's MSI, counted on CPU0 only; its affinity can move.
    t.file("/proc/interrupts", "           " + "".join("CPU%-8d" % c for c in range(8)).rstrip() + "\n"
           " 128:    " + "".join("%10d " % v for v in [3910442, 0, 0, 0, 0, 0, 0, 0]) + " IR-PCI-MSI-0000:00:14.0    0-edge      xhci_hcd\n")
    hc = "/sys/devices/pci0000:00/0000:00:14.0"
    t.link(hc + "/subsystem", "../../../bus/pci")
    t.link(hc + "/driver", "../../../bus/pci/drivers/xhci_hcd")
    t.dir(hc + "/msi_irqs/128")
    t.file(hc + "/irq", 128)
    t.file(hc + "/usb2/speed", 5000)
    dev = hc + "/usb2/2-1"
    for k, v in {"speed": 5000, "version": " 3.20", "idVendor": "0b95", "idProduct": "1790",
                 "manufacturer": "ASIX Elec. Corp.", "product": "AX88179B", "busnum": 2, "devnum": 3}.items():
        t.file(dev + "/" + k, v)
    iface = dev + "/2-1:1.0"
    t.link(iface + "/subsystem", "../../../../../../bus/usb")
    t.link(iface + "/driver", "../../../../../../bus/usb/drivers/ax88179_178a")
    netdev(t, iface, "eth1", 3, speed=1000, duplex="full",
           bql={"limit": 0, "limit_min": 0, "limit_max": 1879048192, "inflight": 0, "hold_time": 1000,
                "stall_thrs": 0, "stall_cnt": 0, "stall_max": 0},
           stats={"rx_packets": 9120455, "tx_packets": 4410987, "rx_bytes": 13512345678, "tx_bytes": 412345678},
           device_link=True)
    t.dir("/sys/module/usbnet/holders/ax88179_178a")
    irq(t, 128, "IR-PCI-MSI-0000:00:14.0", "xhci_hcd", 0, "edge", "01", "0", "0")
    netdev(t, "/sys/devices/virtual/net/lo", "lo", 1, mtu=65536, operstate="unknown")
    answers = {
        "euid": 0, "napis": [], "queues": [],
        "qdiscs": [{"ifindex": 3, "kind": "fq_codel", "handle": "0:", "parent": "root", "root": True}],
        "features": {"eth1": features(FEATURES_USBNET), "lo": features(FEATURES_USBNET)},
        "drivers": {"eth1": {"driver": "ax88179_178a", "version": "6.19.10+deb14-amd64", "bus_info": "usb-0000:00:14.0-1"}},
        "driver_errors": {"lo": "ethtoolnl: ETHTOOL_GDRVINFO lo: not supported by this kernel or device: operation not supported"},
        "affinity_probes": {"128": "accepted"},
    }
    t.write("usbnet-619.tar.gz", {"created": "2026-11-24T12:00:00Z", "hostname": "laptop",
                                  "kernel": "6.19.10+deb14-amd64", "wirespeed": "fixture",
                                  "command": "hand-built (testdata/snapshots/mkfixtures.py): usbnet with BQL in tree, reopened"}, answers)


def wg_gw(name, release, threaded, pinned=None, ntun=8, cpus=16):
    """A WireGuard gateway: ntun tunnels wg0.. with one peer each, receiving.
    threaded: the devices' threaded knob; with it each peer's NAPI has a
    kthread napi/wgN-0 (no NAPI id: napi-get lists nothing). pinned: the CPU
    list every such thread may run on (a tuning script's doing), else all."""
    t = Tree()
    sysctls = {"netdev_budget": 300, "netdev_budget_usecs": 2000, "netdev_max_backlog": 1000,
               "dev_weight": 64, "busy_poll": 0, "busy_read": 0, "rps_sock_flow_entries": 0,
               "gro_normal_batch": 8, "default_qdisc": "fq_codel"}
    pid = 5000
    host(t, name, release, "x86_64", cpus, pid, [softnet_row(c, 200000 + 1000 * c) for c in range(cpus)], sysctls)
    t.file("/proc/interrupts", "           " + "".join("CPU%-8d" % c for c in range(cpus)).rstrip() + "\n")
    t.dir("/proc/1")
    for n in range(ntun):
        dn = "wg%d" % n
        netdev(t, "/sys/devices/virtual/net/" + dn, dn, 10 + n, mtu=1420, operstate="unknown",
               threaded="1" if threaded else "0", uevent="DEVTYPE=wireguard\nINTERFACE=%s\nIFINDEX=%d" % (dn, 10 + n),
               stats={"rx_packets": 5000000 + n, "tx_packets": 2500000 + n, "rx_bytes": 7000000000, "tx_bytes": 150000000})
        if threaded:
            kpid = 900 + n
            cpu = int(pinned.split("-")[0]) if pinned else (n * 2) % cpus
            t.file("/proc/%d/comm" % kpid, "napi/%s-0" % dn)
            t.file("/proc/%d/stat" % kpid, "%d (napi/%s-0) S 2 0 0 0 -1 2129984 0 0 0 0 0 5123 0 0 20 0 1 0 100 0 0 "
                   "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 %d 0 0 0 0 0 0 0 0 0 0 0 0 0" % (kpid, dn, cpu))
            t.file("/proc/%d/status" % kpid, "Name:\tnapi/%s-0\nCpus_allowed_list:\t%s\n" % (dn, pinned or "0-%d" % (cpus - 1)))
    t.file("/proc/%d/comm" % pid, "wirespeed")
    netdev(t, "/sys/devices/virtual/net/lo", "lo", 1, mtu=65536, operstate="unknown")
    wgfeat = features(dict(FEATURES_USBNET, **{"tx-tcp-segmentation": (False, True), "tx-tcp6-segmentation": (False, True)}))
    answers = {
        "euid": 0, "napis": [], "queues": [],
        "qdiscs": [{"ifindex": 10 + n, "kind": "noqueue", "handle": "0:", "parent": "root", "root": True} for n in range(ntun)],
        "features": dict({"wg%d" % n: wgfeat for n in range(ntun)}, lo=features(FEATURES_USBNET)),
        "drivers": {"wg%d" % n: {"driver": "wireguard", "version": "1.0.0"} for n in range(ntun)},
        "driver_errors": {"lo": "ethtoolnl: ETHTOOL_GDRVINFO lo: not supported by this kernel or device: operation not supported"},
        "affinity_probes": {},
    }
    t.write(name + ".tar.gz", {"created": "2026-11-24T12:00:00Z", "hostname": name, "kernel": release,
                               "wirespeed": "fixture", "command": "hand-built (testdata/snapshots/mkfixtures.py): a WireGuard gateway"}, answers)


def wg_gateways():
    # Threaded off: a stable 6.12 after the revert of WireGuard's threaded default.
    wg_gw("wg-gw-softirq", "6.12.74+deb13-amd64", threaded=False)
    # Threaded on by the backported default: 6.12.48 is in CVE-2026-52945's range.
    wg_gw("wg-gw-threaded", "6.12.48+deb13-amd64", threaded=True)
    # Threaded on (mainline default), every thread pinned to CPU 0.
    wg_gw("wg-gw-pinned", "6.18.5", threaded=True, pinned="0")


if __name__ == "__main__":
    rpi4()
    wg_gateway()
    usbnet_619()
    wg_gateways()
    build()
